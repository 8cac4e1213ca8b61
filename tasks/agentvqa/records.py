"""Normaliser for AgentVQA rows (`AgentVQA/AgentVQA`) into `McqDoc`, through one field map.

The released schema has not been seen. All raw
field names are read through `FIELD_MAP` (canonical name -> raw column), so a renamed column is a
one-line change here. `check_columns` validates the table's columns up front and names what is
missing or unexpected; `normalise` validates every row and names the record and field.

Label values are mapped through alias tables (the paper's display names, snake_case slugs and the
legacy card's source slugs all map to one canonical slug). Source-specific shapes (coordinate
options, UI actions, trajectories, video inputs) are handled by the per-source adapters in
`lmms_agentic.tasks.agentvqa.sources`, never by `if source == ...` chains.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from lmms_agentic.adapters.schema import LETTERS, McqDoc, RecordError, Visuals

BENCHMARK = "agentvqa"
N_OPTIONS = 4
log = logging.getLogger("lmms_agentic.agentvqa")

#: canonical field -> raw column name in the release. [ASSUMPTION until the real card is read]
FIELD_MAP: dict[str, str] = {
    "id": "id",
    "domain": "domain",
    "source": "source_dataset",
    "question": "question",
    "options": "options",
    "answer": "answer",
    "images": "images",
    "video": "video",
    "action_history": "action_history",
    "input_type": "input_type",
    "output_type": "output_type",
    "task_type": "task_type",
    "option_coordinates": "option_coordinates",
    "image_width": "image_width",
    "image_height": "image_height",
    "coordinate_format": "coordinate_format",
}
REQUIRED = ("id", "domain", "source", "question", "options", "answer")
MEDIA = ("images", "video")

DOMAINS = {
    "web_agents": "Web Agents",
    "egocentric_videos": "Egocentric Videos",
    "games": "Games",
    "spatial_planning": "Spatial Planning",
    "robotics": "Robotics",
}
#: canonical source slug -> (domain, display name, accepted spellings beyond slug and display name)
SOURCES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "aitw": ("web_agents", "AitW", ("android-in-the-wild", "android_in_the_wild")),
    "monday": ("web_agents", "MONDAY", ()),
    "screenspot": ("web_agents", "ScreenSpot", ()),
    "screenspot_pro": ("web_agents", "ScreenSpot-Pro", ("screenspot-pro",)),
    "erqa": ("robotics", "ERQA", ()),
    "robo2vlm": ("robotics", "Robo2VLM", ()),
    "roborefit": ("robotics", "RoboRefIt", ()),
    "manipbench": ("robotics", "ManipBench", ()),
    "share_robot": ("robotics", "Share-Robot", ("sharerobot", "share-robot")),
    "vsi_bench": ("egocentric_videos", "VSI-Bench", ("vsibench", "vsi-bench")),
    "perception_test": ("egocentric_videos", "Perception-Test", ("perceptiontest", "perception-test")),
    "openeqa": ("egocentric_videos", "OpenEQA", ("open-eqa",)),
    "videgothink": ("egocentric_videos", "VidEgoThink", ()),
    "egoplan_bench": ("egocentric_videos", "EgoPlan-Bench", ("egoplan", "egoplan-bench")),
    "gameqa": ("games", "GameQA", ()),
    "atari": ("games", "Atari", ()),
    "videogamebunny": ("games", "VideoGameBunny", ()),
    "marioqa": ("games", "MarioQA", ()),
    "space_10": ("spatial_planning", "SpaCE-10", ("space-10", "space10")),
    "embspatial_bench": ("spatial_planning", "EmbSpatial-Bench", ("embspatial-bench", "embspatial")),
    "spatial_mm": ("spatial_planning", "Spatial-MM", ("spatialmm", "spatial-mm")),
    "omnispatial": ("spatial_planning", "OmniSpatial", ()),
    "3dsrbench": ("spatial_planning", "3DSRBench", ("3dsr-bench",)),
}


def _key(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", label.lower())


_DOMAIN_ALIASES = {_key(k): k for k in DOMAINS} | {_key(v): k for k, v in DOMAINS.items()}
_SOURCE_ALIASES = {_key(alias): slug for slug, (_, display, extra) in SOURCES.items()
                   for alias in (slug, display, *extra)}


class SchemaError(ValueError):
    """The table's columns do not match `FIELD_MAP`; the message says which and where to fix it."""


