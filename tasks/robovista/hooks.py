"""lmms-eval hooks for RoboVista: loading (process_docs), prompt layout, visuals and per-sample payloads.

Glue only: data location is `adapters.data`, normalisation `adapters.records.robovista`, answer
extraction `adapters.extract`, image preprocessing `adapters.media`, example choice
`adapters.fewshot`; aggregations are in `metrics.py`. Prompt texts are configuration: they come from
the task YAML's `lmms_eval_specific_kwargs`, so every variant's exact wording is visible there.

How data is loaded: lmms-eval has no run-time hook for choosing a data location, so each task
YAML loads `source.json` (one row declaring the Hub id, split and revision) and `process_docs`
replaces it with the benchmark rows located by `adapters.data.load_split` (Hub, local copy or mini).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import datasets
from PIL import Image

from lmms_agentic.adapters.data import Location
from lmms_agentic.adapters.docs import load_canonical, select_where
from lmms_agentic.adapters.extract import REQUEST_FAILED_PREFIX, extract_choice, split_confidence
from lmms_agentic.adapters.fewshot import choose_examples
from lmms_agentic.adapters.media import ImagePolicy, as_pil, decoded_once, preprocess_image
from lmms_agentic.adapters.prompting import mcq_text, option_lines, with_system_prompt
from lmms_agentic.adapters.records import robovista as records
from lmms_agentic.adapters.schema import RecordError
from lmms_agentic.judges.mcq_fallback import extract_with_fallback
from lmms_agentic.tasks.robovista import metrics

log = logging.getLogger("lmms_agentic.robovista")

IMAGES = "images"
EXPECTED_ROWS = 474

Segment = str | list[Image.Image]


# --------------------------------------------------------------------------- loading (process_docs)

def _check_size(raw: datasets.Dataset, location: Location) -> None:
    if location.kind != "mini" and len(raw) != EXPECTED_ROWS:
        log.warning("RoboVista has %d rows at %s, expected %d: scores are not comparable with the paper.",
                    len(raw), location.describe(), EXPECTED_ROWS)


def load_docs(manifest: datasets.Dataset) -> datasets.Dataset:
    """All RoboVista rows in canonical form (loaded and validated once per process and location)."""
    docs, _ = load_canonical(manifest, records.normalise, IMAGES, check=_check_size)
    return docs


def _domain_docs(domain: str) -> Callable[[datasets.Dataset], datasets.Dataset]:
    def process_docs(manifest: datasets.Dataset) -> datasets.Dataset:
        return select_where(load_docs(manifest), "domain", domain)

    process_docs.__name__ = f"docs_{domain}"
    return process_docs


docs_agriculture = _domain_docs("agriculture")
docs_autonomous_driving = _domain_docs("autonomous_driving")
docs_domestic = _domain_docs("domestic")
docs_industrial_manufacturing = _domain_docs("industrial_manufacturing")
docs_surgical_robotics = _domain_docs("surgical_robotics")
docs_open_datasets = _domain_docs("open_datasets")
docs_unlabeled = _domain_docs(records.UNKNOWN)


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


def _icl_docs(seed: int) -> Callable[[datasets.Dataset], datasets.Dataset]:
    def process_docs(manifest: datasets.Dataset) -> datasets.Dataset:
        return with_incontext_examples(load_docs(manifest), seed)

    process_docs.__name__ = f"docs_icl_seed{seed}"
    return process_docs


docs_icl_seed0 = _icl_docs(0)
docs_icl_seed1 = _icl_docs(1)
docs_icl_seed2 = _icl_docs(2)
docs_icl_seed3 = _icl_docs(3)
docs_icl_seed4 = _icl_docs(4)


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

    Zero-shot / CoT: all images, then the text (spec §5.1). ICL: the paper's EXAMPLE / YOUR QUESTION
    layout with the example's images at the first marker and the item's at the second (spec §5.3).
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

def payload(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
    """The per-document record every RoboVista metric aggregates (plain data, logged per sample)."""
    response = results[0] if results else ""
    parity = extract_choice(response, doc["options"], mode="parity")
    # strict rules, then the LLM-judge fallback when LMMS_AGENTIC_MCQ_JUDGE=1 (off by default)
    strict = extract_with_fallback(response, doc["options"], question=doc["question"], item_id=doc["id"])
    confidence = split_confidence(response)[1] if isinstance(response, str) else None
    meta = json.loads(doc["metadata_json"])
    return {
        "id": doc["id"],
        "domain": doc["domain"],
        "task": meta["task"],
        "ability_type": meta["ability_type"],
        "ability_split": meta["ability_split"],
        "answer": doc["answer"],
        "pred": parity.letter,
        "rule": parity.rule,
        "pred_strict": strict.letter,
        "rule_strict": strict.rule,
        "no_answer_reason": strict.reason,
        "extraction_path": strict.path,
        "judge": strict.judge.as_dict() if strict.judge is not None else None,
        "correct": parity.letter == doc["answer"],
        "correct_strict": strict.letter == doc["answer"],
        "confidence": confidence,
        "request_failed": isinstance(response, str) and response.startswith(REQUEST_FAILED_PREFIX),
        "icl_example_id": doc.get("icl_example_id"),
    }


def _results_for(metric_names: tuple[str, ...]) -> Callable[[Mapping[str, Any], list[str]], dict[str, Any]]:
    def process_results(doc: Mapping[str, Any], results: list[str]) -> dict[str, Any]:
        record = payload(doc, results)
        return {name: record for name in metric_names}

    return process_results


process_results = _results_for(metrics.DOMAIN_TASK_METRICS)
process_results_full = _results_for(metrics.FULL_METRICS)
process_results_confidence = _results_for(metrics.CONFIDENCE_METRICS)
process_results_icl = _results_for(metrics.ICL_METRICS)
