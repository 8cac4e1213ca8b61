"""Agent-X's one-shot protocol as an `adapters.core.task.CoreTask`: the names harness glue reads, the prompt it shows
and the record that decides every score.

Documents are `records.normalise`d `data.json` entries; the variants select the text-answer or the generative tasks
(by key) and, for the authors' per-model scripts, name the prompt protocol (`script_protocols`). `prompt` lays the
protocol's prompt out on the media the caller's reader returns; `score` parses the reply (`trace.parse_trace`),
scores it (`scoring.score_trace`) and, with a judge passed in, asks the judged metrics (`judging.judge_item`; the
judge's `style` picks the GPT or Qwen script's serialisation, `judging.StyledJudge`). `METRICS` is the table of
`metrics.py` (views and the plain `scored_mean` aggregation); the thinking-loop metrics (`metrics.LOOP_METRICS`) read
a verdict the core does not make, so they are left to the harness that makes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

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
from lmms_agentic.tasks.agentx.core import judging, metrics, script_protocols
from lmms_agentic.tasks.agentx.core.prompt import VideoFile, simple_text
from lmms_agentic.tasks.agentx.core.records import BENCHMARK, MEDIA_FOLDER, normalise, row_order
from lmms_agentic.tasks.agentx.core.release_data import GENERATIVE_IDS, LEGACY_ALIASES, TOOL_NAMES
from lmms_agentic.tasks.agentx.core.scoring import judge_gt, score_trace
from lmms_agentic.tasks.agentx.core.script_protocols import FrameRule, ScriptProtocol
from lmms_agentic.tasks.agentx.core.trace import parse_trace

__all__ = ["BENCHMARK", "METRICS", "RECORD_METRIC", "TASK_METRICS", "VARIANTS", "FrameRuleReader", "documents",
           "judged", "media_cell", "prompt", "protocol_of", "score", "text_prompt", "video_settings"]

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


def _selection(generative: bool | None, protocol: str | None = None) -> Variant:
    def select(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        extra = {"prompt_protocol": protocol} if protocol is not None else {}
        return [{**doc, **extra} for doc in docs if generative is None or bool(doc["is_generative"]) == generative]

    return select


VARIANTS: Mapping[str, Variant] = {
    "all": _selection(None),
    "text_answer": _selection(False),
    "generative": _selection(True),
    **{f"{kind}_{name}": _selection(kind == "generative", name)
       for name in script_protocols.PROTOCOLS if name != script_protocols.PAPER
       for kind in ("text_answer", "generative")},
}
"""Every task, the text-answer tasks, the generative ones (by key); `<kind>_<protocol>`: those of one kind with the
prompt of an author's per-model script (`prompt_protocol`, `script_protocols.PROTOCOLS`)."""


# --------------------------------------------------------------------------- prompt

@runtime_checkable
class FrameRuleReader(Protocol):
    """A media reader that can also sample a video's frames by a script's own index rule (the per-model protocols'
    first / floor / seeded random frames); the paper protocol needs only `MediaReader.video`'s uniform frames."""

    def video_frames(self, path: str, n_frames: int, rule: FrameRule) -> Sequence[Any]:
        """`n_frames` frames of the video at `path` at the indices `rule(n_total, n_frames)`."""


def media_cell(name: str) -> str:
    """The media cell of a `file_path` entry: its path in the release (`files/<name>`)."""
    return f"{MEDIA_FOLDER}/{name}"


def protocol_of(doc: Mapping[str, Any]) -> ScriptProtocol:
    """The prompt protocol of `doc`'s task: `paper` unless its variant names a script protocol."""
    return script_protocols.get(str(doc.get("prompt_protocol") or script_protocols.PAPER))


def video_settings(protocol: ScriptProtocol, settings: Mapping[str, Any]) -> tuple[str, int]:
    """(`video_mode`, `n_frames`) of the task's settings (the protocol's when absent); a script protocol samples as
    its script did and refuses other settings."""
    plan = protocol.video
    mode, count = str(settings.get("video_mode", plan.mode)), int(settings.get("n_frames", plan.count))
    if protocol.name != script_protocols.PAPER and (mode, count) != (plan.mode, plan.count):
        raise ValueError(f"agentx prompt protocol {protocol.name!r} samples video as video_mode={plan.mode}, "
                         f"n_frames={plan.count} (its script's); the task sets {mode}, {count}: restore them, or use "
                         "the paper protocol (task agentx) for other video settings")
    if mode not in ("frames", "native"):
        raise ValueError(f"video_mode must be 'frames' or 'native', got {mode!r}")
    return mode, count


def _frames(media: MediaReader, cell: str, count: int, rule: FrameRule | None, protocol: str) -> list[Any]:
    if rule is None:
        return list(media.video(cell, count))
    if not isinstance(media, FrameRuleReader):
        raise ValueError(f"agentx prompt protocol {protocol!r} samples video frames by its script's rule "
                         f"({rule.kind}); this harness's media reader has no video_frames")
    return list(media.video_frames(cell, count, rule))


def prompt(doc: Mapping[str, Any], settings: Mapping[str, Any], media: MediaReader) -> Prompt:
    """The prompt of the document's protocol (`script_protocols.build_script_prompt`): the system text (None when
    the protocol puts the instruction in the user turn) and the user turn on the images (`media.image` of each
    `files/<name>` cell), the video's frames (`media.video`, or `video_frames` for a script's index rule), or the
    video itself (`video_mode: native`: what `media.video` hands over, a path as a `prompt.VideoFile`)."""
    protocol = protocol_of(doc)
    cells = [media_cell(str(name)) for name in doc["media"]]
    if doc["media_type"] != "video":
        built = script_protocols.build_script_prompt(protocol, doc["query"], [media.image(c) for c in cells])
        return Prompt(built.system or None, built.segments)
    mode, count = video_settings(protocol, settings)
    if mode == "native":
        handed = media.video(cells[0], count)
        video = VideoFile(handed) if isinstance(handed, str) else handed
        built = script_protocols.build_script_prompt(protocol, doc["query"], VideoFile(cells[0]))
        parts = tuple(video if isinstance(part, VideoFile) else part for part in built.segments)
        return Prompt(built.system or None, parts)
    sampled = _frames(media, cells[0], count, protocol.video.frame_rule(doc["media"][0]), protocol.name)
    built = script_protocols.build_script_prompt(protocol, doc["query"], sampled, frames=True)
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
        "prompt_protocol": protocol_of(doc).describe(),
        "judge_style": judging.style_of(judge) if judge is not None and not blocker else None,
    }



class _NoPixels:
    """A reader that decodes nothing: what `text_prompt` lays the prompt out on (its texts never read pixels)."""

    placeholder = object()

    def image(self, cell: Any) -> Any:
        return self.placeholder

    def video(self, path: str, n_frames: int) -> Any:
        return [self.placeholder] * n_frames

    def video_frames(self, path: str, n_frames: int, rule: FrameRule) -> Any:
        return [self.placeholder] * n_frames


def text_prompt(doc: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """The prompt for text-only backends: under the paper's protocol the system message (the instruction and a
    blank line) then the query line (`prompt.simple_text`); under a script protocol its system text (if any) then
    its user turn's texts."""
    if protocol_of(doc).name == script_protocols.PAPER:
        return simple_text(str(doc["query"]))
    built = prompt(doc, settings, _NoPixels())
    return (built.system or "") + "".join(part for part in built.parts if isinstance(part, str))
