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

Integrity: every entry carries ``checksum``, an HMAC-SHA256 of its own canonical JSON (sorted keys, ASCII, compact)
without that field, keyed with the cache's own secret: 32 random bytes in ``<root>/.hmac-key`` (hex, mode 0600,
created atomically by the first writer; several ranks sharing the folder share it).  Files are written as ASCII
JSON (``ensure_ascii``), so any stray byte is detectable.  An entry is served only if the file decodes, is a JSON
object of the current ``format``, names its own ``key``, holds a ``raw_reply`` string, its checksum matches under
this cache's key, and (when the caller says what it expects) its template id, version, digest and requested model
are the request's.  Anything else -- a non-UTF-8 or truncated file (power loss), a hand-edited entry (also one whose
checksum was recomputed: a plain hash anyone can redo, a keyed one only the holder of the key file), an entry copied
in from another cache (another key), every entry once the key file is gone, an entry of an older format (format 2
had an unkeyed SHA-256, format 1 none), another request's answer -- is logged (the first few at WARNING), counted
as ``corrupt`` and treated as a miss: the client asks the judge again and the next answer atomically replaces the
file.  What the key does not protect against: someone who can read ``.hmac-key`` (the cache's owner) can sign any
entry; the cache is an integrity check, not a security boundary against its owner.  To share a cache between users,
share the folder with its key file.  Only replies that parsed are stored (the client never caches transport
errors, refusals, ambiguous or unparsable replies, or ``judge_unavailable``).  Entries hold no headers and no key,
and the client removes every known secret from a reply before it is stored.
Files are written without fsync: a killed process cannot leave a partial entry (the temporary file is ignored);
a power loss can, and it then fails its checksum.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
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

__all__ = ["CACHE_FORMAT", "KEY_FILE", "CacheStats", "JudgeCache", "entry_checksum"]

log = logging.getLogger(__name__)
CACHE_FORMAT = 3
KEY_FILE = ".hmac-key"
_SECRET = re.compile(rb"[0-9a-f]{64}")
_KEY = re.compile(r"[0-9a-f]{64}")
_LOUD_CORRUPT = 5  # damaged entries logged at WARNING per cache object; later ones at DEBUG


def entry_checksum(record: Mapping[str, Any], secret: bytes) -> str:
    """HMAC-SHA256 under ``secret`` of ``record`` without its ``checksum`` field, over canonical JSON (sorted keys,
    ASCII, compact)."""
    payload = {k: v for k, v in record.items() if k != "checksum"}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return "hmac-sha256:" + hmac.new(secret, blob.encode("ascii"), hashlib.sha256).hexdigest()


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
        self._root = str(self.root)
        self._lock = threading.Lock()
        self._counts = {"hits": 0, "misses": 0, "writes": 0, "corrupt": 0}
        self._warned_old_format = False
        self._secret: bytes | None = None
        self._warned_key = False

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.root)!r})"

    def path(self, key: str) -> Path:
        """File that holds ``key``."""
        if not _KEY.fullmatch(key):
            raise ValueError(f"cache keys are 64 hex digits, got {key!r}")
        return self.root / key[:2] / f"{key}.json"

    @property
    def key_file(self) -> Path:
        """The file holding this cache's HMAC key."""
        return self.root / KEY_FILE

    def _load_secret(self, create: bool) -> bytes | None:
        """This cache's HMAC key; created (atomically: first writer wins) when ``create``.  None when there is
        none yet or the key file is damaged (then every entry is a miss and writes fail with the fix)."""
        if self._secret is not None:
            return self._secret
        path = self.key_file
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            if not create:
                return None
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-key-")  # (mode 0600)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(os.urandom(32).hex().encode("ascii"))
                try:
                    os.link(tmp, path)  # atomic, and never replaces the key another rank made first
                except FileExistsError:
                    pass
                except OSError:  # a file system without hard links
                    if not path.exists():
                        os.replace(tmp, path)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            data = path.read_bytes()
        secret = data.strip()
        if not _SECRET.fullmatch(secret):
            if not self._warned_key:
                self._warned_key = True
                log.warning("judge cache: the key file %s is damaged; delete it (every entry is then re-requested "
                            "once and signed with a new key)", path)
            return None
        self._secret = secret
        return secret

    def checksum(self, record: Mapping[str, Any]) -> str:
        """``record``'s checksum under this cache's key (creating the key file if needed)."""
        secret = self._load_secret(create=True)
        if secret is None:
            raise ValueError(f"the judge cache key file {self.key_file} is damaged: delete it")
        return entry_checksum(record, secret)

    def _count(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    @property
    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(**self._counts)

    def get(self, key: str, expect: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
        """The stored entry, or None on a miss.  A damaged or inconsistent entry (see the module docstring) is
        logged, counted as ``corrupt`` and is a miss.  ``expect``: fields the entry must hold with these values
        (e.g. the template id and version of the request); a mismatch is treated like damage."""
        if not _KEY.fullmatch(key):
            raise ValueError(f"cache keys are 64 hex digits, got {key!r}")
        file = os.path.join(self._root, key[:2], key + ".json")  # (no pathlib: a rerun reads thousands)
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            self._count("misses")
            return None
        except OSError as err:
            return self._corrupt(Path(file), f"unreadable ({err.__class__.__name__})")
        try:
            entry = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as err:
            return self._corrupt(Path(file), f"not UTF-8 text (byte {data[err.start]:#04x} at offset {err.start})")
        except ValueError:
            return self._corrupt(Path(file), "not valid JSON (truncated or damaged)")
        if not isinstance(entry, dict):
            return self._corrupt(Path(file), "not a JSON object")
        if entry.get("format") != CACHE_FORMAT:
            return self._corrupt(Path(file), f"format {entry.get('format')!r}, not {CACHE_FORMAT}", old=True)
        if entry.get("key") != key or not isinstance(entry.get("raw_reply"), str):
            return self._corrupt(Path(file), "key mismatch or missing raw_reply")
        secret = self._load_secret(create=False)
        if secret is None:
            return self._corrupt(Path(file), f"no usable key file {KEY_FILE} beside it (copied from another cache?)")
        try:
            intact = hmac.compare_digest(str(entry.get("checksum")), entry_checksum(entry, secret))
        except (ValueError, TypeError):  # NaN/Infinity or a non-ASCII checksum: not an entry this module wrote
            intact = False
        if not intact:
            return self._corrupt(Path(file), "checksum mismatch under this cache's key (edited, damaged or copied "
                                             "from another cache)")
        for field, value in (expect or {}).items():
            if entry.get(field) != value:
                return self._corrupt(Path(file), f"{field} is {entry.get(field)!r}, the request's is {value!r}")
        self._count("hits")
        return entry

    def discard(self, key: str, why: str) -> None:
        """Turn the last ``get`` of ``key`` from a hit into a corrupt miss (the caller found the entry unusable,
        e.g. its reply no longer parses).  The file stays until the next answer replaces it."""
        with self._lock:
            self._counts["hits"] = max(0, self._counts["hits"] - 1)
        self._corrupt(self.path(key), why)

    def _corrupt(self, path: Path, why: str, *, old: bool = False) -> dict[str, Any] | None:
        with self._lock:
            self._counts["corrupt"] += 1
            self._counts["misses"] += 1
            n = self._counts["corrupt"]
            first_old = old and not self._warned_old_format
            if old:
                self._warned_old_format = True
        if old:
            if first_old:
                log.warning("judge cache %s: entries written by an older version (%s) are re-requested once and "
                            "replaced", self.root, why)
            else:
                log.debug("judge cache: old-format entry %s (%s) is a miss", path, why)
            return None
        note = " (further damaged entries are logged at DEBUG)" if n == _LOUD_CORRUPT else ""
        log.log(logging.WARNING if n <= _LOUD_CORRUPT else logging.DEBUG,
                "judge cache: skipping corrupt entry %s (%s); it is treated as a miss, re-requested and rewritten%s",
                path, why, note)
        return None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Store ``entry`` (JSON-serialisable) under ``key`` atomically (temp file + os.replace), with its
        checksum.  Raises OSError (disk full, read-only) or ValueError (not serialisable as strict JSON)."""
        path = self.path(key)
        record = {**entry, "format": CACHE_FORMAT, "key": key, "written_at": time.time()}
        record.pop("checksum", None)
        record["checksum"] = self.checksum(record)
        data = json.dumps(record, ensure_ascii=True, sort_keys=True, allow_nan=False).encode("ascii")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "wb") as handle:
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
