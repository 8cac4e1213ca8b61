"""The names AgentVQA's task YAMLs reference: its core (`core/task.py`) in the plugin's generic lmms-eval hooks.

Nothing is decided here. The core decides the documents of each variant, the prompt, the record and every metric;
`adapters.plugin_task` wraps it in the plugin's extras, once for every benchmark. This module declares what the
plugin needs beyond the core (`PLUGIN`: the release loader `release.load_documents`, the image column, the MCQ
judge fallback, where a document's video lives) and binds one `process_docs` per variant — domain, coordinate
convention, the history ablation — and the prompt and scoring hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.plugin_task import PluginBenchmark, PluginTask
from lmms_agentic.judges.mcq_fallback import choice_judge
from lmms_agentic.tasks.agentvqa import release
from lmms_agentic.tasks.agentvqa.core import documents, task


def _video(doc: Mapping[str, Any]) -> str | None:
    return str(doc["video"]) if doc.get("video") else None


def _domain(doc: Mapping[str, Any]) -> str:
    return str(doc["domain"])


PLUGIN = PluginBenchmark(core=task, load=release.load_documents, media_columns={documents.IMAGES: documents.IMAGES},
                         judge=choice_judge, video=_video)
HOOKS = PluginTask(PLUGIN, __name__)

all_docs = HOOKS.all_docs
select_variant = HOOKS.select_variant
doc_to_visual = HOOKS.doc_to_visual
doc_to_text = HOOKS.doc_to_text
doc_to_messages = HOOKS.doc_to_messages
doc_to_target = HOOKS.doc_to_target
process_results = HOOKS.process_results(_domain)

docs_web_agents = HOOKS.process_docs("web_agents")
docs_web_agents_norm1000_yx = HOOKS.process_docs("web_agents_norm1000_yx")
docs_web_agents_norm1000_xy = HOOKS.process_docs("web_agents_norm1000_xy")
docs_web_agents_nohistory = HOOKS.process_docs("web_agents_nohistory")
docs_egocentric_videos = HOOKS.process_docs("egocentric_videos")
docs_egocentric_videos_norm1000_yx = HOOKS.process_docs("egocentric_videos_norm1000_yx")
docs_egocentric_videos_norm1000_xy = HOOKS.process_docs("egocentric_videos_norm1000_xy")
docs_games = HOOKS.process_docs("games")
docs_games_norm1000_yx = HOOKS.process_docs("games_norm1000_yx")
docs_games_norm1000_xy = HOOKS.process_docs("games_norm1000_xy")
docs_spatial_planning = HOOKS.process_docs("spatial_planning")
docs_spatial_planning_norm1000_yx = HOOKS.process_docs("spatial_planning_norm1000_yx")
docs_spatial_planning_norm1000_xy = HOOKS.process_docs("spatial_planning_norm1000_xy")
docs_robotics = HOOKS.process_docs("robotics")
docs_robotics_norm1000_yx = HOOKS.process_docs("robotics_norm1000_yx")
docs_robotics_norm1000_xy = HOOKS.process_docs("robotics_norm1000_xy")


def record(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The sample record `process_results` logs for `doc`."""
    return HOOKS.record(doc, results, _domain)