def check_columns(columns: Iterable[str], first_row: Mapping[str, Any] | None = None) -> None:
    """Fail if a required column is missing; warn about columns the field map does not know."""
    present = set(columns)
    missing = [f"{canonical} (column {FIELD_MAP[canonical]!r})" for canonical in REQUIRED
               if FIELD_MAP[canonical] not in present]
    if not any(FIELD_MAP[m] in present for m in MEDIA):
        missing.append(f"images or video (columns {FIELD_MAP['images']!r} / {FIELD_MAP['video']!r})")
    unexpected = sorted(present - set(FIELD_MAP.values()))
    if missing:
        first = f" First record: id={first_row.get(FIELD_MAP['id'], '?')!r}." if first_row is not None else ""
        raise SchemaError(
            f"AgentVQA columns do not match the field map: missing {', '.join(missing)}; "
            f"unexpected {unexpected or 'none'}.{first} If the release renamed a column, edit FIELD_MAP in "
            "lmms_agentic/adapters/records/agentvqa.py (canonical name -> raw column)."
        )
    if unexpected:
        log.warning("AgentVQA columns not in FIELD_MAP (ignored): %s", unexpected)


def _get(row: Mapping[str, Any], canonical: str) -> Any:
    return row.get(FIELD_MAP[canonical])


def canonical_domain(label: str, record_id: str) -> str:
    try:
        return _DOMAIN_ALIASES[_key(label)]
    except KeyError:
        raise RecordError(BENCHMARK, record_id, FIELD_MAP["domain"],
                          f"{label!r} is not one of {list(DOMAINS.values())}") from None


def canonical_source(label: str) -> str:
    """The canonical slug of a source label, or the label's own slug for sources outside the 23."""
    return _SOURCE_ALIASES.get(_key(label), re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_"))


def _answer_index(value: Any, record_id: str) -> int:
    if isinstance(value, bool):
        value = None
    if isinstance(value, int) and 0 <= value < N_OPTIONS:
        return int(value)
    letter: str = value.strip().upper() if isinstance(value, str) else ""
    if len(letter) == 1 and letter in LETTERS[:N_OPTIONS]:
        return LETTERS.index(letter)
    raise RecordError(BENCHMARK, record_id, FIELD_MAP["answer"], f"{value!r} is neither A-D nor 0-3")


def _history(value: Any, record_id: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)) and all(isinstance(step, str) for step in value):
        return "\n".join(step.strip() for step in value if step.strip())
    raise RecordError(BENCHMARK, record_id, FIELD_MAP["action_history"], "expected a string or a list of strings")


def normalise(row: Mapping[str, Any], n_images: int) -> McqDoc:
    """One raw row -> `McqDoc` (images counted by the loader, never decoded here)."""
    record_id = str(_get(row, "id") or "<no id>")

    def fail(canonical: str, problem: str) -> RecordError:
        return RecordError(BENCHMARK, record_id, FIELD_MAP[canonical], problem)

    for canonical in ("id", "domain", "source", "question"):
        if not isinstance(_get(row, canonical), str) or not _get(row, canonical).strip():
            raise fail(canonical, "must be a non-empty string")
    options = _get(row, "options")
    if not isinstance(options, (list, tuple)) or len(options) != N_OPTIONS:
        raise fail("options", f"must be a list of {N_OPTIONS} strings")
    if not all(isinstance(o, str) and o.strip() for o in options):
        raise fail("options", "has an empty or non-string option")
    if len({o.strip() for o in options}) != N_OPTIONS:
        raise fail("options", "has duplicate option texts")
    video = _get(row, "video")
    if video is not None and not isinstance(video, str):
        raise fail("video", "must be a relative path string or null")
    if n_images == 0 and not video:
        raise RecordError(BENCHMARK, record_id, f"{FIELD_MAP['images']}/{FIELD_MAP['video']}",
                          "the item has neither images nor a video")
    domain = canonical_domain(_get(row, "domain"), record_id)
    source = canonical_source(_get(row, "source"))
    if source in SOURCES and SOURCES[source][0] != domain:
        raise fail("source", f"{source} belongs to {SOURCES[source][0]}, not {domain}")
    return McqDoc(
        id=record_id,
        benchmark=BENCHMARK,
        domain=domain,
        source=source,
        question=_get(row, "question").strip(),
        options=tuple(o.strip() for o in options),
        gold_index=_answer_index(_get(row, "answer"), record_id),
        visuals=Visuals(n_images=n_images, video=video or None),
        context=_history(_get(row, "action_history"), record_id),
        metadata={
            "source_label": _get(row, "source"),
            "input_type": _get(row, "input_type") or ("video" if video else "multi_image" if n_images > 1 else "image"),
            "output_type": _get(row, "output_type") or "",
            "task_type": _get(row, "task_type") or "",
            "option_coordinates": _get(row, "option_coordinates"),
            "image_width": _get(row, "image_width"),
            "image_height": _get(row, "image_height"),
            "coordinate_format": _get(row, "coordinate_format") or "",
            "option_fields": ["option_coordinates"],  # per-option metadata, permuted with the options
        },
    )
