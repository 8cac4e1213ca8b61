"""Video frame sampling shared by every benchmark: uniform indices, decord first, PyAV fallback, decode once.

Indices: `uniform_indices(n_total, n_wanted)` = `round(linspace(0, n_total - 1, n_wanted))` with
half-up rounding in exact arithmetic; a video with fewer frames than wanted gives every frame once
(no duplicates). Example: 300 frames, 32 wanted -> 0, 10, 19, 29, ..., 299.

Decoding: decord (`VideoReader`) when it is installed and can open the file, otherwise PyAV
(which bundles FFmpeg). Which decoder was used, the frame count and the indices are returned in a
`SampledFrames` record so tasks can log them per sample. Decoded frames are kept in a small
in-process LRU cache keyed by (path, size, mtime, n_wanted), so a video asked several times in one run
(option permutations, several questions on one clip) is decoded once. `cache_stats()` reports hits.

Integrity: a truncated video must not pass as a shorter one (a half-downloaded MP4 whose index sits first decodes
to 33 of its 100 frames, which PyAV reports without an error). `sample_frames` therefore checks the container's
structure first (MP4/MOV: every top-level box must fit in the file) and compares the frames PyAV decoded with the
count the container declares; either failure is a `VideoDecodeError` saying "truncated". `check_video(path, where)`
is the fast check for loaders (box sizes for MP4/MOV; a packet count against the declared frame count for other
containers; then the first frame decoded, which a zeroed payload or a video of 0 frames fails); it raises
`media.MediaError` (a `RecordError`) naming the record, the field, the file and "empty" / "truncated" / "corrupt" /
"holds no video frames" / "does not exist".
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from lmms_agentic.adapters.core.sampling import uniform_indices
from lmms_agentic.adapters.lru import LruCache
from lmms_agentic.adapters.media import MediaError

DEFAULT_CACHE_VIDEOS = 16
IndexRule = Callable[[int, int], list[int]]
"""Frame indices for (frames in the video, frames wanted)."""
#: top-level box types that mark an ISO base media file (MP4, MOV, M4V, 3GP)
_BMFF_BOXES = frozenset({b"ftyp", b"moov", b"mdat", b"free", b"skip", b"wide", b"pnot", b"uuid"})


class VideoDecodeError(RuntimeError):
    """No decoder could read the video (or it is truncated); the message names the file and each decoder's error."""


