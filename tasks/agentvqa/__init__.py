"""AgentVQA (five agent domains, four-option MCQs): the benchmark package of `adapters/interface.py` — its
harness-neutral `core`, `METRICS`, and the plugin's loading, mini split, error modes, example replies
and upstream export.

`METRICS` is every name its tasks report: the core's table (`core.task.METRICS`) and the thinking-loop rates the
plugin adds to every task (`adapters.samples.LOOP_VIEWS`). It is computed on first use: the plugin's module loads the
data libraries, which this package, the parent of the harness-neutral core, must not import.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from lmms_agentic.tasks.agentvqa import core

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
    """Every AgentVQA row in canonical form, located and validated as an evaluation loads it."""
    from lmms_agentic.tasks.agentvqa import hooks

    return hooks.all_docs()


def build_mini(folder: Path) -> Path:
    """Write the bundled mini split into `folder`; returns the parquet file."""
    from lmms_agentic.tasks.agentvqa import mini

    return mini.write(folder)


def error_modes() -> ErrorModes:
    """The paper's error-mode study (App. G.1)."""
    from lmms_agentic.tasks.agentvqa.error_study import ERROR_MODES

    return ERROR_MODES


def example_replies(doc: Mapping[str, Any]) -> list[str]:
    """Replies that exercise the MCQ scorer on `doc`."""
    from lmms_agentic.adapters.samples import mcq_example_replies

    return mcq_example_replies(doc)


def export_hooks() -> ModuleType:
    """Its upstream export (`upstream.py`, an `adapters.upstream.UpstreamHooks`): the thin `utils.py`, the citation
    and licences, the README and pull-request notes."""
    from lmms_agentic.tasks.agentvqa import upstream

    return upstream
