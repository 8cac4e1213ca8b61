"""Agent-X: the verbatim prompt texts of the authors' per-model inference scripts that differ from the GPT script's.

Data, quoted exactly from `mbzuai-oryx/Agent-X` (commit c62b043, `evaluation/scripts/open_source_models/...`; the
repository states no licence): the open-source instruction (Qwen-VL, Gemma and Pixtral scripts: "assistant" where the
GPT script says "agent"), the open-source format block ("- " before the section keys, "The output must be a single
dictionary containing query, reasoning steps and final answer ..."), Pixtral's copy of it (one line fewer: its
`final_output` key and the next line are merged into `- "final_answer": ...`), Gemini's copy of the GPT block (four
trailing spaces) and the Kimi-VL script's rewritten markdown instruction (its `{{`/`}}` already unescaped, its
`{meta_data}` written `{TOOLMETA_JSON}`).  tests/agentx/test_script_protocols.py pins each against a SHA-256 digest.
The texts contain braces: substitute with str.replace, never str.format.
"""

from __future__ import annotations

from functools import cache

from lmms_agentic.tasks.agentx.core.release_data import FORMAT_BLOCK_GPT, INSTRUCTION_TEMPLATE, toolmeta_json

# The open-source scripts' instruction: the closed-source template with "assistant" for "agent".
OPEN_INSTRUCTION_TEMPLATE = INSTRUCTION_TEMPLATE.replace(
    "You are an intelligent multi-modal agent.", "You are an intelligent multi-modal assistant.", 1)

# The open-source format block (Qwen-VL and Gemma scripts; 1,976 characters).
FORMAT_BLOCK_OPEN = "\n".join((
    '',
    '    - "reasoning_step_format": [',
    '        {"task": "Describe the sub-task being performed."},',
    '        {"tool_used": "Specify the tool selected and justify its choice."},',
    '        {"tool_output": "Provide the tool\'s output."},',
    '        {"thought": "Explain the significance of the output and how it contributes to answering the '
    'query."}',
    '    ]',
    '',
    '    - "constraints": [',
    '        "Use tools only when necessary and justify their usage.",',
    '        "Ensure each step is self-contained and clearly explained.",',
    '        "Maintain transparency in decision-making and reasoning."',
    '    ]',
    '',
    '    - "final_output": {',
    '        "final_answer": "Provide a clear and concise answer based on all previous steps", '
    '"justification": "Provide a justification for the final answer."    ',
    '    }',
    '',
    '    "The output must be a single dictionary containing query, reasoning steps and final answer as '
    'shown in the following example":',
    '',
    '',
    '        { "query": "What is the man doing in the video?",',
    '        "reasoning_steps": [',
    '            {',
    '                "step": 1,',
    '                "task": "Identify key frames containing activity.",',
    '                "tool": "Scene Segmentation Tool",',
    '                "tool_output": "Frames 40-80 show continuous motion.",',
    '                "thought": "These frames likely contain the main action."',
    '            },',
    '            {',
    '                "step": 2,',
    '                "task": "Recognize the action happening in the selected frames.",',
    '                "tool_used": "Action Recognition Model",',
    '                "tool_output": "Man is playing guitar",',
    '                "thought": "The model confirms that the man is engaged in a musical activity."',
    '            }',
    '        ],',
    '        "final_answer": {"value": "The man is playing a guitar in the video.", "justification":  '
    '"Through scene segmentation and targeted action recognition, we isolated the most relevant frames '
    'and identified the man\'s activity with high confidence, leading to a precise and grounded answer."',
    '            }',
    '        }',
    '',
))


# The Kimi-VL script's instruction (markdown sections, a fenced json example).
KIMI_INSTRUCTION_TEMPLATE = "\n".join((
    '',
    'You are an intelligent multi-modal assistant. You are provided with:',
    '- A text query',
    '- An image or video',
    '- A set of tools to assist with your reasoning (see tool metadata below)',
    '',
    '{TOOLMETA_JSON}',
    '',
    'Your objective is to answer the query by analyzing the visual content using appropriate tools.',
    'You must reason step-by-step, using tools only when necessary and justifying their use.',
    '',
    '### Reasoning Instructions:',
    'Each reasoning step must include the following fields:',
    '- "step": Integer step number (starting from 1)',
    '- "task": Describe the sub-task being performed.',
    '- "tool" or "tool_used": Specify the tool selected and justify its choice.',
    '- "tool_output": Provide the tool\'s output.',
    '- "thought": Explain the significance of the output and how it contributes to answering the query.',
    '',
    '### Constraints:',
    '- Only use tools when necessary and always justify their use.',
    '- Ensure each reasoning step is self-contained and clearly explained.',
    '- Maintain transparency in your decision-making and reasoning.',
    '',
    '### Final Output Format:',
    'Your entire response must be a **single JSON dictionary** containing only the following three keys:',
    '- "query": A string representing the original input query.',
    '- "reasoning_steps": A list of dictionaries, one for each step of your reasoning, as described above.',
    '- "final_answer": A dictionary containing:',
    '    - "value": The final answer to the query.',
    '    - "justification": A brief explanation of how the reasoning steps support this answer.',
    '',
    '### Example Output:',
    '```json',
    '{',
    '  "query": "What is the man doing in the video?",',
    '  "reasoning_steps": [',
    '    {',
    '      "step": 1,',
    '      "task": "Identify key frames containing activity.",',
    '      "tool": "Scene Segmentation Tool",',
    '      "tool_output": "Frames 40-80 show continuous motion.",',
    '      "thought": "These frames likely contain the main action."',
    '    },',
    '    {',
    '      "step": 2,',
    '      "task": "Recognize the action happening in the selected frames.",',
    '      "tool_used": "Action Recognition Model",',
    '      "tool_output": "Man is playing guitar",',
    '      "thought": "The model confirms that the man is engaged in a musical activity."',
    '    }',
    '  ],',
    '  "final_answer": {',
    '    "value": "The man is playing a guitar in the video.",',
    '    "justification": "Through scene segmentation and targeted action recognition, we isolated the '
    'most relevant frames and identified the man\'s activity with high confidence."',
    '  }',
    '}',
    '',
))

# Pixtral's block: the open-source block with `- "final_output": {` and the `"final_answer"` line below it merged.
FORMAT_BLOCK_PIXTRAL = FORMAT_BLOCK_OPEN.replace('    - "final_output": {\n        "final_answer"',
                                                 '    - "final_answer"', 1)
# Gemini's block: the GPT block plus four trailing spaces.
FORMAT_BLOCK_GEMINI = FORMAT_BLOCK_GPT + "    "


@cache
def closed_instruction(format_block: str) -> str:
    """The closed-source instruction (GPT, Gemini scripts) with the catalogue and ``format_block``."""
    return INSTRUCTION_TEMPLATE.replace("{TOOLMETA_JSON}", toolmeta_json()).replace("{FORMAT_BLOCK}", format_block)


@cache
def open_instruction(format_block: str) -> str:
    """The open-source instruction (Qwen-VL, Gemma, Pixtral scripts) with the catalogue and ``format_block``."""
    return OPEN_INSTRUCTION_TEMPLATE.replace("{TOOLMETA_JSON}", toolmeta_json()).replace("{FORMAT_BLOCK}",
                                                                                         format_block)


@cache
def kimi_instruction() -> str:
    """The Kimi-VL script's instruction with the catalogue (it starts and ends with a newline)."""
    return KIMI_INSTRUCTION_TEMPLATE.replace("{TOOLMETA_JSON}", toolmeta_json())
