"""lmms-eval hooks for RoboVista: the harness-neutral `core` plus the plugin's extras.

`core` normalises rows (`core/records.py`), builds prompts (`core/prompt.py`), prepares images (`core/images.py`),
parses replies (`core/parity.py`, `core/scoring.py`) and names and aggregates the metrics (`core/metrics.py`). Added
here around it: locating and loading the data (`adapters.documents`, `adapters.data`) with the release schema and its
overrides (`release.py`), bad-record tolerance, strict image decoding and the decoded-media cache (`adapters.media`),
the in-context example columns, chat messages, the MCQ LLM-judge fallback (`judges.mcq_fallback`), the sample-record
contract fields and loop detection (`adapters.samples`), the metric views (`views.py`) and option permutations
(`adapters.permutation`). Prompt texts are configuration: they come from the task YAML's `lmms_eval_specific_kwargs`,
so every variant's exact wording is visible there (and recorded by lmms-eval in the results file's `configs`, image
preprocessing included).

How data is loaded: lmms-eval has no run-time hook for choosing a data location, so each task YAML loads
`benchmark.json` (one placeholder row) and `process_docs` replaces it with the rows located by `adapters.data`
(Hub, local copy or mini) as `benchmark.json` declares them. Every `process_docs` is `permutable`, so the
generated permutation tasks reuse it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.documents import load_canonical, select_where
from lmms_agentic.adapters.media import as_pil, decoded_once
from lmms_agentic.adapters.permutation import permutable
from lmms_agentic.adapters.samples import mcq_record, response_text, results_function
from lmms_agentic.judges.mcq_fallback import extract_with_fallback
from lmms_agentic.tasks.robovista import release, views
from lmms_agentic.tasks.robovista.core import metrics, prompt
from lmms_agentic.tasks.robovista.core.images import ImagePolicy, preprocess_image
from lmms_agentic.tasks.robovista.core.records import BENCHMARK, UNKNOWN
from lmms_agentic.tasks.robovista.core.scoring import score_item

IMAGES = "images"


# --------------------------------------------------------------------------- loading (process_docs)

def all_docs() -> datasets.Dataset:
    """All RoboVista rows in canonical form (loaded and validated once per process and location)."""
    docs, _ = load_canonical(BENCHMARK, release.SCHEMA, release.normalise, IMAGES, check=release.check_table)
    return docs


@permutable
def load_docs(placeholder: datasets.Dataset) -> datasets.Dataset:
    """process_docs of the all-rows tasks."""
    return all_docs()


@permutable
def docs_agriculture(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_where(all_docs(), "domain", "agriculture")


@permutable
def docs_autonomous_driving(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_where(all_docs(), "domain", "autonomous_driving")


@permutable
def docs_domestic(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_where(all_docs(), "domain", "domestic")


@permutable
def docs_industrial_manufacturing(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_where(all_docs(), "domain", "industrial_manufacturing")


@permutable
def docs_surgical_robotics(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_where(all_docs(), "domain", "surgical_robotics")


@permutable
def docs_open_datasets(placeholder: datasets.Dataset) -> datasets.Dataset:
    return select_where(all_docs(), "domain", "open_datasets")


@permutable
def docs_unlabeled(placeholder: datasets.Dataset) -> datasets.Dataset:
    """The rows without a domain label (they count in the overall score only)."""
    return select_where(all_docs(), "domain", UNKNOWN)


def with_incontext_examples(docs: datasets.Dataset, seed: int) -> datasets.Dataset:
    """Attach one same-(task, domain) example per row (paper App. B); rows without one get none."""
    chosen = prompt.choose_incontext_examples(docs["id"], docs["metadata_json"], docs["domain"], seed)
    source_rows = [i if c is None else c for i, c in enumerate(chosen)]
    texts = docs.select_columns(["id", "question", "options", "answer", "metadata_json"]).to_list()
    example_columns = datasets.Dataset.from_dict({
        "icl_seed": [seed] * len(docs),
        "icl_example_id": ["" if c is None else texts[c]["id"] for c in chosen],
        "icl_question": ["" if c is None else texts[c]["question"] for c in chosen],
        "icl_options": [[] if c is None else texts[c]["options"] for c in chosen],
        "icl_answer": ["" if c is None else texts[c]["answer"] for c in chosen],
        "icl_reasoning": ["" if c is None else json.loads(texts[c]["metadata_json"])["reasoning"] for c in chosen],
    })
    example_images = docs.select_columns([IMAGES]).select(source_rows).flatten_indices()
    example_images = example_images.rename_column(IMAGES, "icl_images")
    return datasets.concatenate_datasets([docs.flatten_indices(), example_columns, example_images], axis=1)


@permutable
def docs_icl_seed0(placeholder: datasets.Dataset) -> datasets.Dataset:
    return with_incontext_examples(all_docs(), 0)


@permutable
def docs_icl_seed1(placeholder: datasets.Dataset) -> datasets.Dataset:
    return with_incontext_examples(all_docs(), 1)


@permutable
def docs_icl_seed2(placeholder: datasets.Dataset) -> datasets.Dataset:
    return with_incontext_examples(all_docs(), 2)


@permutable
def docs_icl_seed3(placeholder: datasets.Dataset) -> datasets.Dataset:
    return with_incontext_examples(all_docs(), 3)


@permutable
def docs_icl_seed4(placeholder: datasets.Dataset) -> datasets.Dataset:
    return with_incontext_examples(all_docs(), 4)


# --------------------------------------------------------------------------- prompt layout

def _images(doc: Mapping[str, Any], column: str, policy: ImagePolicy) -> list[Image.Image]:
    cells = doc.get(column)
    if cells is None:
        raise RecordError(BENCHMARK, str(doc.get("id")), column, "is missing from the document")

    def load() -> list[Image.Image]:
        return [preprocess_image(as_pil(cell, where=f"robovista record {doc.get('id')!r}, {column}[{i}]"), policy)
                for i, cell in enumerate(cells)]

    if not cells:
        return []
    # the rows of one question under option permutations share their media: decode once (keyed by question)
    key = (BENCHMARK, doc.get("group_id") or doc["id"], column, policy)
    return decoded_once(key, load)


def _require_examples(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> None:
    if kwargs.get("protocol") == "icl" and "icl_example_id" not in doc:
        raise ValueError("protocol 'icl' needs process_docs: lmms_agentic.tasks.robovista.hooks.docs_icl_seed<k>")


def layout(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> prompt.Prompt:
    """`core.prompt.build` on the document's decoded, preprocessed images (and its example's, under ICL)."""
    policy = ImagePolicy.named(kwargs.get("image_preprocess", "paper"))
    images = _images(doc, IMAGES, policy)
    _require_examples(doc, kwargs)
    example_images = _images(doc, "icl_images", policy) if prompt.shows_example(doc, kwargs) else []
    return prompt.build(doc, kwargs, images, example_images)


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[Image.Image]:
    _, segments = layout(doc, lmms_eval_specific_kwargs)
    return [image for segment in segments if isinstance(segment, list) for image in segment]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    """The text for simple backends (`core.prompt.text_only`)."""
    _require_examples(doc, lmms_eval_specific_kwargs)
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

def record(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The per-sample record (see `adapters.samples`): the contract fields (`pred` = strict extractor, with the
    optional LLM-judge fallback), then the core's per-item fields (`core.scoring.score_item`)."""
    response = response_text(results)
    strict = extract_with_fallback(response, doc["options"], question=doc["question"], item_id=doc["id"])
    out = mcq_record(BENCHMARK, doc, response, strict)
    out.update(score_item(doc, response))
    return out


process_results = results_function(record, record_metric="parity_acc", score_field="correct_parity",
                                   views=views.task_views(metrics.DOMAIN_TASK_METRICS))
process_results_full = results_function(record, record_metric="parity_acc", score_field="correct_parity",
                                        views=views.task_views(metrics.FULL_METRICS))
process_results_confidence = results_function(record, record_metric="parity_acc", score_field="correct_parity",
                                              views=views.task_views(metrics.CONFIDENCE_METRICS))
process_results_icl = results_function(record, record_metric="parity_acc", score_field="correct_parity",
                                       views=views.task_views(metrics.ICL_METRICS))
