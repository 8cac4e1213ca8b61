"""Normaliser for RoboVista rows (`sy-xie/robovista`, split `train`) into `McqDoc`.

Raw fields: `id`, `images` (list of images), `question`,
`choices` (positional, index 0 -> A, up to 5, empty entries keep their letter), `correct_answer`
(one letter), `reasoning`, `domain` (may be empty -> "unknown"), `task`, `ability_type` (may be
empty), `ability_subcategory`, `publication_source`. Choice texts are kept verbatim (no stripping of
"A. "-style prefixes, as in the public runner).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.schema import LETTERS, McqDoc, RecordError, Visuals, require, require_str_list

BENCHMARK = "robovista"
UNKNOWN = "unknown"
REQUIRED_FIELDS = ("id", "question", "choices", "correct_answer", "domain", "task", "ability_type")

DOMAINS = {
    "agriculture": "Agriculture",
    "autonomous_driving": "Driving",
    "domestic": "Home",
    "industrial_manufacturing": "Industry",
    "surgical_robotics": "Surgery",
    "open_datasets": "Open Datasets",
}
# ability_type -> two-way split used by the paper (SC = perception, PL = planning)
ABILITY_SPLIT = {
    "scene_understanding": "SC",
    "high_level_decision_making": "PL",
    "low_level_motion_awareness": "PL",
    "recovery_replanning_robustness": "PL",
    "physical_interaction": "PL",
}


def _optional_str(row: Mapping[str, Any], key: str, record_id: str) -> str:
    value = row.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(BENCHMARK, record_id, key, f"expected a string, got {type(value).__name__}")
    return value.strip()


def normalise(row: Mapping[str, Any], n_images: int) -> McqDoc:
    """One raw RoboVista row -> `McqDoc`. Images are counted by the loader (`n_images`), never decoded here."""
    record_id = str(row.get("id") or "<no id>")
    for key in REQUIRED_FIELDS:
        if key not in row:
            raise RecordError(BENCHMARK, record_id, key, "is missing")
    require(row, "id", str, benchmark=BENCHMARK, record_id=record_id)
    question = require(row, "question", str, benchmark=BENCHMARK, record_id=record_id)
    choices = [c.strip() for c in require_str_list(row, "choices", benchmark=BENCHMARK, record_id=record_id)]
    answer = require(row, "correct_answer", str, benchmark=BENCHMARK, record_id=record_id).strip().upper()
    if len(answer) != 1 or answer not in LETTERS[: len(choices)]:
        raise RecordError(BENCHMARK, record_id, "correct_answer",
                          f"{answer!r} is not one of the letters {LETTERS[: len(choices)]}")
    if n_images < 1:
        raise RecordError(BENCHMARK, record_id, "images", "is empty (every question has 1-8 images)")

    domain = _optional_str(row, "domain", record_id) or UNKNOWN
    if domain != UNKNOWN and domain not in DOMAINS:
        raise RecordError(BENCHMARK, record_id, "domain", f"{domain!r} is not one of {sorted(DOMAINS)}")
    ability = _optional_str(row, "ability_type", record_id)
    if ability and ability not in ABILITY_SPLIT:
        raise RecordError(BENCHMARK, record_id, "ability_type", f"{ability!r} is not one of {sorted(ABILITY_SPLIT)}")

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
            "ability_type": ability or UNKNOWN,
            "ability_split": ABILITY_SPLIT.get(ability, UNKNOWN),
            "ability_subcategory": _optional_str(row, "ability_subcategory", record_id),
            "reasoning": _optional_str(row, "reasoning", record_id),
        },
    )
