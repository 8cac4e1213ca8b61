"""What data each benchmark actually used in this process: written into lmms-eval's results file by the host hook.

Filled by the loaders (`adapters.data`, the benchmarks' readers) when a benchmark's data is located and read: the Hub id
and the resolved commit of the snapshot, or the local path and a content fingerprint; the rows read, the rows the paper
has, the records excluded (`LMMS_AGENTIC_SKIP_BAD_RECORDS=1`) and the schema override applied.
`lmms_agentic.harness.host` adds `{"lmms_agentic": {"data": ...}}` to every results file of a run that used our tasks,
and `python -m lmms_agentic report` shows it (a row count different from the paper's is flagged).  Facts known only
at the end of a run come from providers (`provide`), asked when the results file is written (`collected`).

Fingerprint of a local copy: SHA-256 over every file's relative path and size, plus the full contents of the table
files (parquet, json, jsonl, arrow); media files (images, videos) are fingerprinted by path and size only, so a
multi-gigabyte copy is fingerprinted in seconds.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

TABLE_SUFFIXES = frozenset({".parquet", ".json", ".jsonl", ".arrow"})
_LOCK = threading.Lock()
_USED: dict[str, dict[str, Any]] = {}
_PROVIDERS: dict[str, Callable[[], dict[str, Any]]] = {}
_FROM_ITEMS: list[tuple[str, Callable[[list[Any]], dict[str, Any]], list[Any]]] = []
FROM_ITEMS_MARK = "__lmms_agentic_results_from_items__"
F = TypeVar("F", bound=Callable[..., Any])


def fingerprint(folder: str | Path) -> str:
    """Content fingerprint of a local dataset folder (see the module docstring)."""
    root = Path(folder)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(".") or "/." in relative:
            continue  # hidden files: caches and lock files of download tools
        digest.update(f"{relative}\0{path.stat().st_size}\0".encode())
        if path.suffix in TABLE_SUFFIXES:
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def snapshot_commit(folder: str | Path) -> str | None:
    """The commit of a Hugging Face cache snapshot (`.../snapshots/<commit>`), None for other folders."""
    path = Path(folder)
    return path.name if path.parent.name == "snapshots" and len(path.name) >= 7 else None


def record(benchmark: str, **facts: Any) -> None:
    """Remember (or update) what `benchmark` used in this process."""
    with _LOCK:
        _USED.setdefault(benchmark, {}).update(facts)


def used() -> dict[str, dict[str, Any]]:
    """A copy of everything recorded so far, by benchmark."""
    with _LOCK:
        return {name: dict(facts) for name, facts in _USED.items()}


def provide(benchmark: str, facts: Callable[[], dict[str, Any]]) -> None:
    """Have `facts()` asked when the results file is written (`collected`), its facts added under `benchmark`: for
    what is known only at the end of a run (a tool runtime's backends used, its failures)."""
    with _LOCK:
        _PROVIDERS[benchmark] = facts


def from_items(benchmark: str, facts: Callable[[list[Any]], dict[str, Any]]) -> Callable[[F], F]:
    """Mark an aggregation function: the plugin hands `facts` the same gathered items after lmms-eval aggregates
    them (`items_aggregated`), and their facts go into the results file under `benchmark` (one level merged: two
    subtasks' `{"per_tool": {...}}` both kept).  The aggregation itself stays a pure function of its items."""

    def mark(func: F) -> F:
        setattr(func, FROM_ITEMS_MARK, (benchmark, facts))
        return func

    return mark


def items_aggregated(aggregation: Any, items: list[Any]) -> None:
    """Called by the plugin after lmms-eval applied `aggregation` to `items`: kept for `collected` if it is marked."""
    mark = getattr(aggregation, FROM_ITEMS_MARK, None)
    if isinstance(mark, tuple):
        with _LOCK:
            _FROM_ITEMS.append((mark[0], mark[1], list(items)))


def _merge(into: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    out = dict(into)
    for key, value in facts.items():
        old = out.get(key)
        out[key] = {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
    return out


def collected() -> dict[str, dict[str, Any]]:
    """What the results file records: everything `record`ed, the facts of the marked aggregations' items, and each
    provider's facts (asked now)."""
    with _LOCK:
        providers, from_items_ = dict(_PROVIDERS), list(_FROM_ITEMS)
    out = used()
    for benchmark, facts_of, items in from_items_:
        out[benchmark] = _merge(out.get(benchmark, {}), facts_of(items))
    for benchmark, facts in providers.items():
        given = facts()
        if given:
            out[benchmark] = _merge(out.get(benchmark, {}), given)
    return out


def clear() -> None:
    with _LOCK:
        _USED.clear()
        _PROVIDERS.clear()
        _FROM_ITEMS.clear()
