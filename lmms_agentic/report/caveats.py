"""The lines every report puts before its numbers: which harness and versions wrote the run, whether it is partial
(``--limit``), and what reading the folder combined; plus the table of non-MCQ tasks with the judge coverage of each
judged number.

Versions: lm-eval records its own (``lm_eval_version``). lmms-eval's ``lmms_eval_version`` is the git branch and
commit of the folder lmms-eval was started in (for a run started in this checkout: the plugin's commit), so the
lmms-eval release is read from what lmms-agentic adds to the results file (``lmms_agentic.lmms_eval``) or from
`reproduce`'s manifest, and is "not recorded" otherwise, with the recorded string shown for what it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.report.judged import coverage
from lmms_agentic.report.run_files import LM_EVAL, top_level


def versions_line(results: Mapping[str, Any], manifest: Mapping[str, Any] | None = None) -> str:
    """``- harness: lmms-eval 0.7.3; lmms-agentic 0.1.0`` (module docstring)."""
    harness = str(results.get("harness") or "lmms-eval")
    plugin = results.get("lmms_agentic") or {}
    known = ((manifest or {}).get("versions") or {}) if manifest else {}
    if harness == LM_EVAL:
        version = str(results.get("lm_eval_version") or known.get("lm_eval") or "not recorded")
    else:
        version = str(plugin.get("lmms_eval") or known.get("lmms_eval") or "not recorded")
        recorded = results.get("lmms_eval_version")
        if version == "not recorded" and recorded:
            version += (f" (the results file's lmms_eval_version {str(recorded)!r} is the git branch and commit of "
                        "the folder lmms-eval was started in, not lmms-eval's release)")
    return f"- harness: {harness} {version}; lmms-agentic {plugin.get('version') or 'not recorded'}"


def partial_line(results: Mapping[str, Any]) -> str | None:
    """A warning line for a ``--limit`` run (None for a full run)."""
    limit = (results.get("config") or {}).get("limit")
    if limit is None:
        return None
    return (f"- **PARTIAL RUN**: --limit {limit} (at most {limit} items per task); its numbers are not comparable "
            "with published full-set numbers")


def header_lines(results: Mapping[str, Any], notes: Sequence[str] = (),
                 manifest: Mapping[str, Any] | None = None) -> list[str]:
    """The versions line, the partial-run warning and the folder notes, as markdown list items."""
    lines = [versions_line(results, manifest)]
    partial = partial_line(results)
    if partial:
        lines.append(partial)
    lines += [f"- note: {note}" for note in notes]
    return lines


def _value(value: float, scale: str) -> str:
    """Percent-scale values with one decimal, 0-1 scale values with two (as each benchmark's paper prints them)."""
    return "n/a" if value != value else (f"{value:.1f}" if scale == "percent" else f"{value:.2f}")


def other_tasks(results: Mapping[str, Any], shown: set[str],
                lines_of: Callable[[str], Iterable[Mapping[str, Any]]]) -> list[str]:
    """The harness's numbers for the top-level tasks and groups without MCQ records (e.g. Agent-X), each judged
    number with its judge coverage (``lines_of(task)``: the sample lines of a task and its subtasks)."""
    rows: list[str] = []
    low: list[str] = []
    for name in sorted(n for n in top_level(results) if n not in shown):
        row = results["results"][name]
        owner = benchmarks.benchmark_of_task(name)
        scale = owner.scale if owner is not None else "percent"
        metrics = {k.removesuffix(",none"): v for k, v in row.items()
                   if k.endswith(",none") and "_stderr" not in k and isinstance(v, int | float)}
        if not metrics:
            continue
        lines = list(lines_of(name))
        cells = []
        for metric, value in sorted(metrics.items()):
            cell = f"{metric} {_value(float(value), scale)}"
            found = coverage(lines, metric) if lines else None
            if found is not None:
                cell += f" ({found.text()})"
                if found.low:
                    low.append(f"{name} {metric}")
            cells.append(cell)
        rows.append(f"| {name} | {scale} | " + ", ".join(cells) + " |")
    if not rows:
        return []
    out = ["", "## Other tasks (the harness's numbers, on each benchmark's scale; judged metrics with their judge "
           "coverage)", ""]
    if low:
        out += [f"**Low judge coverage** ({len(low)} judged numbers under 95% of their rows scored: "
                f"{', '.join(low[:6])}{', ...' if len(low) > 6 else ''}): each averages only the rows the judge "
                "scored; set a reachable judge (LMMS_AGENTIC_JUDGE_PRESET or LMMS_AGENTIC_JUDGE_BASE_URL) and "
                "`rescore` the run.", ""]
    return [*out, "| task | scale | metrics |", "|---|---|---|", *rows]
