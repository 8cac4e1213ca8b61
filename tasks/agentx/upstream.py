"""Agent-X's upstream export (`adapters.upstream.UpstreamHooks`): its citation and the licences of its verbatim
material, the notes of its README and pull request, the tasks left out and the data file its core reads.

Everything else of the exported folder is generated from the core (`tasks/agentx/core/task.py`) by the exporter:
the copied core, a `utils.py` of assignments from the shared glue (which reads the release's keyed `data.json` and
its `files/` from the dataset repository), the YAMLs' metric blocks. No judge is built into the exported tasks:
they declare only the metrics they score (`REPORTED_METRICS`; the record, judge inputs included, rides on the first),
and the judged ones come from `judge_samples.py`, shipped with its checks (`SCRIPTS`), which judges the logged
samples with the released prompts. The export's own test also scores the parser's hard cases (`hard_replies`).
Not carried (they stay around the core in this project): release-schema overrides, bad-record screening,
provenance, media integrity checks, the judge cache, breaker and prompt fencing, the judge-coverage warnings, the
thinking-loop metrics, the per-model script tasks and the multi-turn tool tasks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.upstream import Origin
from lmms_agentic.tasks.agentx.core import metrics

ORIGIN = Origin(
    bibtex="""@inproceedings{ashraf2026agentx,
  title     = {Agent-X: Evaluating Deep Multimodal Reasoning in Vision-Centric Agentic Tasks},
  author    = {Ashraf, Tajamul and others},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2026},
  note      = {arXiv:2505.24876},
}""",
    bibtex_source=("the arXiv listing 2505.24876 (the full author list is to be copied from the authors' README, "
                   'github.com/mbzuai-oryx/Agent-X, in the pull request)'),
    verbatim=(
        (('the model instruction, the tool catalogue and the output format block (`release_data.py`, '
          '`toolmeta.json`)'),
         'github.com/mbzuai-oryx/Agent-X `evaluation/scripts` (the GPT inference script)',
         ('no licence file in that repository (all rights reserved by default): permission is requested in the '
          'pull request')),
        ('the nine judge prompts (`judge_prompts.py`) and their user templates (`judging.py`)',
         ('github.com/mbzuai-oryx/Agent-X `evaluation/run_eval_gpt_as_judge.py`, '
          '`evaluation/run_eval_qwen_as_judge.py`'),
         'as above'),
        ('the error-analysis rules (`failure_rules.py`) and the generative task list (`release_data.py`)',
         'github.com/mbzuai-oryx/Agent-X `analysis/error_analysis.ipynb`, `analysis/metrics.ipynb`',
         'as above'),
        ('the dataset (`Tajamul21/Agent-X`)',
         'the Hugging Face dataset card',
         'to be confirmed with the authors in the pull request'),
    ),
    reference_check=("The prompt, the judge prompts and the metric rules are the authors' released scripts; a "
                     "full run with the paper's judge reproducing the table above is still to be done."),
)
JUDGE_COMMAND = ('\n```bash\nAGENTX_JUDGE_BASE_URL=https://api.openai.com/v1 AGENTX_JUDGE_MODEL=gpt-4o-2024-08-06 '
                 'AGENTX_JUDGE_API_KEY=... \\\n  python -m {package}.tasks.agentx.judge_samples {data}'
                 '--output judged.json runs/*/*samples*agentx*.jsonl\n```')
NOT_EXPORTED: tuple[str, ...] = ('agentx_script_', 'agentx_tools')
RUNNING_NOTES: dict[str, str] = {
    'both': ('Data: the hooks read `data.json` and `files/` from the dataset repository '
             "(`huggingface_hub.hf_hub_download`, the YAML's revision); videos give 8 uniformly spaced frames "
             '(PyAV), each after a `Frame{i}:` label. Each reply is parsed as a JSON trace, never executed. '
             'No judge runs in these tasks: they report the metrics they compute (`toolset_f1_prog`, '
             '`format_error_rate`, `exact_match_acc`, `parse_failure_rate`, `err_*`). The judged metrics of the '
             'paper table (`ground_s` ... `goal_acc`, `goal_imggen`) are a separate step, run only when chosen, '
             "on the logged samples (`--log_samples`: each sample's `toolset_f1_prog` entry is the item's record, "
             'its parsed trace included) with the ground truth of `data.json` (`huggingface-cli download '
             'Tajamul21/Agent-X data.json --repo-type dataset --local-dir .`; see the command below). '
             '`judge_samples.py` asks the released prompts (`judge_prompts.py`, `judging.judge_item`) of any '
             'OpenAI-compatible endpoint, reads only its own `AGENTX_JUDGE_*` variables (never another API key), '
             'aggregates with `metrics.aggregate` and prints the ten metrics with their judge coverage (also '
             'written as JSON); a failed or unreadable judge answer leaves that metric unscored, never 0, and '
             'one warning line says how many and why.'),
    'lmms-eval': JUDGE_COMMAND.format(package="lmms_eval", data="--data data.json "),
    'lm-eval': ('`av` must be installed for video tasks. lm-eval logs each document, so `--data` may be left out.\n'
                + JUDGE_COMMAND.format(package="lm_eval", data="")),
}
DEPENDENCY_NOTES: dict[str, str] = {
    'lmms-eval': 'Video frames are decoded with PyAV (`av`, which lmms-eval installs).',
    'lm-eval': ('Video frames are decoded with PyAV (`av`), which no lm-eval extra installs: the pull request '
                'adds\nan extra (`agentx = ["av", "pillow"]`).'),
}
MEDIA_AT_REVISION = 'data.json and the media files'
PR_STEPS = ("- the BibTeX entry: copy the full author list from the authors' README;\n- a full run, then "
            "`judge_samples.py` with the paper's judge (GPT-4o), whose `goal_acc` is within the published margin;\n")
LEFT_OUT_CORE: tuple[str, ...] = ("script_task", "script_protocols", "script_texts")
"""The per-model script protocols (`core/script_task.py` and the tables it reads): no exported task uses them."""
DATA_FILES = ("toolmeta.json",)
"""Data files of the core the copied modules read (next to them)."""
REPORTED_METRICS: tuple[str, ...] = (*metrics.DETERMINISTIC, *(f"err_{key}" for key in metrics.ERROR_KEYS))
"""What the exported tasks declare: the metrics they compute (the judged ones are `judge_samples.py`'s)."""
NOT_GROUPED_UNDER_LM_EVAL: tuple[str, ...] = ("exact_match_acc",)
"""Reported by each subtask but not averaged by lm-eval's `agentx` group: exact match is defined only for objective
questions with a text answer, so a subtask may have no item for it (NaN), and lm-eval's group mean cannot skip a NaN
subtask (under lmms-eval the group's own aggregation does)."""
SCRIPTS = ("judge_samples.py",)
"""Shipped in the task folder, with the checks of `judge_samples_checks.py` in the export's own test."""


def hard_replies(doc: Mapping[str, Any]) -> list[str]:
    """The trace parser's hard cases for `doc`: the ground-truth trace after a think block, inside prose (found by
    its balanced braces), as a Python literal, cut off, with an unknown tool and two tools in a step, without a final
    answer, and prose holding only a final answer."""
    steps = json.loads(doc.get("gt_steps_json") or "[]")
    steps = [step for step in (steps[0] if len(steps) == 1 and isinstance(steps[0], list) else steps)
             if isinstance(step, dict)]
    answer = json.loads(doc.get("gt_final_answer_json") or "{}")
    trace = {"reasoning_steps": [{**{k: step.get(k) for k in ("step", "task", "thought")},
                                  "tool_used": step.get("tool"), "tool_output": step.get("output")}
                                 for step in steps], "final_answer": answer}
    text = json.dumps(trace)
    odd = {"reasoning_steps": [{"step": 1, "task": "look", "tool_used": "MagicLens", "tool_output": "x"},
                               {"step": 2, "task": "read", "tool_used": ["OCR", "Calculator"], "tool_output": "y"}]}
    return [f"<think>Which tool first? {{maybe}}</think>\n{text}", f"Here is my trace: {text} Hope it helps.",
            repr(trace), text[: len(text) // 2], json.dumps(odd),
            json.dumps({"reasoning_steps": trace["reasoning_steps"]}),
            'I looked closely. {"final_answer": {"value": "blue", "justification": "seen"}} That is all.']
