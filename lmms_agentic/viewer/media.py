"""The media and the rendered prompt of a logged sample, resolved from the benchmark's data as the task built them.

lmms-eval logs no pixels, so the viewer rebuilds each sample's document: the task's documents come from the task
itself (``devtools.permutations.load_task``: the placeholder through the task's own ``process_docs``, permutation
tasks re-permuted), read from the data location the run used (``error_analysis.run.use_run_data`` adopts the run's
``LMMS_AGENTIC_DATA`` setting from its results file when the environment sets none; the environment is restored
afterwards), and the line's ``doc_id`` picks the document (checked against the record's ``id``). The task's
``doc_to_messages`` gives the prompt as the model got it (system text, user texts and media in order); tasks without
one (the executed-tools loop) show the logged ``input`` with the task's ``doc_to_visual`` media. Videos given as a
path are shown as a strip of uniformly sampled frames (``adapters.frames``).

Images are written once under ``media/`` (named by content hash, so a document shared by several tasks or runs is
stored once): a JPEG capped at ``FULL_SIDE`` pixels and a ``THUMB_SIDE`` thumbnail. When the data cannot be read,
every sample of the task says why on its page ("media unavailable: ...").

An image an executed tool returned comes from the sample log itself (its round's ``returned_image``: a PNG
thumbnail), so it is written whether or not the data is read: checked (``returned_image.read``), re-encoded like
any other image, or the round says why it is not shown.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from lmms_agentic.adapters import benchmarks, frames
from lmms_agentic.report.runs import Run
from lmms_agentic.tasks.agentx.tools import returned_image

FULL_SIDE = 1024
THUMB_SIDE = 192
VIDEO_FRAMES = 8
"""Frames shown for a video the task hands over as a path (native-video backends)."""
VIDEO_SUFFIXES = (".mp4", ".avi", ".mov", ".mkv", ".webm")


class MediaWriter:
    """Writes images under ``folder/media`` once per content; ``image(img)`` returns the page's reference."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "media"
        self.written: set[str] = set()

    def image(self, image: Image.Image, label: str) -> dict[str, str]:
        rgb = image.convert("RGB")
        full = rgb.copy()
        full.thumbnail((FULL_SIDE, FULL_SIDE))
        buffer = io.BytesIO()
        full.save(buffer, "JPEG", quality=85)
        data = buffer.getvalue()
        name = hashlib.sha256(data).hexdigest()[:20]
        if name not in self.written:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / f"{name}.jpg").write_bytes(data)
            thumb = rgb.copy()
            thumb.thumbnail((THUMB_SIDE, THUMB_SIDE))
            thumb.save(self.folder / f"{name}_t.jpg", "JPEG", quality=75)
            self.written.add(name)
        return {"full": f"media/{name}.jpg", "thumb": f"media/{name}_t.jpg", "label": label}


def add_returned_images(writer: MediaWriter, entries: Sequence[Mapping[str, Any]],
                        rows: Sequence[dict[str, Any]]) -> None:
    """Give each round row (``samples.round_rows``, in the order of ``entries``) whose tool returned an image either
    ``returned`` (the page's reference to it under ``media/``) or ``returned_note`` (why it is not shown)."""
    for entry, row in zip(entries, rows, strict=True):
        if not entry.get("image"):
            continue
        logged = entry.get("returned_image")
        found = returned_image.read(logged) if logged is not None else \
            "not in the sample log (logged before rounds kept a thumbnail)"
        if isinstance(found, str):
            row["returned_note"] = found
            continue
        row["returned"] = writer.image(found.thumbnail, f"{row.get('image')}: {found.caption()}")


@contextlib.contextmanager
def run_data(run: Run) -> Iterator[list[str]]:
    """The run's data location in the environment for the duration (restored after); yields one line per
    benchmark saying which data is read (with a warning when it is not the run's)."""
    from lmms_agentic.error_analysis.run import Run as AnalysisRun
    from lmms_agentic.error_analysis.run import use_run_data

    before = dict(os.environ)
    lines = []
    try:
        analysis = AnalysisRun(run.path, run.results_file, run.results, [])
        for name in run.benchmarks():
            environ = dict(os.environ)
            lines.append(use_run_data(analysis, benchmarks.get(name), environ))
            os.environ.update({k: v for k, v in environ.items() if before.get(k) != v})
        yield lines
    finally:
        for key in set(os.environ) - set(before):
            del os.environ[key]
        os.environ.update(before)


