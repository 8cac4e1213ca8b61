"""Agent-X's one-shot protocol as an `adapters.core.task.CoreTask`: the names harness glue reads, the prompt it shows
and the record that decides every score.

Documents are `records.normalise`d `data.json` entries; the variants select the text-answer or the generative tasks
(by key). `prompt` lays the paper's prompt (`prompt.build_prompt`) out on the media the caller's reader returns (the
prompts of the authors' per-model inference scripts are an extension, not part of this core); `score` parses the
reply (`trace.parse_trace`), scores it (`scoring.score_trace`) and, with a judge passed in, asks the judged metrics
(`judging.judge_item`; the judge's `style` picks the GPT or Qwen script's serialisation, `judging.StyledJudge`).
`METRICS` is the table of `metrics.py` (views and the plain `scored_mean` aggregation); the thinking-loop metrics
(`metrics.LOOP_METRICS`) read a verdict the core does not make, so they are left to the harness that makes it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core.task import (
    Aggregation,
    Judge,
    MediaReader,
    Metric,
    Prompt,
    Record,
    Variant,
    metric_table,
    whole_record,
)
from lmms_agentic.tasks.agentx.core import judging, metrics
from lmms_agentic.tasks.agentx.core.prompt import VideoFile, build_prompt, simple_text
from lmms_agentic.tasks.agentx.core.records import BENCHMARK, MEDIA_FOLDER, normalise, row_order
from lmms_agentic.tasks.agentx.core.release_data import GENERATIVE_IDS, LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.scoring import judge_gt, score_trace
from lmms_agentic.tasks.agentx.core.trace import parse_trace

__all__ = ["BENCHMARK", "METRICS", "PAPER_PROTOCOL", "RECORD_METRIC", "TASK_METRICS", "VARIANTS", "documents", "judged",
           "media_cell", "prompt", "score", "text_prompt", "video_settings"]

RECORD_METRIC = metrics.DIRECT[0]
"""`ground_s`: the first metric of every kind, which carries the record."""
LOWER_IS_BETTER: frozenset[str] = frozenset(
    ("format_error_rate", "parse_failure_rate", *(f"err_{key}" for key in metrics.ERROR_KEYS)))
_DESCRIPTIONS: Mapping[str, str] = {
    **{metric: f"README {column} (judged; 0-1)" for column, metric in metrics.REPORTED_COLUMNS},
    **{coverage: f"share of the eligible items the judge scored for {metric}"
       for metric, coverage in metrics.COVERAGE.items()},
    "toolset_f1_prog": "programmatic F1 of the reply's tool set against the ground truth's",
    "format_error_rate": "share of replies failing the format checks",
    "exact_match_acc": "exact match of objective answers (over the items where it is defined)",
    "parse_failure_rate": "share of replies from which nothing could be read",
    **{f"err_{key}": f"share of replies the failure rules flag {key}" for key in metrics.ERROR_KEYS},
}


def _aggregation(name: str) -> Aggregation:
    def aggregation(values: Sequence[Any]) -> float:
        return metrics.aggregate(name, values)

    aggregation.__name__ = f"{name}_aggregation"
    return aggregation


METRICS: Mapping[str, Metric] = metric_table(*(
    Metric(name, whole_record if name == RECORD_METRIC else metrics.VIEWS[name], _aggregation(name),
           name not in LOWER_IS_BETTER, _DESCRIPTIONS[name])
    for name in metrics.METRICS if name not in metrics.LOOP_METRICS))
"""Every metric the core scores, in report order: views from `metrics.VIEWS`, `metrics.aggregate` with the plain
`scored_mean` (NaN when nothing counts)."""
TASK_METRICS: Mapping[str, tuple[str, ...]] = {
    kind: tuple(name for name in metrics.metric_names(generative) if name in METRICS)
    for kind, generative in (("text_answer", False), ("generative", True))
}
"""The two kinds: the text-answer tasks (Goal_acc) and the generative ones (Goal_acc*)."""


# --------------------------------------------------------------------------- documents and variants

def documents(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Release rows -> canonical documents in key order. A row is one `data.json` entry as a table holds it: its key
    under `id`, the published record fields (`query`, `file_path`, ...) beside it; a record that cannot be used at
    all raises `RecordError` (screening bad records is the harness's)."""
    docs = [normalise(str(row["id"]), [{key: value for key, value in row.items() if key != "id"}], GENERATIVE_IDS)
            for row in rows]
    return sorted(docs, key=row_order)


