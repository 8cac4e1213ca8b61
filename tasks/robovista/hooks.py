"""lmms-eval hooks for RoboVista: loading (process_docs), prompt layout, visuals and per-sample records.

Glue only: the raw-row reader is `records.py`, the runner's two released answer parsers `parity.py`, the
strict extractor `adapters.core.extract`, image preprocessing `adapters.media`, example choice `adapters.core.fewshot`;
metric views and aggregations are in `metrics.py`. Prompt texts are configuration: they come from the task YAML's
`lmms_eval_specific_kwargs`, so every variant's exact wording is visible there (and recorded by lmms-eval in the
results file's `configs`, image preprocessing included).

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

from lmms_agentic.adapters.core.extract import split_confidence
from lmms_agentic.adapters.core.fewshot import choose_examples
from lmms_agentic.adapters.core.prompting import mcq_text, option_lines, with_system_prompt
from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.docs import load_canonical, select_where
from lmms_agentic.adapters.media import ImagePolicy, as_pil, decoded_once, preprocess_image
from lmms_agentic.adapters.permutation import permutable
from lmms_agentic.adapters.samples import mcq_record, response_text, results_function
from lmms_agentic.judges.mcq_fallback import extract_with_fallback
from lmms_agentic.tasks.robovista import metrics, parity, records

IMAGES = "images"

Segment = str | list[Image.Image]


# --------------------------------------------------------------------------- loading (process_docs)

def all_docs() -> datasets.Dataset:
    """All RoboVista rows in canonical form (loaded and validated once per process and location)."""
    docs, _ = load_canonical(records.BENCHMARK, records.SCHEMA, records.normalise, IMAGES, check=records.check_table)
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
    return select_where(all_docs(), "domain", records.UNKNOWN)


def with_incontext_examples(docs: datasets.Dataset, seed: int) -> datasets.Dataset:
    """Attach one same-(task, domain) example per row (paper App. B); rows without one get none."""
    tasks = [json.loads(m)["task"] for m in docs["metadata_json"]]
    chosen = choose_examples(docs["id"], list(zip(tasks, docs["domain"], strict=True)), seed)
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
        raise RecordError(records.BENCHMARK, str(doc.get("id")), column, "is missing from the document")

    def load() -> list[Image.Image]:
        return [preprocess_image(as_pil(cell, where=f"robovista record {doc.get('id')!r}, {column}[{i}]"), policy)
                for i, cell in enumerate(cells)]

    if not cells:
        return []
    # the rows of one question under option permutations share their media: decode once (keyed by question)
    key = (records.BENCHMARK, doc.get("group_id") or doc["id"], column, policy)
    return decoded_once(key, load)


def _user_text(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> str:
    suffix = kwargs["suffix"]
    if kwargs.get("confidence_request"):
        suffix = f"{suffix}\n{kwargs['confidence_request']}"
    return mcq_text(doc["question"], doc["options"], suffix)


def layout(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> tuple[str, list[Segment]]:
    """(system prompt, ordered user segments: text strings and image lists) for one document.

    Zero-shot / CoT: all images, then the text. ICL: the paper's EXAMPLE / YOUR QUESTION
    layout with the example's images at the first marker and the item's at the second.
    """
    policy = ImagePolicy.named(kwargs.get("image_preprocess", "paper"))
    images = _images(doc, IMAGES, policy)
    if kwargs.get("protocol") != "icl":
        return kwargs["system_prompt"], [images, _user_text(doc, kwargs)]
    if "icl_example_id" not in doc:
        raise ValueError("protocol 'icl' needs process_docs: lmms_agentic.tasks.robovista.hooks.docs_icl_seed<k>")
    if not doc["icl_example_id"]:  # no other item with the same (task, domain): zero-shot fallback, counted
        return kwargs["system_prompt"], [images, _user_text(doc, kwargs)]
    example = (f"Question: {doc['icl_question']}\nOptions: {option_lines(doc['icl_options'])}\n"
               f"Answer: {doc['icl_answer']}")
    if kwargs.get("icl_reasoning"):
        example += f"\nReasoning: {doc['icl_reasoning']}"
    return kwargs["icl_system_prompt"], [
        "=== EXAMPLE ===\n[Image 1: Example image]\n", _images(doc, "icl_images", policy),
        f"\n{example}\n\n\n=== YOUR QUESTION ===\n[Image 2: Your image]\n", images,
        _user_text(doc, kwargs),
    ]


def doc_to_visual(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> list[Image.Image]:
    _, segments = layout(doc, lmms_eval_specific_kwargs)
    return [image for segment in segments if isinstance(segment, list) for image in segment]


def doc_to_text(doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any]) -> str:
    """The text for simple backends: the system prompt leads, image positions are implicit."""
    system_prompt, segments = _layout_text_only(doc, lmms_eval_specific_kwargs)
    return with_system_prompt(system_prompt, "".join(segments))


def _layout_text_only(doc: Mapping[str, Any], kwargs: Mapping[str, Any]) -> tuple[str, list[str]]:
    no_images = {**kwargs, "image_preprocess": "none"}
    stub = {**doc, IMAGES: [], "icl_images": []}
    system_prompt, segments = layout(stub, no_images)
    return system_prompt, [s for s in segments if isinstance(s, str)]


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

def _as_runner_read_it(response: object, mode: str) -> object:
    """The reply as the runner path behind each parser's published numbers saw it: the API runner (paper tables,
    parity_20260706) collapses whitespace runs before parsing; the local runner (the reference runs scored with
    parity_20260714) passes the text as generated."""
    if mode == "parity_20260706" and isinstance(response, str):
        return " ".join(response.split())
    return response


def record(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
    """The per-sample record (see `adapters.samples`): the contract fields (`pred` = strict extractor, with the
    optional LLM-judge fallback), both released runner parsers (`parsers`) with the default one's letter as
    `pred_parity` (the paper's scoring, `parity_mode` names it), the stated confidence and the breakdown labels."""
    response = response_text(results)
    strict = extract_with_fallback(response, doc["options"], question=doc["question"], item_id=doc["id"])
    released = {mode: parity.parse_answer(_as_runner_read_it(response, mode), doc["options"], mode)
                for mode in parity.PARSER_MODES}
    default = released[parity.DEFAULT_PARSER]
    meta = json.loads(doc["metadata_json"])
    out = mcq_record(records.BENCHMARK, doc, response, strict)
    out.update({
        "parity_mode": parity.DEFAULT_PARSER,
        "pred_parity": default.letter,
        "rule_parity": default.rule,
        "correct_parity": default.letter == doc["answer"],
        "parsers": {mode: {"letter": e.letter, "rule": e.rule, "correct": e.letter == doc["answer"]}
                    for mode, e in released.items()},
        "confidence": split_confidence(response)[1] if isinstance(response, str) else None,
        "task": meta["task"],
        "ability_type": meta["ability_type"],
        "ability_split": meta["ability_split"],
        "icl_example_id": doc.get("icl_example_id"),
    })
    return out


process_results = results_function(record, record_metric="parity_acc", score_field="correct_parity",
                                   views=metrics.views(metrics.DOMAIN_TASK_METRICS))
process_results_full = results_function(record, record_metric="parity_acc", score_field="correct_parity",
                                        views=metrics.views(metrics.FULL_METRICS))
process_results_confidence = results_function(record, record_metric="parity_acc", score_field="correct_parity",
                                              views=metrics.views(metrics.CONFIDENCE_METRICS))
process_results_icl = results_function(record, record_metric="parity_acc", score_field="correct_parity",
                                       views=metrics.views(metrics.ICL_METRICS))
