"""The names RoboVista's task YAMLs reference: its core (`core/task.py`) in the plugin's generic lmms-eval hooks.

Nothing is decided here. The core decides the documents of each variant (domains, in-context seeds), the prompt
and its image policy, the record and every metric; `adapters.plugin_task` wraps it in the plugin's extras, once for
every benchmark. This module declares what the plugin needs beyond the core (`PLUGIN`: the release loader
`release.load_documents`, the image columns — a row's own images, and its in-context example's —, the MCQ judge
fallback) and binds one `process_docs` per
variant (`load_docs` is `all`) and one `process_results` per task kind.
Prompt texts are configuration in the task YAMLs' `lmms_eval_specific_kwargs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.plugin_task import PluginBenchmark, PluginTask
from lmms_agentic.judges.mcq_fallback import choice_judge
from lmms_agentic.tasks.robovista import release
from lmms_agentic.tasks.robovista.core import documents, task

PLUGIN = PluginBenchmark(core=task, load=release.load_documents,
                         media_columns={documents.IMAGES: documents.IMAGES, documents.ICL_IMAGES: documents.IMAGES},
                         judge=choice_judge)
HOOKS = PluginTask(PLUGIN, __name__)

all_docs = HOOKS.all_docs
select_variant = HOOKS.select_variant
doc_to_visual = HOOKS.doc_to_visual
doc_to_text = HOOKS.doc_to_text
doc_to_messages = HOOKS.doc_to_messages
doc_to_target = HOOKS.doc_to_target
process_results = HOOKS.process_results("domain")
process_results_full = HOOKS.process_results("full")
process_results_confidence = HOOKS.process_results("confidence")
process_results_icl = HOOKS.process_results("icl")

load_docs = HOOKS.process_docs("all")
docs_agriculture = HOOKS.process_docs("agriculture")
docs_autonomous_driving = HOOKS.process_docs("autonomous_driving")
docs_domestic = HOOKS.process_docs("domestic")
docs_industrial_manufacturing = HOOKS.process_docs("industrial_manufacturing")
docs_surgical_robotics = HOOKS.process_docs("surgical_robotics")
docs_open_datasets = HOOKS.process_docs("open_datasets")
docs_unlabeled = HOOKS.process_docs("unlabeled")
docs_icl_seed0 = HOOKS.process_docs("icl_seed0")
docs_icl_seed1 = HOOKS.process_docs("icl_seed1")
docs_icl_seed2 = HOOKS.process_docs("icl_seed2")
docs_icl_seed3 = HOOKS.process_docs("icl_seed3")
docs_icl_seed4 = HOOKS.process_docs("icl_seed4")


def record(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The sample record `process_results` logs for `doc` (a domain task's)."""
    return HOOKS.record(doc, results, "domain")
