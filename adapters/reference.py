"""Published reference numbers of the benchmarks, as typed rows (every benchmark folder with a reference.csv).

This module owns the reading and validation of ``tasks/<benchmark>/reference.csv`` (installed as
``lmms_agentic/tasks/<benchmark>/reference.csv``): one row per published number, with the columns

``model, model_id, protocol, variant, judge, metric, value, scale, n, source, notes``

* ``value`` is kept twice: as a float and as the text exactly as printed (``"56.5"``, ``"+0.6"``, ``"0.000"``), so the
  printed precision (``decimals``) is never lost;
* ``scale`` is ``percent`` (0-100, also for percentage-point deltas), ``unit`` (0-1, the Agent-X tables and other
  fractions/coefficients) or ``count`` (an absolute number: item counts, means of counts, words);
* ``n`` is the denominator or number of items when known, else ``None``;
* the key ``(model, protocol, variant, judge, metric)`` is unique within a file (a duplicate is an error).

Arithmetic helpers: ``round_half_even`` rounds an exact fraction the way the published tables were rounded (half
to even; e.g. RoboVista's 1/16 = 6.25 % is printed 6.2 and 81/144 = 56.25 % is printed 56.2), ``printed_as`` says
whether an exact value prints as a row's text, and ``numerators`` lists the k with k/denominator printing as the row's
value.

Loading never guesses: a malformed row raises ``ReferenceFileError`` naming the file, the line and the column.
Nothing is read at import time; ``load_reference`` reads on demand.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from importlib.resources import files
from typing import Literal

__all__ = [
    "COLUMNS",
    "SCALES",
    "ReferenceFileError",
    "ReferenceRow",
    "load_reference",
    "numerators",
    "parse_reference",
    "printed_as",
    "reference_path",
    "referenced_benchmarks",
    "round_half_even",
    "rows_for",
    "single",
]

Scale = Literal["percent", "unit", "count"]

COLUMNS: tuple[str, ...] = ("model", "model_id", "protocol", "variant", "judge", "metric", "value", "scale", "n",
                            "source", "notes")
"""The header every reference file carries, in this order."""
SCALES: tuple[Scale, ...] = ("percent", "unit", "count")
REQUIRED: tuple[str, ...] = ("model", "protocol", "metric", "value", "scale", "source")
"""Columns that may not be empty."""

_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")
Key = tuple[str, str, str, str, str]


class ReferenceFileError(ValueError):
    """A malformed reference file; ``path``, ``line`` (1-based) and ``column`` say where."""

    def __init__(self, path: str, line: int, column: str | None, message: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        where = f"{path}:{line}" + (f": column {column!r}" if column else "")
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class ReferenceRow:
    """One published number.  ``value_text`` is the value exactly as printed; ``value`` its float."""

    model: str
    model_id: str
    protocol: str
    variant: str
    judge: str
    metric: str
    value: float
    value_text: str
    scale: Scale
    n: int | None
    source: str
    notes: str
    line: int = 0
    """Line of the row in its file (1-based, the header is line 1); 0 for rows not read from a file."""

    @property
    def key(self) -> Key:
        """(model, protocol, variant, judge, metric): unique within one benchmark's file."""
        return (self.model, self.protocol, self.variant, self.judge, self.metric)

    @property
    def decimals(self) -> int:
        """Number of printed decimals (``"56.5"`` -> 1, ``"28"`` -> 0, ``"0.000"`` -> 3)."""
        _, _, fraction = self.value_text.partition(".")
        return len(fraction)

    @property
    def exact(self) -> Decimal:
        """The printed value as an exact decimal (no binary rounding)."""
        return Decimal(self.value_text)

    @property
    def fraction(self) -> float:
        """The value on the 0-1 scale (percent / 100); counts are returned unchanged."""
        return self.value / 100.0 if self.scale == "percent" else self.value


def referenced_benchmarks() -> tuple[str, ...]:
    """The registered benchmarks (``tasks/*/benchmark.json``) whose folder ships a ``reference.csv``, sorted."""
    from lmms_agentic.adapters.benchmarks import all_benchmarks

    return tuple(name for name, b in all_benchmarks().items() if (b.folder / "reference.csv").is_file())


def reference_path(benchmark: str) -> str:
    """Display path of a benchmark's file (used in error messages)."""
    return f"tasks/{benchmark}/reference.csv"


def load_reference(benchmark: str) -> list[ReferenceRow]:
    """Every row of ``tasks/<benchmark>/reference.csv``, validated (``ReferenceFileError`` on a malformed row)."""
    known = referenced_benchmarks()
    if benchmark not in known:
        raise ValueError(f"no reference numbers for benchmark {benchmark!r}; benchmarks with a reference.csv: "
                         f"{', '.join(known)}")
    resource = files("lmms_agentic.tasks") / benchmark / "reference.csv"
    try:
        text = resource.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise FileNotFoundError(f"{reference_path(benchmark)}: reference file not found ({resource})") from error
    return parse_reference(text, reference_path(benchmark))


