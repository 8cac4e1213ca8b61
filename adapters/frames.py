"""Video frame sampling shared by every benchmark: uniform indices, decord first, PyAV fallback, decode once.

Indices: `uniform_indices(n_total, n_wanted)` = `round(linspace(0, n_total - 1, n_wanted))` with
half-up rounding in exact arithmetic; a video with fewer frames than wanted gives every frame once
(no duplicates). Example: 300 frames, 32 wanted -> 0, 10, 19, 29, ..., 299.

Decoding: decord (`VideoReader`) when it is installed and can open the file, otherwise PyAV
(which bundles FFmpeg). Which decoder was used, the frame count and the indices are returned in a
`SampledFrames` record so tasks can log them per sample. Decoded frames are kept in a small
in-process LRU cache keyed by (path, size, mtime, n_wanted), so a video asked several times in one run
(option permutations, several questions on one clip) is decoded once. `cache_stats()` reports hits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from PIL import Image

from lmms_agentic.adapters.lru import LruCache

DEFAULT_CACHE_VIDEOS = 16


class VideoDecodeError(RuntimeError):
    """No decoder could read the video; the message names the file and each decoder's error."""


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


def uniform_indices(n_total: int, n_wanted: int) -> list[int]:
    """Evenly spaced frame indices over [0, n_total - 1], first and last frame included."""
    if n_total <= 0:
        raise ValueError(f"a video needs at least one frame, got {n_total}")
    if n_wanted <= 0:
        raise ValueError(f"ask for at least one frame, got {n_wanted}")
    if n_total <= n_wanted:
        return list(range(n_total))
    if n_wanted == 1:
        return [(n_total - 1) // 2]
    step = Fraction(n_total - 1, n_wanted - 1)
    return [int((i * step * 2 + 1) // 2) for i in range(n_wanted)]


def _decode_decord(path: str, n_wanted: int) -> tuple[list[Image.Image], list[int], int]:
    import decord

    reader = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1)
    total = len(reader)
    indices = uniform_indices(total, n_wanted)
    batch = reader.get_batch(indices).asnumpy()
    return [Image.fromarray(frame) for frame in batch], indices, total


def _decode_pyav(path: str, n_wanted: int) -> tuple[list[Image.Image], list[int], int]:
    import av

    with av.open(path) as container:
        stream = container.streams.video[0]
        frames = [Image.fromarray(frame.to_ndarray(format="rgb24")) for frame in container.decode(stream)]
    total = len(frames)
    indices = uniform_indices(total, n_wanted)
    return [frames[i] for i in indices], indices, total


DECODERS = (("decord", _decode_decord), ("pyav", _decode_pyav))


_CACHE: LruCache[tuple[str, int, int, int], SampledFrames] = LruCache(DEFAULT_CACHE_VIDEOS)


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
                  decoders: tuple[str, ...] = ("decord", "pyav")) -> SampledFrames:
    """`n_wanted` uniformly spaced RGB frames of the video at `path` (see module docstring)."""
    video = Path(path)
    if not video.is_file():
        raise FileNotFoundError(f"video file {video} does not exist")
    stat = video.stat()
    key = (str(video.resolve()), stat.st_size, stat.st_mtime_ns, n_wanted)
    if use_cache and (cached := _CACHE.get(key)) is not None:
        return cached
    errors = []
    for name, decode in DECODERS:
        if name not in decoders:
            continue
        try:
            frames, indices, total = decode(str(video), n_wanted)
        except Exception as exc:  # try the next decoder, keep the reason for the error message
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        result = SampledFrames(str(video), tuple(frames), tuple(indices), total, name)
        if use_cache:
            _CACHE.put(key, result)
        return result
    raise VideoDecodeError(f"cannot decode {video}: " + "; ".join(errors))
