"""Persistent, content-addressed cache of parsed judge replies.

Owns: where a judge answer is stored, how it is written safely by many processes at once, how damaged
entries are recognised, and the hit/miss counters.

Design: one JSON file per key, ``<root>/<key[:2]>/<key>.json``, where the key is the SHA-256 of (template id,
version and digest, judge model, the full request body: messages, temperature, max_tokens, response format,
extra fields); see ``client.request_key``.  A writer dumps the entry to a unique temporary file in the same
directory and ``os.replace``s it onto the final name; ``os.replace`` is atomic on POSIX and Windows, so a reader
sees either no file or a complete one, never a partial write.  Several ranks (processes) writing the same key
write the same answer and the last rename wins; different keys never touch the same file.  Why not SQLite with
WAL: it needs shared-memory locking that breaks on NFS/Lustre home and scratch directories (common on GPU
clusters), serialises writers, and a single damaged database file loses every answer; per-key files need no
locks, degrade one entry at a time, can be inspected with ``cat`` and pruned with ``find``, and a crash leaves at
most an ignored ``.tmp-*`` file.  Cost: one small file per judge call (a full Agent-X run is ~10k files), sharded
over 256 sub-directories.

An entry is valid only if it decodes to a dict with the current ``format``, its own ``key`` and a ``raw_reply``
string; anything else (truncated by a power loss, edited by hand, an old format) is logged, counted as
``corrupt`` and treated as a miss, and the next successful answer overwrites it.  Only replies that parsed are
stored (the client never caches transport errors, refusals or parse failures).  Entries hold no headers and no
key.  Files are written without fsync: a process crash cannot produce a partial entry; a power loss can, and is
then detected as corrupt.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["CACHE_FORMAT", "CacheStats", "JudgeCache"]

log = logging.getLogger(__name__)
CACHE_FORMAT = 1
_KEY = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class CacheStats:
    """Counters since the cache object was created."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    corrupt: int = 0
    """Entries found damaged (also counted as misses)."""

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class JudgeCache:
    """Per-key JSON files under ``root`` (created on first write).  Thread- and process-safe."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()
        self._lock = threading.Lock()
        self._counts = {"hits": 0, "misses": 0, "writes": 0, "corrupt": 0}

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.root)!r})"

    def path(self, key: str) -> Path:
        """File that holds ``key``."""
        if not _KEY.fullmatch(key):
            raise ValueError(f"cache keys are 64 hex digits, got {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    @property
    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(**self._counts)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None on a miss (including a corrupt entry, which is logged)."""
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._count("misses")
            return None
        except OSError as err:
            return self._corrupt(path, f"unreadable ({err.__class__.__name__})")
        try:
            entry = json.loads(text)
        except ValueError:
            return self._corrupt(path, "not valid JSON")
        if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
            return self._corrupt(path, "not a cache entry of the current format")
        if entry.get("key") != key or not isinstance(entry.get("raw_reply"), str):
            return self._corrupt(path, "key mismatch or missing raw_reply")
        self._count("hits")
        return entry

    def _corrupt(self, path: Path, why: str) -> dict[str, Any] | None:
        log.warning("judge cache: skipping corrupt entry %s (%s); it is treated as a miss and will be rewritten",
                    path, why)
        with self._lock:
            self._counts["corrupt"] += 1
            self._counts["misses"] += 1
        return None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Store ``entry`` (JSON-serialisable) under ``key`` atomically (temp file + os.replace)."""
        path = self.path(key)
        record = {**entry, "format": CACHE_FORMAT, "key": key, "written_at": time.time()}
        data = json.dumps(record, ensure_ascii=False, sort_keys=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._count("writes")

    def keys(self) -> Iterator[str]:
        """Keys of the entries present on disk (valid or not)."""
        if not self.root.is_dir():
            return
        for path in sorted(self.root.glob("??/*.json")):
            if _KEY.fullmatch(path.stem):
                yield path.stem

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def __len__(self) -> int:
        return sum(1 for _ in self.keys())
