"""Reader for RoboVista rows (`sy-xie/robovista`, split `train`) into `McqDoc`.

Raw fields (`SCHEMA`, renamable by a user's schema override): `id`, `images` (list of images), `question`,
`choices` (positional, index 0 -> A, up to 5), `correct_answer` (one letter), `reasoning`, `domain` (may be empty ->
"unknown"), `task`, `ability_type` (may be empty), `ability_subcategory`, `publication_source`.

Choices are used exactly as the public runner uses them: verbatim (no stripping of whitespace or of "A. "-style
prefixes), an empty or missing choice is not shown but keeps its letter's position, and a whitespace-only choice is
shown (the runner tests `if text`). Domain and ability labels accept the paper's display names and the runner
README's words out of the box ("driving", "surgical", "industrial", "open datasets", "Home", ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.core.schema import LETTERS, McqDoc, RecordError, Visuals, require, require_str_list
from lmms_agentic.adapters.release_schema import LabelKind, ReleaseSchema, ResolvedSchema

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
#: accepted out of the box beyond the slug and the paper's display name (runner README and third-party loaders)
DOMAIN_ALIASES = {
    "agriculture": ("agricultural",),
    "autonomous_driving": ("driving", "autonomous driving", "self-driving"),
    "domestic": ("home", "household"),
    "industrial_manufacturing": ("industrial", "industry", "manufacturing", "industrial manufacturing"),
    "surgical_robotics": ("surgical", "surgery", "surgical robotics"),
    "open_datasets": ("open datasets", "open-datasets", "open dataset"),
}
# ability_type -> two-way split used by the paper (SC = perception, PL = planning)
ABILITY_SPLIT = {
    "scene_understanding": "SC",
    "high_level_decision_making": "PL",
    "low_level_motion_awareness": "PL",
    "recovery_replanning_robustness": "PL",
    "physical_interaction": "PL",
}


SCHEMA = ReleaseSchema(
    benchmark=BENCHMARK,
    fields={name: name for name in (*REQUIRED_FIELDS, "images", "reasoning", "ability_subcategory",
                                     "publication_source")},
    labels={
        "domain": LabelKind(tuple(DOMAINS), {k: (DOMAINS[k], *DOMAIN_ALIASES[k]) for k in DOMAINS},
                            allow_empty=UNKNOWN),
        "ability_type": LabelKind(tuple(ABILITY_SPLIT), allow_empty=UNKNOWN),
    },
)


def check_table(table: Any, schema: ResolvedSchema) -> None:
    """The columns every row needs are there (one error naming all that are missing)."""
    from lmms_agentic.adapters.docs import check_columns

    check_columns(table, schema, (*REQUIRED_FIELDS, "images"))


def _optional_str(row: Mapping[str, Any], key: str, record_id: str) -> str:
    value = row.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(BENCHMARK, record_id, key, f"expected a string, got {type(value).__name__}")
    return value.strip()


def normalise(row: Mapping[str, Any], n_images: int, schema: ResolvedSchema) -> McqDoc:
    """One RoboVista row (canonical field names) -> `McqDoc`. Images are counted by the loader (`n_images`), never
    decoded here."""
    record_id = str(row.get("id") or "<no id>")
    for key in REQUIRED_FIELDS:
        if key not in row:
            raise RecordError(BENCHMARK, record_id, key, "is missing")
    if isinstance(row["id"], int) and not isinstance(row["id"], bool):
        record_id = str(row["id"])  # some mirrors store numeric question ids
    else:
        require(row, "id", str, benchmark=BENCHMARK, record_id=record_id)
    question = require(row, "question", str, benchmark=BENCHMARK, record_id=record_id)
    choices = require_str_list(row, "choices", benchmark=BENCHMARK, record_id=record_id)
    if not any(choices):
        raise RecordError(BENCHMARK, record_id, "choices", "is empty" if not choices else "holds only empty choices")
    answer = require(row, "correct_answer", str, benchmark=BENCHMARK, record_id=record_id).strip().upper()
    if len(answer) != 1 or answer not in LETTERS[: len(choices)]:
        raise RecordError(BENCHMARK, record_id, "correct_answer",
                          f"{answer!r} is not one of the letters {LETTERS[: len(choices)]}")
    if n_images < 1:
        raise RecordError(BENCHMARK, record_id, "images", "is empty (every question has 1-8 images)")

    domain = schema.resolver("domain").get(_optional_str(row, "domain", record_id))
    if domain is None:
        raise RecordError(BENCHMARK, record_id, "domain", f"{row['domain']!r} is not a known domain")
    ability = schema.resolver("ability_type").get(_optional_str(row, "ability_type", record_id))
    if ability is None:
        raise RecordError(BENCHMARK, record_id, "ability_type", f"{row['ability_type']!r} is not a known ability type")

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
