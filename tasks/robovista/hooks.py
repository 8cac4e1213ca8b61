"""lmms-eval hooks for RoboVista: the core (`core/task.py`) plus the plugin's extras around it.

The core decides the documents of each variant (`core/documents.py`), the prompt layout (`core/prompt.py`), the image
policy (`core/images.py`), the record and every metric value (`core/scoring.py`, `core/metrics.py`). Added here
around it: locating and loading the data (`adapters.documents`, `adapters.data`) with the release schema and its
overrides (`release.py`), bad-record tolerance, strict image decoding and the decoded-media cache (`adapters.media`),
chat messages, the MCQ LLM-judge fallback passed to the core's scorer (`judges.mcq_fallback`), the thinking-loop
verdict and option permutations (`adapters.samples.core_results_function`, `adapters.permutation`). Prompt texts are
configuration: they come from the task YAML's `lmms_eval_specific_kwargs`, so every variant's exact wording is
visible there (and recorded by lmms-eval in the results file's `configs`, image preprocessing included).

How data is loaded: lmms-eval has no run-time hook for choosing a data location, so each task YAML loads
`benchmark.json` (one placeholder row) and `process_docs` replaces it with the rows located by `adapters.data`
(Hub, local copy or mini) as `benchmark.json` declares them, selected by the core's variant of the same name
(`docs_<variant>`; `load_docs` is `all`). Every `process_docs` is `permutable`, so the generated permutation tasks
reuse it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters.documents import load_canonical
from lmms_agentic.adapters.media import as_pil, decoded_once
from lmms_agentic.adapters.permutation import permutable
from lmms_agentic.adapters.samples import core_results_function, read_record
from lmms_agentic.judges.mcq_fallback import McqExtraction, extract_with_fallback, mcq_judge_enabled
from lmms_agentic.tasks.robovista import release
from lmms_agentic.tasks.robovista.core import documents, prompt, task
from lmms_agentic.tasks.robovista.core.images import ImagePolicy, preprocess_image
from lmms_agentic.tasks.robovista.core.records import BENCHMARK

IMAGES = documents.IMAGES
MEDIA_COLUMNS = (documents.IMAGES, documents.ICL_IMAGES)
"""The document fields that hold image cells: the core passes them through untouched (here: row numbers of the
loaded table, so images are never read while selecting)."""
_TEXT_ROWS: dict[str, list[dict[str, Any]]] = {}


# --------------------------------------------------------------------------- loading (process_docs)

def all_docs() -> datasets.Dataset:
    """All RoboVista rows in canonical form (loaded and validated once per process and location)."""
    docs, _ = load_canonical(BENCHMARK, release.SCHEMA, release.normalise, IMAGES, check=release.check_table)
    return docs


def _text_rows(docs: datasets.Dataset) -> list[dict[str, Any]]:
    """The canonical documents with each row's number in place of its image cells (once per loaded table)."""
    key = docs._fingerprint
    if key not in _TEXT_ROWS:
        text = docs.remove_columns([IMAGES]).to_list()
        _TEXT_ROWS[key] = [{**row, IMAGES: index} for index, row in enumerate(text)]
    return [dict(row) for row in _TEXT_ROWS[key]]


def select_variant(name: str) -> datasets.Dataset:
    """The documents of the core's variant `name` (`core.documents.VARIANTS`) with their image cells: each media
    field the variant filled (a row number) becomes the image column of that row, taken from the table undecoded."""
    docs = all_docs()
    chosen = task.VARIANTS[name](_text_rows(docs))
    if not chosen:
        return docs.select([])
    order = list(chosen[0])
    media = [column for column in MEDIA_COLUMNS if column in chosen[0]]
    columns = [datasets.Dataset.from_list([{k: v for k, v in doc.items() if k not in media} for doc in chosen])]
    for column in media:
        cells = docs.select([int(doc[column]) for doc in chosen]).select_columns([IMAGES]).flatten_indices()
        columns.append(cells.rename_column(IMAGES, column) if column != IMAGES else cells)
    return datasets.concatenate_datasets(columns, axis=1).select_columns(order)


@permutable
def load_docs(placeholder: datasets.Dataset) -> datasets.Dataset:
    """process_docs of the all-rows tasks."""
    return select_variant("all")


