"""The media reader of the harness glue: images from dataset cells or files of the dataset repository, and video.

A dataset cell is what `datasets` stores for an image (`{"bytes": ..., "path": ...}` when not decoded, a decoded
`PIL.Image.Image`, raw bytes) or a path relative to the dataset repository, fetched with
`huggingface_hub.hf_hub_download` at the task's revision (a local file is read as it is). A video gives `n_frames`
uniformly spaced frames decoded with PyAV: every frame decoded, then indices `round(linspace(0, n - 1, k))` with
half-up rounding (every frame when there are fewer, the middle one when one is asked for); or, where the harness
hands native video to the model, the file itself as a `VideoFile`.
"""

from __future__ import annotations

import functools
import io
import os
from dataclasses import dataclass
from typing import Any

from PIL import Image

from lmms_agentic.adapters.core.sampling import uniform_indices


@dataclass(frozen=True)
class VideoFile:
    """A video handed to the model as a file (a media part, never mistaken for prompt text)."""

    path: str


@functools.lru_cache(maxsize=4)
def sample_frames(path: str, n_wanted: int) -> tuple[Image.Image, ...]:
    """`n_wanted` uniformly spaced RGB frames of the video (PyAV: one pass to count the frames, one to keep them)."""
    import av

    with av.open(path) as container:
        total = sum(1 for _ in container.decode(container.streams.video[0]))
    if total == 0:
        raise ValueError(f"{path} holds no video frames")
    wanted = set(uniform_indices(total, n_wanted))
    frames = []
    with av.open(path) as container:
        for index, frame in enumerate(container.decode(container.streams.video[0])):
            if index in wanted:
                frames.append(Image.fromarray(frame.to_ndarray(format="rgb24")))
    return tuple(frames)


def converts_to_rgb(core: Any) -> bool:
    """Whether a reader hands the core RGB images: yes unless the core declares `IMAGE_MODE = None` (its image
    policy converts the images itself, e.g. keeping grayscale ones grayscale as the benchmark's runner does)."""
    return getattr(core, "IMAGE_MODE", "RGB") is not None


class HubMedia:
    """`MediaReader` over a Hub dataset at one revision (`native_video`: videos are handed over as files; `rgb`:
    images converted to RGB, else handed over in their stored mode)."""

    def __init__(self, repo_id: str, revision: str, native_video: bool = False, rgb: bool = True) -> None:
        self.repo_id = repo_id
        self.revision = revision
        self.native_video = native_video
        self.rgb = rgb

    def _mode(self, image: Image.Image) -> Image.Image:
        if self.rgb:
            return image.convert("RGB")
        image.load()
        return image

    def file(self, path: str) -> str:
        """A local path of the dataset repository's file `path` (downloaded once at the revision)."""
        if os.path.isfile(path):
            return path
        from huggingface_hub import hf_hub_download

        return str(hf_hub_download(self.repo_id, path, repo_type="dataset", revision=self.revision))

    def image(self, cell: Any) -> Image.Image:
        if isinstance(cell, Image.Image):
            return self._mode(cell)
        if isinstance(cell, dict):
            data, path = cell.get("bytes"), cell.get("path")
            if data is None and not path:
                raise ValueError("an image cell holds neither bytes nor a path")
            cell = data if data is not None else path
        if isinstance(cell, (bytes, bytearray)):
            return self._mode(Image.open(io.BytesIO(cell)))
        if isinstance(cell, str):
            with Image.open(self.file(cell)) as image:
                return image.convert("RGB") if self.rgb else image.copy()
        raise TypeError(f"not an image cell: {type(cell).__name__}")

    def video(self, path: str, n_frames: int) -> Any:
        local = self.file(path)
        if self.native_video:
            return VideoFile(local)
        return list(sample_frames(local, n_frames))


class LayoutMedia:
    """A `MediaReader` that reads nothing: 1x1 placeholder images, for what a prompt's layout needs (how many
    images where, the system text) without decoding any media."""

    def __init__(self) -> None:
        self.placeholder = Image.new("RGB", (1, 1))

    def image(self, cell: Any) -> Image.Image:
        return self.placeholder

    def video(self, path: str, n_frames: int) -> Any:
        return [self.placeholder] * n_frames


def flat_media(parts: Any) -> list[Any]:
    """The media of prompt parts in order, a list of frames spread out (texts left out)."""
    out: list[Any] = []
    for part in parts:
        if isinstance(part, str):
            continue
        if isinstance(part, (list, tuple)):
            out.extend(flat_media(part))
        else:
            out.append(part)
    return out
