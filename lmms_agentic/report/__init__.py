"""Run reports: one run (`write_report`, `summary`, `compare_runs`) and several models side by side
(`write_multi_report`), plus the comparison with the papers' published numbers that `reproduce` prints.

Modules: ``single`` (the single-run report: pooled variants, breakdowns, letter shares, permutations, charts),
``runs`` (a run as the multi-model report reads it, metrics with clustered standard errors), ``published``
(published numbers vs a run, with a tolerance from both sides' sampling error), ``ranking`` (rank correlations
with bootstrap intervals), ``figures``, ``multi_base`` and ``multi`` (the multi-model report: markdown, CSV, PNG),
``labels`` (what a run is called), ``banner`` (mini-split and partial runs), ``intervals`` (the one interval of an
accuracy), ``hints`` (the cause of Agent-X format errors),
``run_files`` (the one reader of run folders, lmms-eval's and lm-eval's layouts), ``judged`` (per-sample values and
judge coverage), ``caveats`` (versions, partial runs, folder notes, non-MCQ tasks with coverage) and ``compare``
(paired comparison of two runs). ``python -m lmms_agentic report RUN_DIR...`` writes the single-run report for one
folder and the multi-model report for several.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lmms_agentic.report.single import (
    NoResultsError,
    ReportInputError,
    Variant,
    collect,
    latest_results,
    permutation_row,
    records,
    summary,
    write_report,
)

__all__ = ["NoResultsError", "ReportInputError", "Variant", "collect", "compare_runs", "latest_results",
           "permutation_row", "records", "summary", "write_multi_report", "write_report"]


def compare_runs(folder_a: Path, folder_b: Path) -> str:
    """The paired comparison of two runs (``lmms_agentic.report.compare``)."""
    from lmms_agentic.report.compare import compare_runs as compare

    return compare(folder_a, folder_b)


def write_multi_report(folders: Sequence[Path], output: Path | None = None, n_boot: int = 1000,
                       labels: Sequence[str | None] | None = None) -> tuple[Path, str]:
    """The multi-model report (``lmms_agentic.report.multi``, imported on first use: it loads matplotlib)."""
    from lmms_agentic.report.multi import write_multi_report as write

    return write(folders, output, n_boot, labels)
