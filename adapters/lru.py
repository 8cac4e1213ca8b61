"""The one in-process LRU cache: decoded images per question (`adapters.media`) and sampled video frames
(`adapters.frames`), so the rows of a question under option permutations decode their media once per run.

Thread-safe (lmms-eval scores documents in a thread pool), counts hits and misses, and can be switched off
(the media benchmark compares both). Values are returned as stored: callers store immutable values or copy.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most `max_entries` values, least recently used evicted first."""

    def __init__(self, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be positive, got {max_entries}")
        self.max_entries = max_entries
        self.entries: OrderedDict[K, V] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.enabled = True
        self.lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self.lock:
            if not self.enabled or key not in self.entries:
                return None
            self.entries.move_to_end(key)
            self.hits += 1
            return self.entries[key]

    def put(self, key: K, value: V) -> None:
        with self.lock:
            self.misses += 1
            if not self.enabled:
                return
            self.entries[key] = value
            while len(self.entries) > self.max_entries:
                self.entries.popitem(last=False)

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        """The cached value, or `load()` stored under `key` (loading happens outside the lock)."""
        found = self.get(key)
        if found is not None:
            return found
        value = load()
        self.put(key, value)
        return value

    def newest(self, predicate: Callable[[K], bool]) -> V | None:
        """The most recently used value whose key satisfies `predicate` (no hit is counted)."""
        with self.lock:
            for key in reversed(self.entries):
                if predicate(key):
                    return self.entries[key]
        return None

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "cached": len(self.entries)}

    def configure(self, enabled: bool = True, clear: bool = True) -> None:
        with self.lock:
            self.enabled = enabled
            if clear:
                self.entries.clear()
                self.hits = self.misses = 0