def parse_reference(text: str, path: str = "<reference>") -> list[ReferenceRow]:
    """Parse and validate reference CSV text; ``path`` only labels error messages."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[ReferenceRow] = []
    seen: dict[Key, int] = {}
    start = 1
    try:
        header = next(reader, None)
        if header is None:
            raise ReferenceFileError(path, 1, None, "empty file (expected a header row)")
        if tuple(header) != COLUMNS:
            raise ReferenceFileError(path, 1, None, f"header must be {','.join(COLUMNS)}; got {','.join(header)}")
        start = reader.line_num + 1
        for record in reader:
            line = start
            start = reader.line_num + 1
            if not record or all(not cell.strip() for cell in record):
                continue
            row = _row(record, path, line)
            if row.key in seen:
                raise ReferenceFileError(path, line, None,
                                         f"duplicate key {row.key} (first on line {seen[row.key]})")
            seen[row.key] = line
            rows.append(row)
    except csv.Error as error:
        raise ReferenceFileError(path, start, None, f"CSV syntax error: {error}") from error
    return rows


def _row(record: Sequence[str], path: str, line: int) -> ReferenceRow:
    if len(record) != len(COLUMNS):
        raise ReferenceFileError(path, line, None, f"expected {len(COLUMNS)} fields, got {len(record)}")
    cells = dict(zip(COLUMNS, record, strict=True))
    for column in COLUMNS:
        if cells[column] != cells[column].strip():
            raise ReferenceFileError(path, line, column, f"leading or trailing whitespace in {cells[column]!r}")
    for column in REQUIRED:
        if not cells[column]:
            raise ReferenceFileError(path, line, column, "must not be empty")
    for column in ("protocol", "metric"):
        if not _NAME.match(cells[column]):
            raise ReferenceFileError(path, line, column, f"{cells[column]!r} is not a snake_case name")
    if cells["variant"] and not _NAME.match(cells["variant"]):
        raise ReferenceFileError(path, line, "variant", f"{cells['variant']!r} is not a snake_case name")
    text = cells["value"]
    if not _NUMBER.match(text):
        raise ReferenceFileError(path, line, "value", f"{text!r} is not a plain decimal number")
    try:
        value = float(Decimal(text))
    except InvalidOperation as error:  # pragma: no cover - the pattern above already excludes this
        raise ReferenceFileError(path, line, "value", f"{text!r} is not a number") from error
    if not math.isfinite(value):  # pragma: no cover - ditto
        raise ReferenceFileError(path, line, "value", f"{text!r} is not finite")
    scale = cells["scale"]
    if scale not in SCALES:
        raise ReferenceFileError(path, line, "scale", f"unknown scale {scale!r} (expected one of {', '.join(SCALES)})")
    limit = {"percent": 100.0, "unit": 1.0}.get(scale)
    if limit is not None and abs(value) > limit:
        raise ReferenceFileError(path, line, "value", f"{text} is outside the {scale} scale (|value| <= {limit:g})")
    n: int | None = None
    if cells["n"]:
        if not cells["n"].isdigit() or int(cells["n"]) == 0:
            raise ReferenceFileError(path, line, "n", f"{cells['n']!r} is not a positive integer")
        n = int(cells["n"])
    return ReferenceRow(model=cells["model"], model_id=cells["model_id"], protocol=cells["protocol"],
                        variant=cells["variant"], judge=cells["judge"], metric=cells["metric"], value=value,
                        value_text=text, scale=scale, n=n, source=cells["source"], notes=cells["notes"],
                        line=line)


def rows_for(rows: Iterable[ReferenceRow], *, model: str | None = None, model_id: str | None = None,
             protocol: str | None = None, variant: str | None = None, judge: str | None = None,
             metric: str | None = None, source: str | None = None) -> list[ReferenceRow]:
    """The rows matching every given field exactly (``None`` = any; ``""`` matches only an empty cell)."""
    wanted = {"model": model, "model_id": model_id, "protocol": protocol, "variant": variant, "judge": judge,
              "metric": metric, "source": source}
    filters = {name: value for name, value in wanted.items() if value is not None}
    return [row for row in rows if all(getattr(row, name) == value for name, value in filters.items())]


def single(rows: Iterable[ReferenceRow], *, model: str, metric: str, protocol: str | None = None,
           variant: str | None = "", judge: str | None = None) -> ReferenceRow:
    """Exactly one matching row (``LookupError`` otherwise); ``variant`` defaults to the empty (primary) variant."""
    found = rows_for(rows, model=model, metric=metric, protocol=protocol, variant=variant, judge=judge)
    if len(found) != 1:
        wanted = f"model={model!r} metric={metric!r} protocol={protocol!r} variant={variant!r} judge={judge!r}"
        raise LookupError(f"{len(found)} reference rows match {wanted}")
    return found[0]


def round_half_even(value: Fraction | int, decimals: int) -> Decimal:
    """``value`` rounded exactly (no binary floating point) to ``decimals`` places, ties to even."""
    scaled = Fraction(value) * 10**decimals
    floor = scaled.numerator // scaled.denominator
    rest = scaled - floor
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2 == 1):
        floor += 1
    return Decimal(floor).scaleb(-decimals)


def printed_as(row: ReferenceRow, exact: Fraction | int) -> bool:
    """True if ``exact`` (on the row's scale) rounds half to even to the row's printed value, at its precision."""
    return round_half_even(exact, row.decimals) == row.exact


def numerators(row: ReferenceRow, denominator: int) -> list[int]:
    """Every integer k (negative for deltas) with 100·k/d (percent) or k/d (unit), d = denominator, printed as the row.

    An empty list means the printed value is not such a fraction; several mean the precision cannot tell them apart.
    """
    if row.scale == "count":
        raise ValueError(f"line {row.line}: {row.metric} is a count, not a fraction")
    if denominator <= 0:
        raise ValueError(f"denominator must be positive, got {denominator}")
    factor = 100 if row.scale == "percent" else 1
    return [k for k in range(-denominator, denominator + 1) if printed_as(row, Fraction(factor * k, denominator))]
