"""RoboVista (RSS 2026): 474 five-option robot MCQs. Provides the `adapters.interface.BenchmarkPackage` members:
the harness-neutral `core`, its `METRICS`, and loading, the mini split, error modes, example replies and the
upstream export.

`METRICS` is every name its tasks report: the core's table (`core.task.METRICS`) and the thinking-loop rates the
plugin adds to every task (`adapters.samples.LOOP_VIEWS`); the option-permutation tasks report the shared
permutation metrics. It is computed on first use: the plugin's module loads the data libraries, which this package,
the parent of the harness-neutral core, must not import.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from lmms_agentic.tasks.robovista import core

if TYPE_CHECKING:
    import datasets

    from lmms_agentic.judges.error_modes import ErrorModes


def __getattr__(name: str) -> tuple[str, ...]:
    """`METRICS` (see the module docstring); any other missing name is an `AttributeError`."""
    if name != "METRICS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from lmms_agentic.adapters.samples import LOOP_VIEWS

    return (*core.task.METRICS, *LOOP_VIEWS)


def load_docs() -> datasets.Dataset:
    """Every document in canonical form (a `datasets.Dataset`)."""
    from lmms_agentic.tasks.robovista import hooks

    return hooks.all_docs()


def build_mini(folder: Path) -> Path:
    """Write the bundled mini split into `folder`; returns the parquet file."""
    from lmms_agentic.tasks.robovista import mini

    return mini.write(folder)


def error_modes() -> ErrorModes:
    """The paper's failure analysis (`error_study.ERROR_MODES`)."""
    from lmms_agentic.tasks.robovista.error_study import ERROR_MODES

    return ERROR_MODES


def example_replies(doc: Mapping[str, Any]) -> list[str]:
    """Replies that exercise the scorer on `doc` (the shared MCQ set)."""
    from lmms_agentic.adapters.samples import mcq_example_replies

    return mcq_example_replies(doc)


def export_hooks() -> ModuleType:
    """Its upstream export (`upstream.py`, an `adapters.upstream.UpstreamHooks`): the thin `utils.py`, the citation
    and licences, the README and pull-request notes."""
    from lmms_agentic.tasks.robovista import upstream

    return upstream
