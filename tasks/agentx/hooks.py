"""lmms-eval hooks for the one-shot Agent-X tasks: the core task (`core/task.py`) with the plugin's extras around it.

The core normalises the records, selects each task's documents (`VARIANTS`), builds the prompt, parses the reply and
decides every score (`score`: the record, judged metrics included when a judge is passed in); around it this module
adds where the data lives and its loading (`release.py`: data.json, schema override, bad-record screening, media
checks), provenance and the set-aside counts in the results file, the media reader (strict image decoding, the
decoded-media cache, video frame sampling), the judge when the plugin's variables configure one
(`judge.plugin_judge`), the video frame log and the loop check.  The aggregation functions the task YAMLs name are
`aggregations.py` (and the group's `adapters.core.scores.group_mean`).

Protocol (tasks/agentx/README.md): the system message is byte for byte the released GPT script's
(`instruction_prompt + '\n\n'`, `release_data.system_message()`); backends without a system role get that text as the
first part of the user turn, simple backends get it followed by the query; the user turn = all images in `file_path`
order (or the video's frames, each preceded by `Frame{i}:`), then `"Query: " + query`. One generation per task; the
reply is parsed without executing anything; the judge sees the parsed record (or the empty record when nothing
parses) and the ground truth as released.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters import bad_records, benchmarks, frames, provenance
from lmms_agentic.adapters.core.task import Prompt, task_values
from lmms_agentic.adapters.data import Location, fetch_folder, locate, record_provenance, resolve_media
from lmms_agentic.adapters.media import as_rgb, decoded_once
from lmms_agentic.adapters.release_schema import ResolvedSchema, resolve
from lmms_agentic.adapters.samples import loop_check, response_text
from lmms_agentic.tasks.agentx import release
from lmms_agentic.tasks.agentx.core import metrics, release_data, script_protocols, task
from lmms_agentic.tasks.agentx.core.prompt import VideoFile, simple_text
from lmms_agentic.tasks.agentx.core.records import BENCHMARK, MEDIA_FOLDER
from lmms_agentic.tasks.agentx.core.scoring import gt_answer
from lmms_agentic.tasks.agentx.core.script_protocols import FrameRule
from lmms_agentic.tasks.agentx.judge import plugin_judge

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
        loaded = release.load(root, release_data.GENERATIVE_IDS, schema, media_root=root / MEDIA_FOLDER)
        for row in loaded.rows:
            row["media_root"] = str(root / MEDIA_FOLDER)
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


def select_variant(name: str) -> datasets.Dataset:
    """The documents of the core's variant `name` (`core.task.VARIANTS`), in load order."""
    return datasets.Dataset.from_list(task.VARIANTS[name](all_docs().to_list()))


def _variant_docs(name: str) -> Callable[[datasets.Dataset], datasets.Dataset]:
    def process_docs(placeholder: datasets.Dataset) -> datasets.Dataset:
        return select_variant(name)

    process_docs.__name__ = f"docs_{name}"
    process_docs.__doc__ = f"process_docs of the core's variant `{name}` (`core.task.VARIANTS`)."
    return process_docs


# process_docs of the one-shot tasks: agentx_text_answer, agentx_generative and the authors' per-model script
# protocols (tasks agentx_script_<protocol>_*; core/script_protocols.py)
docs_text_answer, docs_generative = _variant_docs("text_answer"), _variant_docs("generative")
docs_text_answer_gpt, docs_generative_gpt = _variant_docs("text_answer_gpt"), _variant_docs("generative_gpt")
docs_text_answer_gemini, docs_generative_gemini = (_variant_docs("text_answer_gemini"),
                                                   _variant_docs("generative_gemini"))
docs_text_answer_qwen, docs_generative_qwen = _variant_docs("text_answer_qwen"), _variant_docs("generative_qwen")
docs_text_answer_gemma, docs_generative_gemma = _variant_docs("text_answer_gemma"), _variant_docs("generative_gemma")
docs_text_answer_pixtral, docs_generative_pixtral = (_variant_docs("text_answer_pixtral"),
                                                     _variant_docs("generative_pixtral"))
