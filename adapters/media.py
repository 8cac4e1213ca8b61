"""Image handling shared by every benchmark: loading from dataset cells, decode once.

`decoded_once(key, load)` keeps the decoded (and preprocessed) images of recently used documents in a small
in-process LRU, so the k rows of one question under option permutations (which share their media) decode them
once per run. Tasks key it by the question's group id.

Integrity. lmms-eval sets Pillow's `ImageFile.LOAD_TRUNCATED_IMAGES = True` for the whole process, under which a
half-written PNG decodes with black rows and a 64-byte PNG header as an all-black image, silently. So:

* `check_image_cell(cell, where)` (fast, no decode for PNG, JPEG and WebP: it walks the file's own structure --
  PNG chunks with their CRCs up to IEND, JPEG markers and scans up to EOI, the RIFF declared size) raises
  `MediaError` when an image is empty, truncated, corrupt, unreadable or missing; other formats are decoded
  strictly. Loaders call it for every image before any model runs.
* `as_pil(cell, where=...)` runs the same check, opens the image lazily (the size is read from the header), and makes
  its decode strict whatever the global flag says (the flag is switched off under a lock for that image's decode),
  so anything the structure check cannot see (a corrupt compressed stream) still fails, naming the record.

`MediaError` is a `RecordError` (benchmark, record id, field, problem), so a loader's bad-record policy can list or
skip it; `where` is the caller's "<benchmark> record '<id>', <field>" text.

Files. An image file is read only when it is a regular file (a named pipe would block the run, a device such as
/dev/zero never ends), opened without blocking and read up to `MAX_IMAGE_BYTES`; the error for a file that is no
image never quotes its bytes (it could be any file). Paths are read as given: loaders resolve a dataset's relative
paths inside its folder first (`adapters.data.resolve_media`).
"""

from __future__ import annotations

import ast
import errno
import io
import os
import re
import stat
import struct
import threading
import weakref
import zlib
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any

from PIL import Image, ImageFile, UnidentifiedImageError

from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.lru import LruCache

_WHERE = re.compile(r"(?P<benchmark>[\w.-]+) (?:record|task|item) (?P<id>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"),"
                    r" (?:field )?(?P<field>.+)")


class MediaError(RecordError):
    """A record's media item is missing, empty, truncated, corrupt or unreadable.

    `where` is the caller's location text, "<benchmark> record '<id>', <field>" (e.g. "robovista record 'q1',
    images[0]"); it is split into the `RecordError` parts, so the message reads
    "<benchmark> record '<id>', field '<field>': <problem>" and a bad-record policy can list or skip the record."""

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        match = _WHERE.fullmatch(where.strip())
        if match is None:
            super().__init__("media", where, "", problem)
            self.args = (f"{where}: {problem}",)
            return
        try:
            record_id = str(ast.literal_eval(match["id"]))
        except (ValueError, SyntaxError):
            record_id = match["id"].strip("'\"")
        super().__init__(match["benchmark"], record_id, match["field"], problem)


# --------------------------------------------------------------------------- integrity

_PNG = b"\x89PNG\r\n\x1a\n"
_STRICT = threading.RLock()
#: formats whose truncation `image_problem` detects from the file structure, without decoding
STRUCTURE_CHECKED = frozenset({"PNG", "JPEG", "WEBP"})


def _png_problem(data: bytes) -> str | None:
    n, pos, seen = len(data), len(_PNG), b""
    while True:
        if pos + 8 > n:
            after = f" after chunk {seen.decode('latin-1')!r}" if seen else ""
            return f"is truncated: the PNG data ends at byte {n}{after}, before its IEND chunk"
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        end = pos + 12 + length
        name = kind.decode("latin-1")
        if end > n:
            return (f"is truncated: the PNG data ends inside chunk {name!r} (it declares {length} bytes at offset "
                    f"{pos}; the data ends at byte {n})")
        if zlib.crc32(data[pos + 4:pos + 8 + length]) != struct.unpack(">I", data[end - 4:end])[0]:
            return f"is corrupt: chunk {name!r} at offset {pos} fails its CRC"
        if kind == b"IEND":
            return None
        seen, pos = kind, end


