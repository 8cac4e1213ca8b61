"""Normalises one RoboVista release row (`sy-xie/robovista`, split `train`, published field names) into `McqDoc`.

Owns the published schema (`PUBLISHED_FIELDS`: `choices` positional, index 0 -> A, up to 5; `correct_answer` one
letter; `domain` a slug of `DOMAINS`, `ability_type` a key of `ABILITY_SPLIT`, empty -> "unknown"), the paper's
domain names and SC/PL ability split. Malformed input raises `RecordError` naming the record and the field. Choices
are used as the public runner uses them: verbatim (no stripping), an empty or missing one is not shown but keeps its
letter, a whitespace-only one is shown. Other spellings are mapped onto it earlier (the plugin's `release.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.core.schema import LETTERS, McqDoc, RecordError, Visuals, require, require_str_list

BENCHMARK = "robovista"
UNKNOWN = "unknown"
QUESTION_FIELDS = ("id", "question", "choices", "correct_answer")
REQUIRED_FIELDS = (*QUESTION_FIELDS, "domain", "task", "ability_type")
OPTIONAL_FIELDS = ("images", "reasoning", "ability_subcategory", "publication_source")
PUBLISHED_FIELDS = (*REQUIRED_FIELDS, *OPTIONAL_FIELDS)

#: domain slug -> the paper's display name
DOMAINS = {
    "agriculture": "Agriculture",
    "autonomous_driving": "Driving",
    "domestic": "Home",
    "industrial_manufacturing": "Industry",
    "surgical_robotics": "Surgery",
    "open_datasets": "Open Datasets",
}
#: ability_type -> two-way split used by the paper (SC = perception, PL = planning)
ABILITY_SPLIT = {
    "scene_understanding": "SC",
    "high_level_decision_making": "PL",
    "low_level_motion_awareness": "PL",
    "recovery_replanning_robustness": "PL",
    "physical_interaction": "PL",
}


Row = Mapping[str, Any]


def _error(record_id: str, key: str, problem: str) -> RecordError:
    return RecordError(BENCHMARK, record_id, key, problem)


def _optional_str(row: Row, key: str, record_id: str) -> str:
    value = row.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _error(record_id, key, f"expected a string, got {type(value).__name__}")
    return value.strip()


def _label(row: Row, key: str, known: Mapping[str, str], record_id: str) -> str:
    """A label as published: one of `known`, or empty (-> UNKNOWN)."""
    label = _optional_str(row, key, record_id)
    if not label:
        return UNKNOWN
    if label not in known:
        raise _error(record_id, key, f"{row[key]!r} is not a known {key.replace('_', ' ')}")
    return label


def normalise(row: Row, n_images: int) -> McqDoc:
    """One RoboVista row of the published schema -> `McqDoc`. The caller counts the row's images (`n_images`); none
    is decoded here."""
    record_id = str(row.get("id") or "<no id>")
    for key in REQUIRED_FIELDS:
        if key not in row:
            raise _error(record_id, key, "is missing")
    if isinstance(row["id"], int) and not isinstance(row["id"], bool):
        record_id = str(row["id"])  # some mirrors store numeric question ids
    else:
        require(row, "id", str, benchmark=BENCHMARK, record_id=record_id)
    question = require(row, "question", str, benchmark=BENCHMARK, record_id=record_id)
    choices = require_str_list(row, "choices", benchmark=BENCHMARK, record_id=record_id)
    if not any(choices):
        raise _error(record_id, "choices", "holds only empty choices" if choices else "is empty")
    answer = require(row, "correct_answer", str, benchmark=BENCHMARK, record_id=record_id)
    answer, letters = answer.strip().upper(), LETTERS[: len(choices)]
    if len(answer) != 1 or answer not in letters:
        raise _error(record_id, "correct_answer", f"{answer!r} is not one of the letters {letters}")
    if n_images < 1:
        raise _error(record_id, "images", "is empty (every question has 1-8 images)")

    domain = _label(row, "domain", DOMAINS, record_id)
    ability = _label(row, "ability_type", ABILITY_SPLIT, record_id)
    return McqDoc(
        id=record_id,
        benchmark=BENCHMARK,
        domain=domain,
        source=_optional_str(row, "publication_source", record_id),
        question=question,
        options=tuple(choices),
        gold_index=LETTERS.index(answer),
        visuals=Visuals(n_images=n_images),
        metadata={
            "task": _optional_str(row, "task", record_id),
            "ability_type": ability,
            "ability_split": ABILITY_SPLIT.get(ability, UNKNOWN),
            "ability_subcategory": _optional_str(row, "ability_subcategory", record_id),
            "reasoning": _optional_str(row, "reasoning", record_id),
        },
    )