docs_text_answer_kimi, docs_generative_kimi = _variant_docs("text_answer_kimi"), _variant_docs("generative_kimi")


# --------------------------------------------------------------------------- prompt and visuals

def _media(doc: Mapping[str, Any], index: int) -> Path:
    return resolve_media(doc["media_root"], doc["media"][index], benchmark=BENCHMARK, record_id=doc["id"],
                         field_name="file_path")


class ReleaseMedia:
    """The plugin's media reader (`adapters.core.task.MediaReader`, `core.task.FrameRuleReader`) of one loaded
    document: its `files/<name>` cells resolved in the located release, images decoded strictly and once per
    document, video frames sampled by `adapters.frames` (uniformly, or by a script's index rule), or the video file
    itself (`native`)."""

    def __init__(self, doc: Mapping[str, Any], native: bool = False) -> None:
        self.doc = doc
        self.native = native

    def _index(self, cell: Any) -> int:
        return [task.media_cell(str(name)) for name in self.doc["media"]].index(cell)

    def _images(self) -> list[Image.Image]:
        doc = self.doc

        def load() -> list[Image.Image]:
            return [as_rgb(str(_media(doc, i)), where=f"agentx task {doc['id']!r}, file_path[{i}]")
                    for i in range(len(doc["media"]))]

        return decoded_once((BENCHMARK, doc["id"]), load)

    def image(self, cell: Any) -> Image.Image:
        return self._images()[self._index(cell)]

    def video(self, path: str, n_frames: int) -> list[Image.Image] | VideoFile:
        file = _media(self.doc, self._index(path))
        return VideoFile(str(file)) if self.native else list(frames.sample_frames(file, n_frames).frames)

    def video_frames(self, path: str, n_frames: int, rule: FrameRule) -> list[Image.Image]:
        return list(frames.sample_frames(_media(self.doc, self._index(path)), n_frames, rule=rule).frames)


def prompt(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> Prompt:
    """The core's prompt of `doc` (`core.task.prompt`, its protocol's) on the release's media."""
    return task.prompt(doc, kwargs, ReleaseMedia(doc, native=kwargs.get("video_mode") == "native"))


def _visual(part: Any) -> Any:
    return part.path if isinstance(part, VideoFile) else part


def segments(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> list[str | Image.Image]:
    """The user turn in order: images (or `Frame{i}:` labels and frames, or the video path), then the query."""
    return [_visual(part) for part in prompt(doc, kwargs).parts]


def doc_to_messages(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    built = prompt(doc, lmms_eval_specific_kwargs)
    content: list[dict[str, Any]] = []
    for part in built.parts:
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
    return [_visual(part) for part in prompt(doc, lmms_eval_specific_kwargs).media()]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    """Simple backends: the system message (the instruction and a blank line), then the query; a script protocol's
    system message (if any), then its user turn's texts."""
    if task.protocol_of(doc).name == script_protocols.PAPER:
        return simple_text(doc["query"])
    built = prompt(doc, lmms_eval_specific_kwargs)
    return (built.system or "") + "".join(built.texts())


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return str(gt_answer(doc).get("value", ""))


# --------------------------------------------------------------------------- scoring

def record(doc: Mapping[str, Any], results: list[Any], judge: bool = True) -> dict[str, Any]:
    """The per-task sample record: the core's (`core.task.score`, with the plugin's judge when one is configured and
    `judge` is true; else the judged metrics are unscored and nothing is asked), then the plugin's extras: the video
    frames used and the loop check."""
    response = response_text(results)
    sample = task.score(doc, response, plugin_judge() if judge else None)
    sample["video"] = frames.frames_log(_media(doc, 0), doc["media"][0]) if doc["media_type"] == "video" else None
    sample["loop"] = loop_check(response, answered=sample["parse_failure"] is None)
    return sample


def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The record under the task's first metric (`ground_s`), then each other metric's view of it (the core's table,
    then the loop metrics)."""
    sample = record(doc, results)
    kind = "generative" if doc["is_generative"] else "text_answer"
    return {**task_values(task, kind, sample), **{name: metrics.VIEWS[name](sample) for name in metrics.LOOP_METRICS}}
