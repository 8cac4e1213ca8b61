"""What a benchmark folder provides: the one interface through which shared tools reach a benchmark's code.

A benchmark is `tasks/<name>/`: `benchmark.json` declares its facts (data source, headline metric, breakdowns,
demo tasks, published protocols; read by `adapters.benchmarks`), and `tasks/<name>/__init__.py` provides its code as
the module attributes of `BenchmarkPackage` below. The registry (`adapters.benchmarks.Benchmark.package`) is the
only place that imports a benchmark by name; it checks the module against this protocol and the metric names against
`check_metric_names`, so a folder that misses a member fails with one message naming the member.

`core` is the harness-neutral part (`tasks/<name>/core/`): release row -> document -> prompt -> reply parsing ->
per-item score -> aggregate, on the standard library, numpy, Pillow and `adapters.core` only (import-linter checks
it in `make lint`). The plugin's extras (data location, schema overrides, bad-record tolerance, media integrity,
provenance, judge cache, loop detection, permutations) wrap it in `tasks/<name>/hooks.py`, never enter it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class BenchmarkPackage(Protocol):
    """`tasks/<name>/__init__.py`: nothing runs at import; every member is a constant or a function."""

    core: ModuleType
    """`tasks/<name>/core`: the harness-neutral core (what an upstream copy of the benchmark carries)."""
    METRICS: tuple[str, ...]
    """Every metric any of its tasks reports, in report order; the task YAMLs' metric lists are checked against it."""

    def load_docs(self) -> Any:
        """Every document in canonical form (a `datasets.Dataset`), located and validated as an evaluation does."""

    def build_mini(self, folder: Path) -> Path:
        """Write the bundled mini split (schema-faithful, self-made) into `folder`; returns the written file."""

    def error_modes(self) -> Any | None:
        """The paper's error-mode study (a `judges.error_modes.ErrorModes`), or None when the paper has none."""

    def example_replies(self, doc: Mapping[str, Any]) -> list[str]:
        """Model replies that exercise the scorer on `doc` (golden tests of exported task folders)."""

    def export_hooks(self) -> ModuleType:
        """`tasks/<name>/upstream.py`, what its upstream export carries (an `adapters.upstream.UpstreamHooks`: the
        thin `utils.py`, the citation and licences, the README and pull-request notes; checked by the exporter)."""


class InterfaceError(TypeError):
    """A benchmark folder does not provide the interface; the message names the folder and the member."""


def check_metric_names(benchmark: str, names: Iterable[str], group_metrics: Iterable[str] = ()) -> tuple[str, ...]:
    """The names, checked: unique, and no metric that a group aggregates inside another name (lmms-eval collects a
    group's metric from its subtasks by substring, so a group's `acc` would also collect `strict_acc`)."""
    names = tuple(names)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise InterfaceError(f"tasks/{benchmark}: METRICS names {', '.join(duplicates)} more than once")
    clashes = [(a, b) for a in dict.fromkeys(group_metrics) for b in names if a != b and a in b]
    if clashes:
        pairs = "; ".join(f"{a!r} is inside {b!r}" for a, b in clashes)
        raise InterfaceError(f"tasks/{benchmark}: a group metric must not be inside another metric name ({pairs}); "
                             "rename one")
    return names


def check_package(benchmark: str, module: ModuleType, group_metrics: Iterable[str] = ()) -> BenchmarkPackage:
    """`module` as a `BenchmarkPackage` (its metric names checked against the metrics its groups aggregate), or an
    `InterfaceError` naming every missing member."""
    members = ("core", "METRICS", "load_docs", "build_mini", "error_modes", "example_replies", "export_hooks")
    missing = [name for name in members if not hasattr(module, name)]
    if missing or not isinstance(module, BenchmarkPackage):
        raise InterfaceError(f"tasks/{benchmark}/__init__.py must provide {', '.join(missing or members)} "
                             "(see adapters/interface.py)")
    check_metric_names(benchmark, module.METRICS, group_metrics)
    return module
