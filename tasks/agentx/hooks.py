"""The names the one-shot Agent-X task YAMLs reference: its core (`core/script_task.py`: the paper core
`core/task.py` with the authors' per-model script protocols) in the plugin's generic hooks.

Nothing is decided here. The core normalises the records, selects each task's documents (`VARIANTS`: the answer
kind, and the authors' per-model script protocols), builds the prompt, parses the reply without executing anything
and decides every score, judged metrics included when a judge is passed in; `adapters.plugin_task` wraps it in the
plugin's extras, once for every benchmark. This module declares what the plugin needs beyond the core (`PLUGIN`:
the release loader `release.load_documents` — data.json, schema override, bad-record screening, media checks,
provenance —, the judge when the plugin's own variables configure one (`judge.plugin_judge`), media named as files
of the release, the video a document shows, the loop metrics on the core's 0-1 scale) and binds the names.

Protocol (tasks/agentx/README.md): the system message is byte for byte the released GPT script's
(`instruction_prompt + '\n\n'`); backends without a system role get that text as the first part of the user turn,
simple backends get it followed by the query; the user turn = all images in `file_path` order (or the video's
frames, each preceded by `Frame{i}:`), then `"Query: " + query`. One generation per task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.plugin_task import PluginBenchmark, PluginTask
from lmms_agentic.tasks.agentx import release
from lmms_agentic.tasks.agentx.core import metrics, script_task
from lmms_agentic.tasks.agentx.core.records import MEDIA_FOLDER
from lmms_agentic.tasks.agentx.core.scoring import gt_answer
from lmms_agentic.tasks.agentx.judge import plugin_judge


def _kind(doc: Mapping[str, Any]) -> str:
    return "generative" if doc["is_generative"] else "text_answer"


def _answered(record: Mapping[str, Any]) -> bool:
    return record["parse_failure"] is None


def _video(doc: Mapping[str, Any]) -> str | None:
    return str(doc["media"][0]) if doc["media_type"] == "video" else None


def _target(doc: Mapping[str, Any]) -> str:
    return str(gt_answer(doc).get("value", ""))


def _release_file(cell: str) -> str:
    """A core media cell (`files/<name>`) as the file's path under the row's `media_root` (the `files` folder)."""
    return cell.removeprefix(f"{MEDIA_FOLDER}/")


PLUGIN = PluginBenchmark(core=script_task, load=release.load_documents, judge=plugin_judge, answered=_answered,
                         video=_video, target=_target,
                         loop_views={name: metrics.VIEWS[name] for name in metrics.LOOP_METRICS},
                         file_of=_release_file, file_field="file_path",
                         aggregations="lmms_agentic.tasks.agentx.aggregations")
HOOKS = PluginTask(PLUGIN, __name__)

all_docs = HOOKS.all_docs
select_variant = HOOKS.select_variant
doc_to_visual = HOOKS.doc_to_visual
doc_to_text = HOOKS.doc_to_text
doc_to_messages = HOOKS.doc_to_messages
doc_to_target = HOOKS.doc_to_target
process_results = HOOKS.process_results(_kind)

# process_docs of the one-shot tasks: agentx_text_answer, agentx_generative and the authors' per-model script
# protocols (tasks agentx_script_<protocol>_*; core/script_protocols.py)
docs_text_answer = HOOKS.process_docs("text_answer")
docs_generative = HOOKS.process_docs("generative")
docs_text_answer_gpt = HOOKS.process_docs("text_answer_gpt")
docs_generative_gpt = HOOKS.process_docs("generative_gpt")
docs_text_answer_gemini = HOOKS.process_docs("text_answer_gemini")
docs_generative_gemini = HOOKS.process_docs("generative_gemini")
docs_text_answer_qwen = HOOKS.process_docs("text_answer_qwen")
docs_generative_qwen = HOOKS.process_docs("generative_qwen")
docs_text_answer_gemma = HOOKS.process_docs("text_answer_gemma")
docs_generative_gemma = HOOKS.process_docs("generative_gemma")
docs_text_answer_pixtral = HOOKS.process_docs("text_answer_pixtral")
docs_generative_pixtral = HOOKS.process_docs("generative_pixtral")
docs_text_answer_kimi = HOOKS.process_docs("text_answer_kimi")
docs_generative_kimi = HOOKS.process_docs("generative_kimi")


def record(doc: Mapping[str, Any], results: list[Any], judge: bool = True) -> dict[str, Any]:
    """The per-task sample record: the core's (with the plugin's judge when one is configured and `judge` is true;
    else the judged metrics are unscored and nothing is asked), the video frames used and the loop check."""
    return HOOKS.record(doc, results, _kind, judged=judge)