def selection(generative: bool | None, protocol: str | None = None) -> Variant:
    """The documents of one kind (None: all), each naming `protocol` as its `prompt_protocol` when given."""

    def select(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        extra = {"prompt_protocol": protocol} if protocol is not None else {}
        return [{**doc, **extra} for doc in docs if generative is None or bool(doc["is_generative"]) == generative]

    return select


VARIANTS: Mapping[str, Variant] = {"all": selection(None), "text_answer": selection(False),
                                   "generative": selection(True)}
"""Every task, the text-answer tasks, the generative ones (by key)."""


# --------------------------------------------------------------------------- prompt

PAPER_PROTOCOL: Mapping[str, Any] = {
    "protocol": "paper", "script": "", "instruction_in": "system", "max_images": None,
    "video": {"mode": "frames", "frames": 8, "rule": "uniform", "shown": None, "fps": None, "seeded": False}}
"""The record's `prompt_protocol`: the paper's prompt (the instruction as the system message; a video as 8 evenly
spaced frames, each labelled `Frame{i}:`, unless the task's settings say otherwise)."""


def media_cell(name: str) -> str:
    """The media cell of a `file_path` entry: its path in the release (`files/<name>`)."""
    return f"{MEDIA_FOLDER}/{name}"


def video_settings(settings: Mapping[str, Any]) -> tuple[str, int]:
    """(`video_mode`, `n_frames`) of the task's settings (`frames`, 8 when absent)."""
    video = PAPER_PROTOCOL["video"]
    mode, count = str(settings.get("video_mode", video["mode"])), int(settings.get("n_frames", video["frames"]))
    if mode not in ("frames", "native"):
        raise ValueError(f"video_mode must be 'frames' or 'native', got {mode!r}")
    return mode, count


def prompt(doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> Prompt:
    """The paper's prompt (`prompt.build_prompt`): the system text and the user turn on the images (`media.image` of
    each `files/<name>` cell), the video's evenly spaced frames (`media.video`) or the video itself (`video_mode:
    native`: what `media.video` hands over, a path as a `prompt.VideoFile`)."""
    cells = [media_cell(str(name)) for name in doc["media"]]
    if doc["media_type"] != "video":
        built = build_prompt(doc["query"], [media.image(c) for c in cells])
        return Prompt(built.system or None, built.segments)
    mode, count = video_settings(settings)
    if mode == "native":
        handed = media.video(cells[0], count)
        video = VideoFile(handed) if isinstance(handed, str) else handed
        built = build_prompt(doc["query"], VideoFile(cells[0]))
        return Prompt(built.system or None, tuple(video if isinstance(p, VideoFile) else p for p in built.segments))
    built = build_prompt(doc["query"], list(media.video(cells[0], count)), frames=True)
    return Prompt(built.system or None, built.segments)


# --------------------------------------------------------------------------- score

def judged(doc: Mapping[str, Any], prediction: Mapping[str, Any], judge: Judge | None) -> dict[str, dict[str, Any]]:
    """The judged metrics of `doc` for the parsed `prediction`: unscored as not judgeable when the released judge
    scripts cannot judge its GT (`judge_blocker`), unscored for want of a judge when `judge` is None, else the
    judge's answers (`judging.judge_item`, in the judge's style)."""
    generative = bool(doc["is_generative"])
    blocker = doc.get("judge_blocker") or ""
    if blocker:
        return judging.unscored_results(doc["id"], judging.NOT_JUDGEABLE,
                                        f"not judged, as in the released judge scripts: {blocker}",
                                        is_generative=generative)
    if judge is None:
        return judging.unscored_results(doc["id"], judging.NO_JUDGE, "no judge configured", is_generative=generative)
    return judging.judge_item(str(doc["id"]), judge_gt(doc), prediction, judge, query_type=doc["query_type"],
                              is_generative=generative, style=judging.style_of(judge),
                              tool_metadata=json.loads(doc["tool_metadata_json"]))


def score(doc: Mapping[str, Any], reply: object, judge: Judge | None = None) -> Record:
    """The item's record: its labels, the judged metrics (`judged`), the deterministic fields of the parsed reply
    (`scoring.score_trace`: `parse_failure` None means the reply was read), the GT steps the checks skipped, why it
    is not judged, its prompt protocol and the judge's serialisation style (None when no judge was asked)."""
    trace = parse_trace(reply, TOOL_NAMES, LEGACY_ALIASES)
    scored = score_trace(doc, trace)
    blocker = doc.get("judge_blocker") or ""
    return {
        "benchmark": BENCHMARK, "id": doc["id"], "is_generative": bool(doc["is_generative"]),
        "query_type": doc["query_type"], "media_type": doc["media_type"],
        "judge": judged(doc, scored["prediction"], judge),
        **scored,
        "gt_skipped_steps": list(doc.get("skipped_steps") or []),
        "not_judged": blocker or None,
        "prompt_protocol": copy.deepcopy(dict(PAPER_PROTOCOL)),
        "judge_style": judging.style_of(judge) if judge is not None and not blocker else None,
    }


def text_prompt(doc: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """The prompt for text-only backends: the system message (the instruction and a blank line) then the query line
    (`prompt.simple_text`)."""
    return simple_text(str(doc["query"]))