def _jpeg_problem(data: bytes) -> str | None:
    n, pos = len(data), 2

    def truncated(inside: str) -> str:
        return f"is truncated: the JPEG data ends {inside} at byte {n}, before its end-of-image marker"

    while True:
        if pos >= n:
            return truncated("between segments")
        if data[pos] != 0xFF:
            return f"is corrupt: no JPEG marker at byte {pos}"
        while pos < n and data[pos] == 0xFF:  # fill bytes
            pos += 1
        if pos >= n:
            return truncated("inside a marker")
        marker = data[pos]
        pos += 1
        if marker == 0xD9:  # EOI
            return None
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:  # RSTn, TEM: no length
            continue
        if pos + 2 > n:
            return truncated("inside a segment header")
        length = struct.unpack(">H", data[pos:pos + 2])[0]
        if length < 2:
            return f"is corrupt: JPEG segment 0xFF{marker:02X} at byte {pos - 2} has length {length}"
        if pos + length > n:
            return truncated(f"inside segment 0xFF{marker:02X}")
        pos += length
        if marker != 0xDA:  # not a start of scan
            continue
        while True:  # entropy-coded data: FF00 is a stuffed byte, FFD0-FFD7 restart markers; anything else ends it
            found = data.find(b"\xff", pos)
            if found < 0 or found + 1 >= n:
                return truncated("inside the image data")
            following = data[found + 1]
            if following == 0x00 or 0xD0 <= following <= 0xD7:
                pos = found + 2
            elif following == 0xFF:
                pos = found + 1
            else:
                pos = found
                break