class MediaResolver:
    """Per task, the documents (loaded once) and, per sample, its media and prompt messages."""

    def __init__(self, writer: MediaWriter) -> None:
        self.writer = writer
        self._tasks: dict[tuple[str, str], tuple[dict[str, Any], Any, dict[str, int]] | str] = {}

    def _task(self, task: str, where: str) -> tuple[dict[str, Any], Any, dict[str, int]] | str:
        key = (task, where)
        if key not in self._tasks:
            try:
                from lmms_agentic.devtools.permutations import load_task

                config, docs = load_task(task)
                ids = {str(doc_id): index for index, doc_id in enumerate(docs["id"])} if "id" in docs.column_names \
                    else {}
                self._tasks[key] = (config, docs, ids)
            except Exception as exc:  # any failure to read the data makes the task's media unavailable, with why
                self._tasks[key] = f"the task's data could not be read ({exc.__class__.__name__}: {exc})"
        return self._tasks[key]

    def resolve(self, run: Run, task: str, line: Mapping[str, Any], record: Mapping[str, Any],
                where: str) -> dict[str, Any]:
        """``{"media": [...], "messages": [...] | None, "note": str}`` for one sample line."""
        loaded = self._task(task, where)
        if isinstance(loaded, str):
            return {"media": [], "messages": None, "note": f"media unavailable: {loaded}"}
        config, docs, ids = loaded
        doc_id = line.get("doc_id")
        position = doc_id if isinstance(doc_id, int) and 0 <= doc_id < len(docs) else None
        wanted = str(record.get("id", ""))
        if position is None or (ids and str(docs[position]["id"]) != wanted):
            position = ids.get(wanted)
        if position is None:
            return {"media": [], "messages": None,
                    "note": f"media unavailable: record {wanted!r} is not in the data read now ({where})"}
        doc = docs[position]
        kwargs = self._kwargs(run, task)
        try:
            if callable(config.get("doc_to_messages")):
                found = self._messages(config["doc_to_messages"](doc, kwargs))
            else:
                visuals = config["doc_to_visual"](doc, kwargs) if callable(config.get("doc_to_visual")) else []
                found = {"media": self._visuals(list(visuals or [])), "messages": None, "note": ""}
        except Exception as exc:  # a damaged file: the page says so instead of stopping the whole site
            return {"media": [], "messages": None,
                    "note": f"media unavailable: the document's media could not be read ({exc.__class__.__name__}: "
                            f"{exc})"}
        if (doc.get("video") or doc.get("media_type") == "video") and all(
                item["kind"] == "image" for item in found["media"]):
            total = len(found["media"])  # a video the task hands over as sampled frames
            for number, item in enumerate(found["media"], 1):
                item.update(kind="frame", label=f"frame {number} of {total}")
        return found

    @staticmethod
    def _kwargs(run: Run, task: str) -> dict[str, Any]:
        from lmms_agentic.error_analysis.run import Run as AnalysisRun

        return AnalysisRun(run.path, run.results_file, run.results, []).task_kwargs(task)

    def _visuals(self, visuals: list[Any], start: int = 0) -> list[dict[str, str]]:
        found: list[dict[str, str]] = []
        for visual in visuals:
            if isinstance(visual, Image.Image):
                found.append({**self.writer.image(visual, f"image {start + len(found) + 1}"), "kind": "image"})
            elif isinstance(visual, str | Path) and str(visual).lower().endswith(VIDEO_SUFFIXES):
                sampled = frames.sample_frames(visual, VIDEO_FRAMES)
                found += [{**self.writer.image(frame, f"frame {index}"), "kind": "frame"}
                          for frame, index in zip(sampled.frames, sampled.indices, strict=True)]
        return found

    def _messages(self, messages: list[Mapping[str, Any]]) -> dict[str, Any]:
        media: list[dict[str, str]] = []
        rendered = []
        for message in messages:
            parts: list[dict[str, Any]] = []
            content = message.get("content")
            for part in content if isinstance(content, list) else [{"type": "text", "text": str(content)}]:
                if part.get("type") == "text":
                    parts.append({"text": str(part.get("text", ""))})
                    continue
                added = self._visuals([part.get("url")], len(media))
                if not added:
                    parts.append({"text": f"[{part.get('type')} not shown]"})
                parts += [{"media": len(media) + offset} for offset in range(len(added))]
                media += added
            rendered.append({"role": str(message.get("role", "")), "parts": parts})
        return {"media": media, "messages": rendered, "note": ""}
