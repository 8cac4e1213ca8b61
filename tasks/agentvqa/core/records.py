"""AgentVQA's release rows (`AgentVQA/AgentVQA`) into `McqDoc`: field map, label tables, answer formats, validation.

Owns: `FIELD_MAP` (canonical field -> the release's column; the released schema has not been seen, an ASSUMPTION
listed in README.md), the domain and source label tables with their accepted spellings (the paper's display names,
snake_case slugs, the legacy card's domain names and source slugs all map to one canonical slug), the gold-answer
formats, and `normalise`, which validates one row and names the record and field of any problem (`RecordError`).

`normalise` reads a row under the canonical field names (FIELD_MAP's keys; a release row of the published schema is
read under them by renaming each FIELD_MAP value to its key). What a renamed release needs — a user's schema override
mapping other columns or label spellings onto these — is applied by the plugin before a row gets here
(`tasks/agentvqa/release.py`), which also passes the columns to name in errors and the declared answer format.
Source-specific shapes (coordinate options) are checked by `sources.py`, never by `if source == ...` chains. The
gold answer is read as a letter A-D or a 0-based index ("auto", the default), or in the declared format (`letter`,
`index0`, `index1`, `text`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from lmms_agentic.adapters.core.schema import LETTERS, McqDoc, RecordError, Visuals
from lmms_agentic.tasks.agentvqa.core.sources import check_coordinates

BENCHMARK = "agentvqa"
N_OPTIONS = 4

#: canonical field -> column name in the release. [ASSUMPTION until the real card is read]
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

DOMAINS = {
    "web_agents": "Web Agents",
    "egocentric_videos": "Egocentric Videos",
    "games": "Games",
    "spatial_planning": "Spatial Planning",
    "robotics": "Robotics",
}
#: the legacy dataset card's domain names, accepted out of the box
LEGACY_DOMAINS = {
    "web_agents": ("GUI Interaction",),
    "egocentric_videos": ("Video Perception",),
    "games": ("Game Understanding",),
    "spatial_planning": ("Spatial Reasoning",),
    "robotics": ("Robot Manipulation",),
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


ANSWER_FORMATS = ("auto", "letter", "index0", "index1", "text")
"""How a release may write the gold answer ("auto": a letter A-D or a 0-based index)."""


def label_key(label: str) -> str:
    """The spelling-insensitive form of a label: lower-cased letters and digits ("VSI-Bench" = "vsibench")."""
    return re.sub(r"[^a-z0-9]+", "", label.lower())


_DOMAIN_ALIASES = {label_key(alias): slug for slug, display in DOMAINS.items()
                   for alias in (slug, display, *LEGACY_DOMAINS[slug])}
_SOURCE_ALIASES = {label_key(alias): slug for slug, (_, display, extra) in SOURCES.items()
                   for alias in (slug, display, *extra)}


def canonical_domain(label: str) -> str | None:
    """The canonical slug of a domain label (slug, paper name or legacy card name), or None for another label."""
    return _DOMAIN_ALIASES.get(label_key(label))


def canonical_source(label: str) -> str:
    """The canonical slug of a source label, or the label's own slug for sources outside the 23."""
    return _SOURCE_ALIASES.get(label_key(label), re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_"))


def _answer_index(value: Any, options: list[str], answer_format: str,
                  fail: Callable[[str, str], RecordError]) -> int:
    """The gold option's index from the answer as the release writes it (see the module docstring)."""
    if isinstance(value, bool):
        value = None
    text = value.strip() if isinstance(value, str) else None
    letter = text.upper() if text is not None and len(text) == 1 else None
    if answer_format in ("auto", "index0") and isinstance(value, int) and 0 <= value < N_OPTIONS:
        return int(value)
    if answer_format == "index1" and isinstance(value, int) and 1 <= value <= N_OPTIONS:
        return int(value) - 1
    if answer_format in ("auto", "letter") and letter is not None and letter in LETTERS[:N_OPTIONS]:
        return LETTERS.index(letter)
    if answer_format == "text" and text is not None and [o.strip() for o in options].count(text) == 1:
        return [o.strip() for o in options].index(text)
    expected = {"auto": "a letter A-D or an index 0-3", "letter": "a letter A-D", "index0": "an index 0-3",
                "index1": "an index 1-4", "text": "exactly one option's text"}[answer_format]
    raise fail("answer", f"{value!r} is not {expected} (answer format {answer_format!r})")


def _history(value: Any, fail: Callable[[str, str], RecordError]) -> str:
    """The action history as one action per line ("" without one)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, tuple)) and all(isinstance(step, str) for step in value):
        return "\n".join(step.strip() for step in value if step.strip())
    raise fail("action_history", "expected a string or a list of strings")


def normalise(row: Mapping[str, Any], n_images: int, *, columns: Mapping[str, str | tuple[str, ...]] = FIELD_MAP,
              answer_format: str = "auto") -> McqDoc:
    """One row (canonical field names) -> `McqDoc`. `n_images`: the row's image count (images are never decoded
    here); `columns`: the release column each canonical field was read from, named in errors; `answer_format`: one
    of `ANSWER_FORMATS`."""
    record_id = str(row.get("id") or "<no id>")

    def fail(canonical: str, problem: str) -> RecordError:
        column = columns.get(canonical, canonical)
        return RecordError(BENCHMARK, record_id, column if isinstance(column, str) else canonical, problem)

    for canonical in ("id", "domain", "source", "question"):
        if not isinstance(row.get(canonical), str) or not row[canonical].strip():
            raise fail(canonical, "must be a non-empty string")
    options = row.get("options")
    if not isinstance(options, (list, tuple)) or len(options) != N_OPTIONS:
        raise fail("options", f"must be a list of {N_OPTIONS} strings")
    if not all(isinstance(o, str) and o.strip() for o in options):
        raise fail("options", "has an empty or non-string option")
    if len({o.strip() for o in options}) != N_OPTIONS:
        raise fail("options", "has duplicate option texts")
    video = row.get("video")
    if video is not None and not isinstance(video, str):
        raise fail("video", "must be a relative path string or null")
    if n_images == 0 and not video:
        raise RecordError(BENCHMARK, record_id, f"{columns['images']}/{columns['video']}",
                          "the item has neither images nor a video")
    domain = canonical_domain(row["domain"])
    if domain is None:
        raise fail("domain", f"{row['domain']!r} is not one of {list(DOMAINS.values())}")
    source = canonical_source(row["source"])
    if source in SOURCES and SOURCES[source][0] != domain:
        raise fail("source", f"{source} belongs to {SOURCES[source][0]}, not {domain}")
    texts = [str(o) for o in options]
    problem = check_coordinates(row.get("option_coordinates"), N_OPTIONS)
    if problem is not None:
        raise fail("option_coordinates", problem)
    return McqDoc(
        id=record_id,
        benchmark=BENCHMARK,
        domain=domain,
        source=source,
        question=row["question"].strip(),
        options=tuple(o.strip() for o in texts),
        gold_index=_answer_index(row.get("answer"), texts, answer_format, fail),
        visuals=Visuals(n_images=n_images, video=video or None),
        context=_history(row.get("action_history"), fail),
        metadata={
            "source_label": row["source"],
            "input_type": row.get("input_type") or ("video" if video else "multi_image" if n_images > 1 else "image"),
            "output_type": row.get("output_type") or "",
            "task_type": row.get("task_type") or "",
            "option_coordinates": row.get("option_coordinates"),
            "image_width": row.get("image_width"),
            "image_height": row.get("image_height"),
            "coordinate_format": row.get("coordinate_format") or "",
            "option_fields": ["option_coordinates"],  # per-option metadata, permuted with the options
        },
    )