@permutable
def docs_agriculture(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("agriculture")


@permutable
def docs_autonomous_driving(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("autonomous_driving")


@permutable
def docs_domestic(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("domestic")


@permutable
def docs_industrial_manufacturing(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("industrial_manufacturing")


@permutable
def docs_surgical_robotics(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("surgical_robotics")


@permutable
def docs_open_datasets(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("open_datasets")


@permutable
def docs_unlabeled(placeholder: datasets.Dataset) -> datasets.Dataset:
    """The rows without a domain label (they count in the overall score only)."""
    return select_variant("unlabeled")


@permutable
def docs_icl_seed0(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("icl_seed0")


@permutable
def docs_icl_seed1(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("icl_seed1")


@permutable
def docs_icl_seed2(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("icl_seed2")


@permutable
def docs_icl_seed3(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("icl_seed3")


@permutable
def docs_icl_seed4(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_variant("icl_seed4")


# --------------------------------------------------------------------------- prompt layout

def _images(doc: Mapping[str, Any], column: str, policy: ImagePolicy) -> list[Image.Image]:
    """The document's images under `column`, strictly decoded and prepared by `policy` (once per question)."""
    cells = task.image_cells(doc, column)

    def load() -> list[Image.Image]:
        return [preprocess_image(as_pil(cell, where=f"robovista record {doc.get('id')!r}, {column}[{i}]"), policy)
                for i, cell in enumerate(cells)]

    if not cells:
        return []
    # the rows of one question under option permutations share their media: decode once (keyed by question)
    key = (BENCHMARK, doc.get("group_id") or doc["id"], column, policy)
    return decoded_once(key, load)


def layout(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> prompt.Prompt:
    """`core.prompt.build` (what `core.task.prompt` lays out) on the document's decoded, preprocessed images (and
    its example's, under ICL), taken from the decoded-media cache."""
    policy = task.image_policy(kwargs)
    images = _images(doc, IMAGES, policy)
    task.require_examples(doc, kwargs)
    example_images = _images(doc, documents.ICL_IMAGES, policy) if prompt.shows_example(doc, kwargs) else []
    return prompt.build(doc, kwargs, images, example_images)


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[Image.Image]:
    _, segments = layout(doc, lmms_eval_specific_kwargs)
    return [image for segment in segments if isinstance(segment, list) for image in segment]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    """The text for simple backends (`core.prompt.text_only`)."""
    task.require_examples(doc, lmms_eval_specific_kwargs)
    return prompt.text_only(doc, lmms_eval_specific_kwargs)


def doc_to_messages(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Chat messages: a system turn (or the system prompt inside the user turn) and one user turn."""
    system_prompt, segments = layout(doc, lmms_eval_specific_kwargs)
    content: list[dict[str, Any]] = []
    for segment in segments:
        if isinstance(segment, str):
            content.append({"type": "text", "text": segment})
        else:
            content.extend({"type": "image", "url": image} for image in segment)
    if not lmms_eval_specific_kwargs.get("system_role", True):
        content.insert(0, {"type": "text", "text": f"{system_prompt}\n\n"})
        return [{"role": "user", "content": content}]
    return [{"role": "system", "content": [{"type": "text", "text": system_prompt}]},
            {"role": "user", "content": content}]


def doc_to_target(doc: Mapping[str, Any]) -> str:
    return str(doc["answer"])


# --------------------------------------------------------------------------- scoring

def _verdict(extraction: McqExtraction) -> task.ChoiceVerdict:
    return task.ChoiceVerdict(extraction.letter, extraction.reason,
                              extraction.judge.as_dict() if extraction.judge is not None else None)


def mcq_fallback(calls: Sequence[task.ChoiceCall]) -> list[task.ChoiceVerdict]:
    """The core's `ChoiceJudge`: the LLM judge of `judges.mcq_fallback` on each reply the rules could not read."""
    return [_verdict(extract_with_fallback(call.reply, list(call.options), question=call.question,
                                           item_id=call.item_id, enabled=True)) for call in calls]


def _fallback() -> task.ChoiceJudge | None:
    """The judge the core may call: the MCQ fallback when LMMS_AGENTIC_MCQ_JUDGE=1 (off by default)."""
    return mcq_fallback if mcq_judge_enabled() else None


process_results = core_results_function(task, "domain", judge=_fallback)
process_results_full = core_results_function(task, "full", judge=_fallback)
process_results_confidence = core_results_function(task, "confidence", judge=_fallback)
process_results_icl = core_results_function(task, "icl", judge=_fallback)


def record(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The sample record `process_results` logs for `doc` (the core's record plus the plugin's extras)."""
    logged = read_record(process_results(doc, results))
    if logged is None:
        raise ValueError(f"robovista record {doc['id']!r}: process_results returned no record")
    return logged
