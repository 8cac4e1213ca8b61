"""The tool runtime's memo of `local` tools' outputs (`tool_runtime.py`): the key of a call and a bounded LRU."""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from PIL import Image

from lmms_agentic.adapters.agentic.tool_io import ToolOutput


def memo_key(tool: str, arguments: Mapping[str, Any], images: Mapping[str, Image.Image]) -> str:
    """The digest of a call: the tool, its arguments and each image's name, mode, size and pixels."""
    digest = hashlib.sha256(json.dumps([tool, dict(arguments)], sort_keys=True, default=str).encode())
    for name in sorted(images):
        image = images[name]
        digest.update(f"{name}:{image.mode}:{image.size}".encode())
        digest.update(image.tobytes())
    return digest.hexdigest()


def _weight(output: ToolOutput) -> int:
    image = output.image
    pixels = 0 if image is None else image.width * image.height * len(image.getbands())
    return len(output.text.encode("utf-8", "replace")) + pixels


class MemoCache:
    """The memo of local tools' outputs: least recently used first out, at most `max_entries` entries and
    `max_bytes` bytes (`_weight`); an entry larger than `max_bytes` is not kept.  Thread-safe."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries, self.max_bytes, self.bytes = max_entries, max_bytes, 0
        self._entries: OrderedDict[str, tuple[ToolOutput, str, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> tuple[ToolOutput, str] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0], found[1]

    def put(self, key: str, output: ToolOutput, status: str) -> None:
        size = _weight(output)
        with self._lock:
            old = self._entries.pop(key, None)
            self.bytes -= old[2] if old else 0
            if size > self.max_bytes:
                return
            self._entries[key] = (output, status, size)
            self.bytes += size
            while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
                self.bytes -= self._entries.popitem(last=False)[1][2]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0