def missing_frames_tolerated(declared: int) -> int:
    """How many frames fewer than the container declares still count as complete (edit lists and B-frame
    reordering make decoders drop a frame or two at the ends of intact files)."""
    return max(2, declared // 50)


def _shortfall(declared: int, count: int, duration: float | None, end: float) -> str | None:
    """Fewer frames than the container declares, or (no declared count, e.g. Matroska/WebM) frames ending well
    before its declared duration (10% + 0.5 s of slack: audio tracks may run longer than the video)."""
    if declared and count < declared - missing_frames_tolerated(declared):
        return f"{count} of the {declared} frames its container declares"
    if not declared and duration and end < 0.9 * duration - 0.5:
        return f"frames up to {end:.2f}s of the {duration:.2f}s its container declares"
    return None


def _declared(container: Any, stream: Any) -> tuple[int, float | None]:
    """(declared frame count or 0, declared duration in seconds or None) of a PyAV video stream."""
    if stream.duration and stream.time_base:
        duration: float | None = float(stream.duration * stream.time_base)
    else:
        duration = container.duration / 1_000_000 if container.duration else None
    return int(stream.frames or 0), duration


def _bmff_problem(path: Path, size: int) -> str | None:
    """What is wrong with the box structure of an MP4/MOV file (None: every top-level box fits, a 'moov' exists)."""
    seen: list[bytes] = []
    with path.open("rb") as handle:
        pos = 0
        while pos < size:
            handle.seek(pos)
            header = handle.read(16)
            if len(header) < 8:
                return f"is truncated: it ends inside a box header at byte {pos} of {size}"
            box_size, kind = struct.unpack(">I4s", header[:8])
            if box_size == 1:
                if len(header) < 16:
                    return f"is truncated: it ends inside a box header at byte {pos} of {size}"
                box_size = struct.unpack(">Q", header[8:16])[0]
            elif box_size == 0:  # the last box, up to the end of the file
                box_size = size - pos
            name = kind.decode("latin-1")
            if box_size < 8:
                return f"is corrupt: box {name!r} at byte {pos} declares {box_size} bytes"
            if pos + box_size > size:
                return (f"is truncated: box {name!r} at byte {pos} declares {box_size} bytes, but the file ends "
                        f"{size - pos} bytes after its start ({size} bytes in all)")
            seen.append(kind)
            pos += box_size
    if b"moov" not in seen:
        return "is truncated or incomplete: it has no 'moov' box (the index of its frames)"
    return None


def _is_bmff(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(8)[4:8] in _BMFF_BOXES


def _structure_problem(path: Path) -> str | None:
    """Empty file, or an MP4/MOV whose boxes do not fit in it (no decoding)."""
    size = path.stat().st_size
    if size == 0:
        return "is empty (0 bytes)"
    if _is_bmff(path):
        return _bmff_problem(path, size)
    return None


def _packet_problem(path: Path) -> str | None:
    """Non-MP4 containers: demux (no decoding) and compare the video packets with the declared frame count, or the
    last packet's end with the declared duration."""
    import av

    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                return "has no video stream"
            stream = container.streams.video[0]
            declared, duration = _declared(container, stream)
            count, end = 0, 0.0
            for packet in container.demux(stream):
                if packet.size:
                    count += 1
                    if packet.pts is not None and packet.time_base is not None:
                        end = max(end, float((packet.pts + (packet.duration or 0)) * packet.time_base))
    except Exception as exc:  # the demuxer's own error says what is wrong
        return f"is not a readable video ({type(exc).__name__}: {exc})"
    if count == 0:
        return "is truncated or corrupt: it holds no video frames"
    short = _shortfall(declared, count, duration, end)
    return f"is truncated: it holds {short}" if short else None


#: video packets decoded at most while looking for a video's first frame (decoders hold back a few frames)
FIRST_FRAME_PACKETS = 64


def _first_frame_problem(path: Path) -> str | None:
    """What stops the first frame of a video from decoding: no video stream, no frame at all (a valid MP4 of 0
    frames), or a payload the decoder refuses (intact boxes around zeroed or foreign data); None once a frame
    decodes.  Decodes at most FIRST_FRAME_PACKETS packets."""
    import av

    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                return "has no video stream (0 frames)"
            stream = container.streams.video[0]
            packets = 0
            for packet in container.demux(stream):
                if packet.size:
                    packets += 1
                if packet.decode():  # the last, empty packet flushes the frames the decoder held back
                    return None
                if packets >= FIRST_FRAME_PACKETS:
                    break
    except Exception as exc:  # the decoder's own error says what is wrong
        return f"is corrupt: its first frame cannot be decoded ({type(exc).__name__}: {exc})"
    if packets == 0:
        return "holds no video frames (0 frames)"
    return f"is corrupt: its first frame cannot be decoded (none of its first {packets} packets gives a frame)"


def check_video(path: str | Path, where: str) -> None:
    """Raise `MediaError` naming the record and field (`where`: "<benchmark> record '<id>', <field>"), the file
    and what is wrong ("does not exist", "is empty", "is truncated: ...", "holds no video frames", "is corrupt: its
    first frame cannot be decoded", "is not a readable video") when the video at `path` is unusable; return None
    otherwise. Fast: box sizes for MP4/MOV, a packet count for other containers, and only the first frame decoded
    (so a file whose structure is whole but whose frames are not, or that has none, is caught before any model
    runs)."""
    video = Path(path)
    if not video.is_file():
        raise MediaError(where, f"video file {video} does not exist")
    try:
        problem = _structure_problem(video)
        if problem is None and not _is_bmff(video):
            problem = _packet_problem(video)
        if problem is None:
            problem = _first_frame_problem(video)
    except OSError as err:
        problem = f"cannot be read ({err.__class__.__name__}: {err.strerror or err})"
    if problem is not None:
        raise MediaError(where, f"video file {video} {problem}")


@dataclass(frozen=True)
class SampledFrames:
    path: str
    frames: tuple[Image.Image, ...] = field(repr=False)
    indices: tuple[int, ...]
    total_frames: int
    decoder: str

    def log(self) -> dict[str, Any]:
        """Plain-data description for sample logs (no pixels)."""
        return {"video": self.path, "n_frames": len(self.indices), "indices": list(self.indices),
                "total_frames": self.total_frames, "decoder": self.decoder}


def _decode_decord(path: str, n_wanted: int, rule: IndexRule) -> tuple[list[Image.Image], list[int], int]:
    import decord

    reader = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1)
    total = len(reader)
    indices = rule(total, n_wanted)
    batch = reader.get_batch(indices).asnumpy()
    return [Image.fromarray(frame) for frame in batch], indices, total


def _decode_pyav(path: str, n_wanted: int, rule: IndexRule) -> tuple[list[Image.Image], list[int], int]:
    import av

    with av.open(path) as container:
        stream = container.streams.video[0]
        declared, duration = _declared(container, stream)
        frames, end = [], 0.0
        for frame in container.decode(stream):
            frames.append(Image.fromarray(frame.to_ndarray(format="rgb24")))
            if frame.time is not None:
                end = max(end, float(frame.time))
    total = len(frames)
    short = _shortfall(declared, total, duration, end + (1 / float(stream.average_rate) if stream.average_rate else 0))
    if short:
        raise VideoDecodeError(f"truncated: decoded {short}")
    indices = rule(total, n_wanted)
    return [frames[i] for i in indices], indices, total


DECODERS = (("decord", _decode_decord), ("pyav", _decode_pyav))


_CACHE: LruCache[tuple[str, int, int, int, IndexRule], SampledFrames] = LruCache(DEFAULT_CACHE_VIDEOS)


def cache_stats() -> dict[str, int]:
    stats = _CACHE.stats()
    return {"hits": stats["hits"], "misses": stats["misses"], "cached_videos": stats["cached"]}


def clear_cache() -> None:
    _CACHE.configure(enabled=True, clear=True)


def lookup(path: str | Path) -> SampledFrames | None:
    """The most recently decoded frames of `path` in this process, if any (for sample logs)."""
    resolved = str(Path(path).resolve())
    return _CACHE.newest(lambda key: key[0] == resolved)


def frames_log(path: str | Path, shown_as: str) -> dict[str, Any]:
    """Sample-log entry for a video: what this process sampled from it (indices, counts, decoder), or that it
    decoded nothing here (native video input, or a cached response); `shown_as` is the dataset's own path."""
    decoded = lookup(path)
    entry: dict[str, Any] = decoded.log() if decoded is not None else {"decoded_in_this_process": False}
    entry["video"] = shown_as
    return entry


def sample_frames(path: str | Path, n_wanted: int, *, use_cache: bool = True,
                  decoders: tuple[str, ...] = ("decord", "pyav"), rule: IndexRule | None = None) -> SampledFrames:
    """`n_wanted` uniformly spaced RGB frames of the video at `path` (see module docstring); `rule` (a hashable
    `(n_total, n_wanted) -> indices`) picks other frames, e.g. a benchmark script's own sampling."""
    pick: IndexRule = rule or uniform_indices
    video = Path(path)
    if not video.is_file():
        raise FileNotFoundError(f"video file {video} does not exist")
    stat = video.stat()
    key = (str(video.resolve()), stat.st_size, stat.st_mtime_ns, n_wanted, pick)
    if use_cache and (cached := _CACHE.get(key)) is not None:
        return cached
    problem = _structure_problem(video)
    if problem is not None:
        raise VideoDecodeError(f"cannot decode {video}: the file {problem}")
    errors = []
    for name, decode in DECODERS:
        if name not in decoders:
            continue
        try:
            frames, indices, total = decode(str(video), n_wanted, pick)
        except Exception as exc:  # try the next decoder, keep the reason for the error message
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        result = SampledFrames(str(video), tuple(frames), tuple(indices), total, name)
        if use_cache:
            _CACHE.put(key, result)
        return result
    raise VideoDecodeError(f"cannot decode {video}: " + "; ".join(errors))