def image_problem(data: bytes) -> str | None:
    """What is wrong with encoded image bytes, judged from their structure without decoding ("is empty", "is
    truncated: ...", "is corrupt: ..."), or None when nothing is (or the format has no structure check: see
    `STRUCTURE_CHECKED`)."""
    if not data:
        return "is empty (0 bytes)"
    if data.startswith(_PNG):
        return _png_problem(data)
    if data.startswith(b"\xff\xd8\xff"):
        return _jpeg_problem(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 12:
        declared = struct.unpack("<I", data[4:8])[0] + 8
        if len(data) < declared:
            return f"is truncated: the WebP data declares {declared} bytes, there are {len(data)}"
        return None
    return None


_FILE_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in words ("a named pipe", "a character device", ...)."""
    return next((name for test, name in _FILE_KINDS if test(mode)), "an unknown kind of file")


#: the largest image file read (a screenshot is a few MB; anything near this is not an image of a benchmark)
MAX_IMAGE_BYTES = 256 * 1024 * 1024


def _cap() -> str:
    return f"{MAX_IMAGE_BYTES // 2**20} MiB" if MAX_IMAGE_BYTES >= 2**20 else f"{MAX_IMAGE_BYTES} bytes"


def _read_image_file(file: Path, where: str, *, missing_as_record_error: bool) -> bytes:
    """The bytes of an image file, refusing what is not a regular file (a named pipe would block the run, a device
    such as /dev/zero never ends) and files over MAX_IMAGE_BYTES; opened without blocking, checked on the open
    handle, read with a bound."""
    try:
        handle = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        if missing_as_record_error:
            raise MediaError(where, f"image file {file} does not exist") from None
        raise FileNotFoundError(f"{where}: image file {file} does not exist") from None
    except OSError as err:
        loop = " (a symbolic link loop)" if err.errno == errno.ELOOP else ""
        raise MediaError(where, f"image file {file} cannot be read{loop} ({err.__class__.__name__}: "
                                f"{err.strerror or err})") from None
    try:
        facts = os.fstat(handle)
        if not stat.S_ISREG(facts.st_mode):
            raise MediaError(where, f"image file {file} is not a regular file ({file_kind(facts.st_mode)})")
        if facts.st_size > MAX_IMAGE_BYTES:
            raise MediaError(where, f"image file {file} has {facts.st_size} bytes, more than the {_cap()} an image "
                                    "may have")
        with os.fdopen(handle, "rb", closefd=False) as reader:
            data = reader.read(MAX_IMAGE_BYTES + 1)
    except OSError as err:
        raise MediaError(where, f"image file {file} cannot be read ({err.__class__.__name__}: "
                                f"{err.strerror or err})") from None
    finally:
        os.close(handle)
    if len(data) > MAX_IMAGE_BYTES:  # grew while being read
        raise MediaError(where, f"image file {file} has more than the {_cap()} an image may have")
    return data


def _cell_data(cell: Any, where: str, *, missing_as_record_error: bool) -> tuple[bytes, str]:
    """The encoded bytes of a dataset cell and how to name it ("image" or "image file <path>").  A path is read as
    given: loaders resolve a dataset's relative paths inside its folder first (`adapters.data.resolve_media`)."""
    if isinstance(cell, (bytes, bytearray, memoryview)):
        return bytes(cell), "image"
    path: Any = cell
    if isinstance(cell, Mapping):
        data = cell.get("bytes")
        if data is not None and len(data):
            return bytes(data), "image"
        path = cell.get("path")
        if not path:
            return b"", "image"
    if cell is None:
        return b"", "image"
    if isinstance(path, (str, Path)):
        file = Path(path)
        return _read_image_file(file, where, missing_as_record_error=missing_as_record_error), f"image file {file}"
    raise TypeError(f"{where}: cannot read an image from a {type(cell).__name__}")


def _decode_problem(err: BaseException) -> str:
    text = str(err) or err.__class__.__name__
    kind = "is truncated" if "truncated" in text.lower() else "is corrupt"
    return f"{kind} (decoding failed: {text})"


def _open(data: bytes, where: str, source: str) -> ImageFile.ImageFile:
    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as err:
        raise MediaError(where, f"{source} is too large to decode safely ({err})") from None
    except UnidentifiedImageError:  # the bytes are not quoted: the file may be anything (a key file)
        raise MediaError(where, f"{source} is unreadable: no known image format ({len(data)} bytes)") from None
    except (OSError, ValueError, SyntaxError, EOFError, struct.error) as err:
        raise MediaError(where, f"{source} is unreadable ({err.__class__.__name__}: {err})") from None
    if not isinstance(image, ImageFile.ImageFile):  # pragma: no cover - Image.open always returns an ImageFile
        raise MediaError(where, f"{source} is unreadable")
    return image


def _strict_load(image: ImageFile.ImageFile, where: str, source: str) -> None:
    """Decode ``image`` now with truncated images refused, whatever the process-wide flag says."""
    with _STRICT:
        previous = ImageFile.LOAD_TRUNCATED_IMAGES
        ImageFile.LOAD_TRUNCATED_IMAGES = False
        try:
            type(image).load(image)
        except (OSError, ValueError, SyntaxError, EOFError, struct.error) as err:
            raise MediaError(where, f"{source} {_decode_problem(err)}") from None
        finally:
            ImageFile.LOAD_TRUNCATED_IMAGES = previous


def _make_strict(image: ImageFile.ImageFile, where: str, source: str) -> None:
    """Every later decode of ``image`` (``load()``, which ``convert``, ``resize``, ``tobytes``... call) is strict
    and names the record on failure; reading ``size`` still needs no decode.  The override holds the image weakly:
    a reference cycle would keep each decoded image (8-25 MB for a screenshot) alive after its last use until a full
    garbage collection, which a long run with millions of objects seldom makes (peak memory then grows with it)."""
    own = weakref.ref(image)

    def load() -> Any:
        target = own()
        if target is None:  # pragma: no cover - only reachable through the image itself
            return None
        if target.tile:
            _strict_load(target, where, source)
        return type(target).load(target)

    image.load = load  # type: ignore[method-assign]


_CHECKED_FILES: set[tuple[str, int, int]] = set()
"""Image files that passed `check_image_cell` (path, modification time in ns, size): `as_pil` skips the structure
check for them (a changed file has another identity and is checked again; the decode is strict either way)."""
_CHECKED_FILES_LIMIT = 200_000


def _file_identity(cell: Any) -> tuple[str, int, int] | None:
    if not isinstance(cell, (str, Path)):
        return None
    try:
        stat = os.stat(cell)
    except OSError:
        return None
    return os.fspath(cell), stat.st_mtime_ns, stat.st_size


def check_image_cell(cell: Any, where: str) -> None:
    """Raise `MediaError` (naming the record, the field and "empty" / "truncated" / "corrupt" / "unreadable" /
    "does not exist") when a dataset image cell cannot give a complete image; return None otherwise.

    Cells: `{"bytes", "path"}` dicts (as `datasets` stores images), raw bytes, or a file path; a decoded PIL image
    passes. Fast: PNG, JPEG and WebP are checked from their structure without decoding; other formats are decoded
    strictly."""
    if isinstance(cell, Image.Image):
        return
    data, source = _cell_data(cell, where, missing_as_record_error=True)
    problem = image_problem(data)
    if problem is not None:
        raise MediaError(where, f"{source} {problem}")
    image = _open(data, where, source)
    with image:
        if image.format not in STRUCTURE_CHECKED:
            _strict_load(image, where, source)
    identity = _file_identity(cell)
    if identity is not None:
        if len(_CHECKED_FILES) >= _CHECKED_FILES_LIMIT:
            _CHECKED_FILES.clear()
        _CHECKED_FILES.add(identity)


def as_pil(cell: Any, *, where: str) -> Image.Image:
    """A PIL image from a dataset cell: PIL image, `{"bytes", "path"}` dict, raw bytes or a file path.

    `where` names the record and field ("<benchmark> record '<id>', <field>") for the error when the cell is
    unusable: `MediaError` for an empty, truncated, corrupt or unreadable image (see `check_image_cell`),
    `FileNotFoundError` for a missing file. The image is opened lazily (its size needs no decode) and its decode,
    whenever it happens, refuses truncated data even though lmms-eval allows it process-wide.
    """
    if isinstance(cell, Image.Image):
        return cell
    data, source = _cell_data(cell, where, missing_as_record_error=False)
    problem = None if _file_identity(cell) in _CHECKED_FILES else image_problem(data)  # (checked when loaded)
    if problem is not None:
        raise MediaError(where, f"{source} {problem}")
    image = _open(data, where, source)
    _make_strict(image, where, source)
    return image


def as_rgb(cell: Any, *, where: str) -> Image.Image:
    """`as_pil`, decoded now (strictly) and in RGB: converted only when its mode is another one (PIL's ``convert``
    of an RGB image is a full copy: ~3 ms per full-size screenshot, a seventh of a screenshot question's hook work)."""
    image = as_pil(cell, where=where)
    if image.mode != "RGB":
        return image.convert("RGB")
    image.load()
    return image


# A handful of documents: decoded full-size screenshots weigh 8-25 MB each (an AitW trajectory of 6 phone
# screenshots ~47 MB), so 64 entries held up to ~1.5 GB and made peak memory grow with the run (perf/memory.py:
# 2.48 GB at 250 items, 3.34 GB at 1,000; with 4 entries 1.85 and 1.99 GB, and 1.30 GB at both once no
# reference cycle kept evicted images alive, see _make_strict).  Permutation rows of a question are adjacent
# (adapters/permutation.py), so a small cache still decodes each question once.
IMAGE_CACHE_DOCUMENTS = 4
_IMAGES: LruCache[Hashable, list[Image.Image]] = LruCache(IMAGE_CACHE_DOCUMENTS)


def decoded_once(key: Hashable, load: Callable[[], list[Image.Image]]) -> list[Image.Image]:
    """`load()` the first time `key` is seen (LRU of IMAGE_CACHE_DOCUMENTS documents), the cached images after
    that."""
    return list(_IMAGES.get_or_load(key, load))


def image_cache_stats() -> dict[str, int]:
    return _IMAGES.stats()


def configure_image_cache(enabled: bool = True, clear: bool = True) -> None:
    """Switch the decode-once cache on or off (benchmarks compare both) and optionally empty it."""
    _IMAGES.configure(enabled, clear)
