"""What every ``make bench`` section shares: a measured figure beside its target, timers, results on disk, and
the environment each section gets back as it found it.

A section module exposes ``run(quick: bool) -> list[Figure]``; ``perf.__main__`` runs the sections, prints
every figure beside its target, writes ``perf/results/latest.json`` (the figures, the machine, the run's
wall time) and ``perf/results/summary.md`` (the table the README shows).  Sections run in one process and several
point the benchmarks at their synthetic copies through environment variables (``synth.data_env``), so the runner
restores ``os.environ`` after each (``restored_environment``): a section sees only what the user set.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache" / "bench"
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class Figure:
    """One measured figure: ``value`` in ``unit``, beside its ``target`` text; ``ok`` None when there is no target."""

    section: str
    name: str
    value: float | None
    unit: str
    target: str = ""
    ok: bool | None = None
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def shown(self) -> str:
        if self.value is None:
            return "n/a"
        if self.unit == "x":
            return f"{self.value:.2f}x"
        if self.unit == "%":
            return f"{self.value:.0f}%"
        if self.unit in ("ms", "s", "MiB", "req/s"):
            return f"{self.value:,.1f} {self.unit}" if self.value < 100 else f"{self.value:,.0f} {self.unit}"
        return f"{self.value:g} {self.unit}".strip()


def at_most(section: str, name: str, value: float, limit: float, unit: str, detail: str = "",
            **extra: Any) -> Figure:
    shown = f"{limit:g}x" if unit == "x" else f"{limit:g} {unit}"
    return Figure(section, name, value, unit, f"<= {shown}", value <= limit, detail, dict(extra))


def at_least(section: str, name: str, value: float, limit: float, unit: str, detail: str = "",
             **extra: Any) -> Figure:
    shown = f"{limit:g}%" if unit == "%" else f"{limit:g} {unit}"
    return Figure(section, name, value, unit, f">= {shown}", value >= limit, detail, dict(extra))


def info(section: str, name: str, value: float | None, unit: str, detail: str = "", **extra: Any) -> Figure:
    return Figure(section, name, value, unit, "", None, detail, dict(extra))


@dataclass
class Timer:
    """Wall and CPU seconds of what ran inside ``measure()`` blocks, summed."""

    wall: float = 0.0
    cpu: float = 0.0

    @contextmanager
    def measure(self) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.wall += time.perf_counter() - wall
            self.cpu += time.process_time() - cpu


def best_of(repeats: int, function: Callable[[], Any]) -> tuple[float, float]:
    """(min wall seconds, min CPU seconds) of ``function()`` over ``repeats`` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        timer = Timer()
        with timer.measure():
            function()
        walls.append(timer.wall)
        cpus.append(timer.cpu)
    return min(walls), min(cpus)


@contextmanager
def restored_environment() -> Iterator[None]:
    """Run the block, then put ``os.environ`` back as it was: variables the block set or changed are reset, the ones
    it removed come back."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        for key in [key for key in os.environ if key not in saved]:
            del os.environ[key]
        for key, value in saved.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "load_average": load}
