"""The banner of a run that is not a result: smoke data (the bundled mini split), a partial run (``--limit``, or
fewer items evaluated than the task has) or a partial data copy (fewer rows read than the benchmark has).

It is read from the results file: what lmms-agentic records of the data each benchmark used
(``lmms_agentic.data.<benchmark>``: ``kind``, the rows read, ``expected_rows``), ``config.limit`` and the harness's
``n-samples`` (``original`` and ``effective`` items per task). Every report puts ``markdown`` lines first, the
terminal prints ``lines``, and every chart of such a run carries ``watermark`` diagonally across it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lmms_agentic.adapters import benchmarks


@dataclass(frozen=True)
class Banner:
    """What makes a run not a result: ``entries`` (a heading such as ``SMOKE DATA`` and the sentence), whether it
    read a mini split, whether it is partial."""

    entries: tuple[tuple[str, str], ...]
    mini: bool
    partial: bool

    @property
    def lines(self) -> list[str]:
        """One terminal line per entry: ``SMOKE DATA — mini split of agentvqa (15 of 1,000 rows): not a result``."""
        return [f"{head} — {text}" for head, text in self.entries]

    @property
    def watermark(self) -> str | None:
        if self.mini:
            return "mini split — not a result" + (" (partial run)" if self.partial else "")
        return "partial run — not a result" if self.partial else None

    @property
    def tag(self) -> str:
        """What a table cell adds to the run's label (empty for a full run)."""
        return " [mini split]" if self.mini else " [partial run]" if self.partial else ""

    def markdown(self, label: str = "") -> list[str]:
        """One block-quote line per sentence, in bold (``label`` names the run in a multi-model report)."""
        prefix = f"{label}: " if label else ""
        return [f"> **{head} — {prefix}{text}**" for head, text in self.entries]


def _rows(value: int) -> str:
    return f"{value:,}"


def _expected(name: str, facts: Mapping[str, Any]) -> int | None:
    expected = facts.get("expected_rows")
    if isinstance(expected, int) and not isinstance(expected, bool):
        return expected
    owner = benchmarks.all_benchmarks().get(name)
    return owner.expected_rows if owner is not None else None


def _data_lines(results: Mapping[str, Any]) -> tuple[list[tuple[str, str]], bool, bool]:
    data = (results.get("lmms_agentic") or {}).get("data") or {}
    lines: list[tuple[str, str]] = []
    mini = partial = False
    for name, facts in sorted(data.items()):
        if not isinstance(facts, Mapping):
            continue
        rows = facts.get("usable_rows", facts.get("rows"))
        rows = rows if isinstance(rows, int) and not isinstance(rows, bool) else None
        expected = _expected(name, facts)
        count = (f"{_rows(rows)} of {_rows(expected)} rows" if rows is not None and expected is not None else
                 f"{_rows(rows)} rows" if rows is not None else "")
        if facts.get("kind") == "mini":
            mini = True
            lines.append(("SMOKE DATA", f"mini split of {name}{f' ({count})' if count else ''}: not a result"))
        elif rows is not None and expected is not None and rows < expected:
            partial = True
            lines.append(("PARTIAL DATA", f"{name}: {count} read ({facts.get('chosen_by') or 'local copy'}): "
                          "not comparable with published numbers"))
    return lines, mini, partial


def _full_sizes(results: Mapping[str, Any]) -> str:
    data = (results.get("lmms_agentic") or {}).get("data") or {}
    sizes = [f"{name} has {_rows(n)}" for name in sorted(data)
             if isinstance(data[name], Mapping) and (n := _expected(name, data[name])) is not None]
    return f" ({', '.join(sizes)})" if sizes else ""


def _sample_counts(results: Mapping[str, Any]) -> list[tuple[str, int, int]]:
    """(task, effective, original) for tasks that evaluated fewer items than they have (``n-samples``)."""
    found = []
    for task, counts in sorted((results.get("n-samples") or {}).items()):
        if not isinstance(counts, Mapping):
            continue
        original, effective = counts.get("original"), counts.get("effective")
        if isinstance(original, int) and isinstance(effective, int) and effective < original:
            found.append((task, effective, original))
    return found


def banner(results: Mapping[str, Any]) -> Banner:
    """The banner of a run's results (module docstring)."""
    lines, mini, partial = _data_lines(results)
    limit = (results.get("config") or {}).get("limit")
    short = _sample_counts(results)
    if limit is not None:
        partial = True
        evaluated = "; ".join(f"{task} {e} of {_rows(o)}" for task, e, o in short[:4])
        lines.append(("PARTIAL RUN", f"--limit {limit}: at most {limit} items per task"
                      f"{f' ({evaluated})' if evaluated else _full_sizes(results)}: not a result"))
    elif short:
        partial = True
        listing = "; ".join(f"{task} {e} of {_rows(o)}" for task, e, o in short[:4])
        more = f" and {len(short) - 4} more tasks" if len(short) > 4 else ""
        lines.append(("PARTIAL RUN", f"fewer items evaluated than the tasks have ({listing}{more}): not a result"))
    return Banner(tuple(lines), mini, partial)
