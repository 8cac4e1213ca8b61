"""lmms-eval hooks for Agent-X: the core (`core/`) with the plugin's extras around it.

The core normalises the records, builds the prompt, parses the reply, scores it and aggregates; around it this
module adds where the data lives and its loading (`release.py`: data.json, schema override, bad-record screening,
media checks), provenance and the set-aside counts in the results file, strict image decoding and the decoded-media
cache, video frame sampling, the judge (`judge.py`), the loop check and the sample-record contract.  The
aggregation functions the task YAMLs name are `aggregations.py` (and the group's `adapters.core.scores.group_mean`).

Protocol (tasks/agentx/README.md): the system message is byte for byte the released GPT script's
(`instruction_prompt + '\n\n'`, `release_data.system_message()`); backends without a system role get that text as the
first part of the user turn, simple backends get it followed by the query; the user turn = all images in `file_path`
order (or the video's frames, each preceded by `Frame{i}:`), then `"Query: " + query`. One generation per task; the
reply is parsed without executing anything; the judge sees the parsed record (or the empty record when nothing
parses) and the ground truth as released.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import bad_records, benchmarks, frames, provenance
from lmms_agentic.adapters.data import Location, fetch_folder, locate, record_provenance, resolve_media
from lmms_agentic.adapters.documents import select_where
from lmms_agentic.adapters.media import as_rgb, decoded_once
from lmms_agentic.adapters.release_schema import ResolvedSchema, resolve
from lmms_agentic.adapters.samples import loop_check, response_text
from lmms_agentic.judges.client import default_client
from lmms_agentic.tasks.agentx import release
from lmms_agentic.tasks.agentx.core import metrics, release_data, script_protocols
from lmms_agentic.tasks.agentx.core.prompt import Prompt, VideoFile, simple_text
from lmms_agentic.tasks.agentx.core.records import BENCHMARK
from lmms_agentic.tasks.agentx.core.scoring import gt_answer, score_trace
from lmms_agentic.tasks.agentx.core.trace import PARSE_FAILURES, parse_trace
from lmms_agentic.tasks.agentx.judge import judge_doc, style_for

_DOCS: dict[tuple[str, Any], datasets.Dataset] = {}
log = logging.getLogger("lmms_agentic")
SHOWN = bad_records.SHOWN


# --------------------------------------------------------------------------- loading (process_docs)

def all_docs() -> datasets.Dataset:
    """All Agent-X tasks, one row each (loaded and validated once per process and location)."""
    source = benchmarks.get(BENCHMARK).source
    key = (source.benchmark, locate(source))
    if key not in _DOCS:
        location = fetch_folder(source)
        root = Path(location.root or location.where)
        schema = resolve(release.SCHEMA, root)
        loaded = release.load(root, release_data.GENERATIVE_IDS, schema, media_root=root / release.MEDIA_FOLDER)
        for row in loaded.rows:
            row["media_root"] = str(root / release.MEDIA_FOLDER)
        record_provenance(source, location, loaded.occurrences)
        _report(loaded, schema, location)
        _DOCS[key] = datasets.Dataset.from_list(loaded.rows)
    return _DOCS[key]


def _report(loaded: release.Loaded, schema: ResolvedSchema, location: Location) -> None:
    """Provenance for the results file, and one log line per kind of set-aside data."""
    expected = benchmarks.get(BENCHMARK).expected_rows
    provenance.record(BENCHMARK, schema=schema.describe(), usable_rows=len(loaded.rows),
                      expected_rows=expected)
    if loaded.excluded:
        provenance.record(BENCHMARK, excluded={"count": len(loaded.excluded),
                                                       "records": [e.as_dict() for e in loaded.excluded]})
    skipped = loaded.skipped_steps
    if skipped:
        count = sum(len(positions) for positions in skipped.values())
        provenance.record(BENCHMARK, skipped_steps={
            "count": count, "records": [{"id": k, "positions": v} for k, v in skipped.items()]})
        log.warning("%s: skipped %d malformed ground-truth reasoning step(s) (not objects), as the authors' reader "
                    "does, in %d record(s): %s", BENCHMARK, count, len(skipped),
                    ", ".join(list(skipped)[:SHOWN]))
    not_judged = loaded.not_judged
    if not_judged:
        provenance.record(BENCHMARK, not_judged={
            "count": len(not_judged), "records": [{"id": k, "problem": v} for k, v in not_judged.items()]})
        log.warning("%s: %d record(s) are not judged (the released judge scripts fail on them and leave all their "
                    "scores empty); their judged metrics are unscored: %s", BENCHMARK, len(not_judged),
                    "; ".join(f"{k}: {v}" for k, v in list(not_judged.items())[:SHOWN]))
    if location.kind != "mini" and expected is not None and len(loaded.rows) != expected:
        log.warning("%s has %d usable rows at %s; the paper has %d: scores are not comparable with it.",
                    BENCHMARK, len(loaded.rows), location.describe(), expected)


def docs_text_answer(placeholder: datasets.Dataset) -> datasets.Dataset:
    """process_docs of `agentx_text_answer`: the tasks with a text answer (every key not in the generative list)."""
    return select_where(all_docs(), "is_generative", False)


def docs_generative(placeholder: datasets.Dataset) -> datasets.Dataset:
    """process_docs of `agentx_generative`: the 222 generative tasks, by key."""
    return select_where(all_docs(), "is_generative", True)


def _with_protocol(docs: datasets.Dataset, protocol: str) -> datasets.Dataset:
    """The documents with the prompt protocol every hook and the sample record read (`prompt_protocol`)."""
    script_protocols.get(protocol)
    return docs.add_column("prompt_protocol", [protocol] * len(docs))


def _protocol_docs(protocol: str, generative: bool) -> Any:
    def process_docs(placeholder: datasets.Dataset) -> datasets.Dataset:
        return _with_protocol(select_where(all_docs(), "is_generative", generative), protocol)

    process_docs.__name__ = f"docs_{'generative' if generative else 'text_answer'}_{protocol}"
    process_docs.__doc__ = f"process_docs of the `{protocol}` script protocol's {process_docs.__name__[5:]} task."
    return process_docs


# process_docs of the authors' per-model script protocols (tasks agentx_script_<protocol>_*; core/script_protocols.py)
docs_text_answer_gpt, docs_generative_gpt = _protocol_docs("gpt", False), _protocol_docs("gpt", True)
docs_text_answer_gemini, docs_generative_gemini = _protocol_docs("gemini", False), _protocol_docs("gemini", True)
docs_text_answer_qwen, docs_generative_qwen = _protocol_docs("qwen", False), _protocol_docs("qwen", True)
docs_text_answer_gemma, docs_generative_gemma = _protocol_docs("gemma", False), _protocol_docs("gemma", True)
docs_text_answer_pixtral, docs_generative_pixtral = _protocol_docs("pixtral", False), _protocol_docs("pixtral", True)
docs_text_answer_kimi, docs_generative_kimi = _protocol_docs("kimi", False), _protocol_docs("kimi", True)


# --------------------------------------------------------------------------- prompt and visuals

def _media(doc: Mapping[str, Any], index: int) -> Path:
    return resolve_media(doc["media_root"], doc["media"][index], benchmark=BENCHMARK, record_id=doc["id"],
                         field_name="file_path")


def _images(doc: Mapping[str, Any]) -> list[Image.Image]:
    def load() -> list[Image.Image]:
        return [as_rgb(str(_media(doc, i)), where=f"agentx task {doc['id']!r}, file_path[{i}]")
                for i in range(len(doc["media"]))]

    return decoded_once((BENCHMARK, doc["id"]), load)


def protocol_of(doc: Mapping[str, Any]) -> script_protocols.ScriptProtocol:
    """The prompt protocol of `doc`'s task: `paper` unless the task's process_docs names a script protocol."""
    return script_protocols.get(str(doc.get("prompt_protocol") or script_protocols.PAPER))


def _video_settings(protocol: script_protocols.ScriptProtocol, kwargs: Mapping[str, Any]) -> tuple[str, int]:
    mode, count = str(kwargs["video_mode"]), int(kwargs["n_frames"])
    plan = protocol.video
    if protocol.name != script_protocols.PAPER and (mode, count) != (plan.mode, plan.count):
        raise ValueError(f"agentx prompt protocol {protocol.name!r} samples video as video_mode={plan.mode}, "
                         f"n_frames={plan.count} (its script's); the task sets {mode}, {count}: restore them, or use "
                         "the paper protocol (task agentx) for other video settings")
    if mode not in ("frames", "native"):
        raise ValueError(f"video_mode must be 'frames' or 'native', got {mode!r}")
    return mode, count


def prompt(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> Prompt:
    """The core's prompt of `doc` (its protocol's) on the decoded images, the sampled video frames or the video."""
    protocol = protocol_of(doc)
    if doc["media_type"] != "video":
        return script_protocols.build_script_prompt(protocol, doc["query"], _images(doc))
    path = _media(doc, 0)
    mode, count = _video_settings(protocol, kwargs)
    if mode == "native":
        return script_protocols.build_script_prompt(protocol, doc["query"], VideoFile(str(path)))
    sampled = frames.sample_frames(path, count, rule=protocol.video.frame_rule(doc["media"][0]))
    return script_protocols.build_script_prompt(protocol, doc["query"], sampled.frames, frames=True)


def segments(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> list[str | Image.Image]:
    """The user turn in order: images (or `Frame{i}:` labels and frames, or the video path), then the query."""
    return [part.path if isinstance(part, VideoFile) else part for part in prompt(doc, kwargs).segments]


def doc_to_messages(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    built = prompt(doc, lmms_eval_specific_kwargs)
    content: list[dict[str, Any]] = []
    for part in built.segments:
        if isinstance(part, Image.Image):
            content.append({"type": "image", "url": part})
        elif isinstance(part, VideoFile):
            content.append({"type": "video", "url": part.path})
        else:
            content.append({"type": "text", "text": part})
    if not built.system:
        return [{"role": "user", "content": content}]
    if not lmms_eval_specific_kwargs.get("system_role", True):
        content.insert(0, {"type": "text", "text": built.system})
        return [{"role": "user", "content": content}]
    return [{"role": "system", "content": [{"type": "text", "text": built.system}]},
            {"role": "user", "content": content}]


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[Image.Image | str]:
    return [part.path if isinstance(part, VideoFile) else part
            for part in prompt(doc, lmms_eval_specific_kwargs).segments if not isinstance(part, str)]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    """Simple backends: the system message (the instruction and a blank line), then the query; a script protocol's
    system message (if any), then its user turn's texts."""
    protocol = protocol_of(doc)
    if protocol.name == script_protocols.PAPER:
        return simple_text(doc["query"])
    return script_protocols.simple_text(prompt(doc, lmms_eval_specific_kwargs))


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return str(gt_answer(doc).get("value", ""))


