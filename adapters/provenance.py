"""What data each benchmark actually used in this process: written into lmms-eval's results file by the host hook.

Filled by the loaders (`adapters.data`, the benchmarks' readers) when a benchmark's data is located and read: the Hub id
and the resolved commit of the snapshot, or the local path and a content fingerprint; the rows read, the rows the paper
has, the records excluded (`LMMS_AGENTIC_SKIP_BAD_RECORDS=1`) and the schema override applied.
`lmms_agentic.harness.host` adds `{"lmms_agentic": {"data": ...}}` to every results file of a run that used our tasks,
and `python -m lmms_agentic report` shows it (a row count different from the paper's is flagged).

Fingerprint of a local copy: SHA-256 over every file's relative path and size, plus the full contents of the table
files (parquet, json, jsonl, arrow); media files (images, videos) are fingerprinted by path and size only, so a
multi-gigabyte copy is fingerprinted in seconds.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

TABLE_SUFFIXES = frozenset({".parquet", ".json", ".jsonl", ".arrow"})
_LOCK = threading.Lock()
_USED: dict[str, dict[str, Any]] = {}


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


def clear() -> None:
    with _LOCK:
        _USED.clear()
