"""What happens to records that cannot be used: one error naming every bad record, or an explicit, counted skip.

A release can hold a few unusable records. By default loading stops with ONE error that lists every bad record
(id, field, problem; not only the first) and says how to fix it. With `LMMS_AGENTIC_SKIP_BAD_RECORDS=1` the bad
records are excluded instead: the run goes on, and their count and ids are written into the results file
(`adapters.provenance`, through the lmms-eval hook) and logged once, never silently.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from lmms_agentic.adapters.core.schema import RecordError

SKIP_ENV = "LMMS_AGENTIC_SKIP_BAD_RECORDS"
SHOWN = 50
log = logging.getLogger("lmms_agentic")
T = TypeVar("T")
U = TypeVar("U")


class BadRecordsError(RecordError):
    """Several records cannot be used; the message lists each (up to SHOWN) and the fix."""

    def __init__(self, benchmark: str, exclusions: list[Exclusion]) -> None:
        self.exclusions = exclusions
        first = exclusions[0]
        super().__init__(benchmark, first.record_id, first.field_name, first.problem)
        lines = [f"  - record {e.record_id!r}, field {e.field_name!r}: {e.problem}" for e in exclusions[:SHOWN]]
        if len(exclusions) > SHOWN:
            lines.append(f"  ... and {len(exclusions) - SHOWN} more")
        self.args = (
            f"{benchmark}: {len(exclusions)} record(s) cannot be used:\n" + "\n".join(lines) + "\n"
            f"Fix: correct the data (or map renamed fields and labels in a schema override, see the benchmark's "
            f"README), or set {SKIP_ENV}=1 to exclude these records; their ids are then written into the results "
            f"file and the scores are not comparable with the paper's.",
        )

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Exclusion:
    record_id: str
    field_name: str
    problem: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.record_id, "field": self.field_name, "problem": self.problem}


def skip_enabled(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(SKIP_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def screen(benchmark: str, items: Iterable[T], convert: Callable[[T], U],
           environ: Mapping[str, str] | None = None) -> tuple[list[U], list[Exclusion]]:
    """`convert` every item; a `RecordError` marks the item bad. Raises `BadRecordsError` listing every bad item,
    unless skipping is enabled, in which case the good results and the exclusions are returned (and logged)."""
    good: list[U] = []
    bad: list[Exclusion] = []
    for item in items:
        try:
            good.append(convert(item))
        except BadRecordsError as exc:
            bad.extend(exc.exclusions)
        except RecordError as exc:
            bad.append(Exclusion(exc.record_id, exc.field_name, exc.problem))
    if bad and not skip_enabled(environ):
        raise BadRecordsError(benchmark, bad)
    if bad:
        log.warning("%s: excluded %d bad record(s) (%s=1): %s", benchmark, len(bad), SKIP_ENV,
                    ", ".join(e.record_id for e in bad[:SHOWN]))
    return good, bad


def duplicates(benchmark: str, ids: Iterable[str]) -> list[Exclusion]:
    """Every id after its first occurrence, as an exclusion (the first copy is kept when skipping)."""
    seen: set[str] = set()
    repeated = []
    for record_id in ids:
        if record_id in seen:
            repeated.append(Exclusion(record_id, "id", "occurs more than once"))
        seen.add(record_id)
    return repeated