# --------------------------------------------------------------------------- scoring

def record(doc: Mapping[str, Any], results: list[Any], judge: bool = True) -> dict[str, Any]:
    """The per-task sample record: the core's deterministic fields (`core/scoring.py`), every judged metric, the
    video frames used, the loop check and the report fields."""
    response = response_text(results)
    trace = parse_trace(response, release_data.TOOL_NAMES, release_data.LEGACY_ALIASES)
    scored = score_trace(doc, trace)
    video = frames.frames_log(_media(doc, 0), doc["media"][0]) if doc["media_type"] == "video" else None
    blocker = doc.get("judge_blocker") or ""
    judged: dict[str, Any] = judge_doc(doc, scored["prediction"]) if judge else {}
    return {
        "benchmark": BENCHMARK, "id": doc["id"], "is_generative": bool(doc["is_generative"]),
        "query_type": doc["query_type"], "media_type": doc["media_type"], "judge": judged,
        **scored,
        "video": video,
        "gt_skipped_steps": list(doc.get("skipped_steps") or []),
        "loop": loop_check(response, answered=trace.failure not in PARSE_FAILURES),
        "not_judged": blocker or None,
        "prompt_protocol": protocol_of(doc).describe(),
        "judge_style": style_for(default_client().config) if judge and not blocker else None,
    }


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The record under the task's first metric (`ground_s`), then each other metric's view of it."""
    sample = record(doc, results)
    first, *others = metrics.metric_names(bool(doc["is_generative"]))
    return {first: sample, **{name: metrics.VIEWS[name](sample) for name in others}}
