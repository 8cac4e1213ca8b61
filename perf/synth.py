"""Full-scale synthetic copies of the three benchmarks, in their release layouts, for ``make bench``.

Written once into ``.cache/bench/data/<benchmark>`` (gitignored; rebuilt when ``VERSION`` or a size changes, see
``stamp.json``) and read exactly like a local copy of the real data (``LMMS_AGENTIC_DATA_<BENCHMARK>=<folder>``):

* ``agentvqa``: 1,000 rows (5 domains x 200, the 23 sources at 50 / 40 per source), the schema of
  ``tasks/agentvqa/mini.py``: 620 single images, 130 multi-image rows (AitW trajectories of 3-6 phone screenshots
  with an action history, SpaCE-10 and ERQA view pairs), 250 videos (the Egocentric Videos domain and MarioQA);
  rows of a domain alternate between its sources, so ``--limit 50`` holds every kind of item.
  Screenshots at their real sizes (phones 1080x2400, desktops 1920x1080, ScreenSpot-Pro 2560x1440 and 3840x2160)
  stored as PNG, scenes as JPEG.  Videos last 10-60 s at 24-30 fps (H.264, default GOP, 160x96: small frames but
  the real frame counts, so seeking and sampling cost what they cost); every video row has its own file (hard
  links of eight encoded clips, so the per-path frame cache sees 250 different videos).
* ``robovista``: 474 rows (53/20/85/120/46/144 per domain + 6 unlabeled), 1-8 images each (mostly 1-2) of
  320x240 to 1920x1080, modes RGB / RGBA / P / L, the schema of ``tasks/robovista/mini.py``.
* ``agentx``: 828 tasks (keys "0".."827", the 222 generative keys of the release), ``data.json`` + ``files/``:
  single images, 2-3 image sets and 112 videos, the schema of ``tasks/agentx/mini.py``.

Images are drawn once per (size, variant) and their encoded bytes reused, so building is quick while every row
still decodes a full-size image.  ``python -m perf.synth [--force]`` builds (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

VERSION = 2
ROOT = Path(__file__).resolve().parent.parent / ".cache" / "bench" / "data"
SEED = 20260601

# (duration s, fps) of the encoded clips every video row links to
CLIPS = ((10, 30), (15, 24), (20, 30), (30, 25), (40, 30), (45, 24), (60, 30), (60, 25))
VIDEO_SIZE = (160, 96)


# ---------------------------------------------------------------- drawing
def _ui(size: tuple[int, int], variant: int) -> Image.Image:
    """A screenshot-like picture: a title bar, rows of widgets, some text-like strokes."""
    width, height = size
    image = Image.new("RGB", size, (244 - variant * 3, 245, 250))
    draw = ImageDraw.Draw(image)
    bar = max(24, height // 24)
    draw.rectangle([0, 0, width, bar], fill=(30, 90 + 20 * variant, 200))
    row = max(40, height // 14)
    for i, y in enumerate(range(bar + row // 2, height - row, row)):
        draw.rectangle([width // 20, y, width - width // 20, y + row * 2 // 3], fill=(205, 212, 228 - 4 * (i % 5)))
        for j in range(0, width // 2, max(8, width // 60)):
            draw.line([width // 12 + j, y + row // 3, width // 12 + j + width // 90, y + row // 3], fill=(60, 60, 70))
        draw.ellipse([width - width // 8, y + 4, width - width // 8 + row // 2, y + 4 + row // 2],
                     fill=(20 + 30 * variant, 20, 120))
    return image


def _scene(size: tuple[int, int], variant: int) -> Image.Image:
    """A photo-like picture: a textured table top, objects, a gradient wall (so JPEG has work to do)."""
    width, height = size
    image = Image.new("RGB", size)
    draw = ImageDraw.Draw(image)
    for y in range(0, height, 4):
        shade = 150 + (y * 80) // max(1, height)
        draw.rectangle([0, y, width, y + 4], fill=(shade, shade - 10 * variant % 40, 200 - shade // 3))
    for i in range(12):
        x = (i * 97 + variant * 31) % max(1, width - width // 8)
        y = height // 2 + (i * 53) % max(1, height // 3)
        draw.rectangle([x, y, x + width // 10, y + height // 9], fill=((60 * i) % 255, (90 * i + 40) % 255, 120))
        draw.ellipse([x + 5, y - height // 12, x + width // 16, y], fill=(200, (30 * i) % 255, 40))
    return image


class _Pool:
    """Encoded image bytes, drawn once per (kind, size, variant, format, mode)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[Any, ...], bytes] = {}

    def get(self, kind: str, size: tuple[int, int], variant: int, fmt: str, mode: str = "RGB") -> bytes:
        key = (kind, size, variant % 3, fmt, mode)
        if key not in self._cache:
            image = (_ui if kind == "ui" else _scene)(size, variant % 3)
            if mode == "P":
                image = image.convert("P", palette=Image.Palette.ADAPTIVE, colors=64)
            elif mode != "RGB":
                image = image.convert(mode)
            buffer = io.BytesIO()
            image.save(buffer, fmt, **({"quality": 90} if fmt == "JPEG" else {"compress_level": 6}))
            self._cache[key] = buffer.getvalue()
        return self._cache[key]

    def cell(self, kind: str, size: tuple[int, int], variant: int, fmt: str, mode: str = "RGB") -> dict[str, Any]:
        return {"bytes": self.get(kind, size, variant, fmt, mode), "path": None}


# ---------------------------------------------------------------- videos
def _encode_clip(path: Path, seconds: int, fps: int) -> None:
    import av
    import numpy as np

    width, height = VIDEO_SIZE
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "veryfast"}
        base = np.zeros((height, width, 3), np.uint8)
        base[:, :, 0] = np.linspace(30, 200, width, dtype=np.uint8)
        base[:, :, 2] = np.linspace(180, 40, height, dtype=np.uint8)[:, None]
        for i in range(seconds * fps):
            frame = base.copy()
            x = (3 * i) % (width - 24)
            frame[30:60, x:x + 24] = (230, 200, 40)
            frame[70:80, (width - 1 - x) % (width - 12):(width - 1 - x) % (width - 12) + 12] = (i % 255, 90, 200)
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def _clips(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for seconds, fps in CLIPS:
        path = folder / f"clip_{seconds}s_{fps}fps.mp4"
        if not path.exists():
            _encode_clip(path, seconds, fps)
        paths.append(path)
    return paths


def _link(source: Path, target: Path) -> None:
    """A file of its own at ``target`` with ``source``'s bytes (a hard link when the file system allows one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


# ---------------------------------------------------------------- AgentVQA
# source label, domain, count, input kind
AGENTVQA_SOURCES: tuple[tuple[str, str, int, str], ...] = (
    ("android-in-the-wild", "Web Agents", 50, "trajectory"), ("screenspot", "Web Agents", 50, "screen"),
    ("ScreenSpot-Pro", "Web Agents", 50, "screen_pro"), ("MONDAY", "Web Agents", 50, "phone"),
    ("VSI-Bench", "Egocentric Videos", 40, "video"), ("Perception-Test", "Egocentric Videos", 40, "video"),
    ("OpenEQA", "Egocentric Videos", 40, "video"), ("VidEgoThink", "Egocentric Videos", 40, "video"),
    ("EgoPlan-Bench", "Egocentric Videos", 40, "video"),
    ("GameQA", "Games", 50, "scene_hd"), ("Atari", "Games", 50, "atari"), ("VideoGameBunny", "Games", 50, "scene_fhd"),
    ("MarioQA", "Games", 50, "video"),
    ("space-10", "Spatial Planning", 40, "pair"), ("embspatial-bench", "Spatial Planning", 40, "scene_hd"),
    ("Spatial-MM", "Spatial Planning", 40, "scene_hd"), ("OmniSpatial", "Spatial Planning", 40, "scene_fhd"),
    ("3DSRBench", "Spatial Planning", 40, "scene_hd"),
    ("ERQA", "Robotics", 40, "pair"), ("Robo2VLM", "Robotics", 40, "scene_sd"), ("RoboRefIt", "Robotics", 40, "grasp"),
    ("ManipBench", "Robotics", 40, "grasp"), ("Share-Robot", "Robotics", 40, "scene_sd"),
)
_GOLD_SHARES = "A" * 28 + "B" * 27 + "C" * 23 + "D" * 22  # the paper's gold-letter shares


def _agentvqa_rows(pool: _Pool, clips: list[Path], videos: Path) -> Iterator[dict[str, Any]]:
    rng = random.Random(SEED)
    number = 0
    for source, domain, count, kind in AGENTVQA_SOURCES:
        for _ in range(count):
            number += 1
            row: dict[str, Any] = {
                "id": f"synth_{number:04d}", "domain": domain, "source_dataset": source, "task_type": "",
                "question": f"Synthetic {source} question {number}: which option is right for the current goal?",
                "action_history": [], "answer": rng.choice(_GOLD_SHARES), "images": [], "video": None,
                "option_coordinates": None, "image_width": None, "image_height": None, "coordinate_format": None,
                "options": [f"option {letter} for item {number}" for letter in "abcd"],
                "input_type": "image", "output_type": "Answer",
            }
            variant = number
            if kind in ("trajectory", "phone"):
                size = (1080, 2400)
                steps = rng.randint(3, 6) if kind == "trajectory" else 1
                row["images"] = [pool.cell("ui", size, variant + s, "PNG") for s in range(steps)]
                row["action_history"] = [f"tap ({rng.randint(0, 1079)}, {rng.randint(0, 2399)})" for _ in
                                         range(rng.randint(2, 5))]
                row["input_type"] = "multi_image" if steps > 1 else "image"
                if kind == "trajectory":
                    points = [(rng.randint(0, 1079), rng.randint(0, 2399)) for _ in range(3)]
                    row["options"] = [f"tap ({x}, {y})" for x, y in points] + ["PRESS_BACK"]
                    row["option_coordinates"] = [list(p) for p in points] + [None]
                    row.update(image_width=1080, image_height=2400, coordinate_format="point_xy_abs")
            elif kind in ("screen", "screen_pro"):
                size = rng.choice([(1080, 2400), (1920, 1080)] if kind == "screen" else [(2560, 1440), (3840, 2160)])
                row["images"] = [pool.cell("ui", size, variant, "PNG")]
                points = [(rng.randint(0, size[0] - 1), rng.randint(0, size[1] - 1)) for _ in range(4)]
                row["options"] = [f"({x}, {y})" for x, y in points]
                row.update(option_coordinates=[list(p) for p in points], image_width=size[0], image_height=size[1],
                           coordinate_format="point_xy_abs", output_type="Click coordinates")
            elif kind == "grasp":
                size = (640, 480)
                row["images"] = [pool.cell("scene", size, variant, "JPEG")]
                points = [(rng.randint(0, 639), rng.randint(0, 479)) for _ in range(4)]
                row["options"] = [f"({x}, {y})" for x, y in points]
                row.update(option_coordinates=[list(p) for p in points], image_width=640, image_height=480,
                           coordinate_format="point_xy_abs", output_type="Grasp coordinates")
            elif kind == "pair":
                size = rng.choice([(1280, 720), (640, 480)])
                row["images"] = [pool.cell("scene", size, variant + s, "JPEG") for s in range(rng.randint(2, 3))]
                row["input_type"] = "multi_image"
            elif kind == "video":
                name = f"videos/{row['id']}.mp4"
                _link(clips[number % len(clips)], videos.parent / name)
                row.update(video=name, input_type="video")
            else:
                size = {"scene_hd": (1280, 720), "scene_fhd": (1920, 1080), "scene_sd": (640, 480),
                        "atari": (160, 210)}[kind]
                row["images"] = [pool.cell("scene", size, variant, "JPEG" if kind != "atari" else "PNG")]
            yield row


def _interleaved(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows ordered round-robin over the sources of each domain (domains stay in order), so that the first N rows of
    a domain -- what ``--limit N`` runs -- hold every source and input kind."""
    out: list[dict[str, Any]] = []
    for domain in dict.fromkeys(row["domain"] for row in rows):
        queues: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            if row["domain"] == domain:
                queues.setdefault(row["source_dataset"], []).append(row)
        while any(queues.values()):
            for queue in queues.values():
                if queue:
                    out.append(queue.pop(0))
    return out


def build_agentvqa(root: Path) -> Path:
    import datasets

    from lmms_agentic.tasks.agentvqa.mini import release_features

    out = root / "agentvqa"
    clips = _clips(root / "_clips")
    features = release_features()
    rows = _interleaved(list(_agentvqa_rows(_Pool(), clips, out / "videos")))
    target = out / "data" / "test-00000-of-00001.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(target))
    return out


# ---------------------------------------------------------------- RoboVista
ROBOVISTA_DOMAINS = (("agriculture", 53), ("autonomous_driving", 20), ("domestic", 85),
                     ("industrial_manufacturing", 120), ("surgical_robotics", 46), ("open_datasets", 144), ("", 6))
ABILITIES = ("scene_understanding", "high_level_decision_making", "low_level_motion_awareness",
             "physical_interaction", "recovery_replanning_robustness")
ROBOVISTA_SIZES = ((320, 240), (640, 480), (1280, 720), (1920, 1080), (1024, 768), (800, 1200), (1600, 900))


def build_robovista(root: Path) -> Path:
    import datasets

    rng = random.Random(SEED + 1)
    pool = _Pool()
    rows = []
    number = 0
    for domain, count in ROBOVISTA_DOMAINS:
        for i in range(count):
            n_images = rng.choices([1, 2, 3, 4, 6, 8], weights=[55, 25, 10, 5, 3, 2])[0]
            size = rng.choice(ROBOVISTA_SIZES)
            mode = rng.choices(["RGB", "RGBA", "P", "L"], weights=[85, 5, 5, 5])[0]
            fmt = "JPEG" if mode in ("RGB", "L") else "PNG"
            ability = ABILITIES[i % len(ABILITIES)] if domain else ""
            rows.append({
                "id": f"q_synth_{number:04d}",
                "images": [pool.cell("scene", size, number + v, fmt, mode) for v in range(n_images)],
                "question": f"The robot is performing task {i % 7} in {domain or 'an unlabeled setting'}. "
                            "Which action should it take next given the image(s)?",
                "choices": [f"Action {letter}: move the gripper to target {letter}" for letter in "ABCDE"],
                "correct_answer": "ABCDE"[rng.randrange(5)],
                "reasoning": "The target is closest to the gripper.",
                "domain": domain, "task": f"task {i % 7}" if domain else "", "ability_type": ability,
                "ability_subcategory": "object identification" if ability else "",
                "publication_source": "lmms-agentic synthetic benchmark split",
            })
            number += 1
    features = datasets.Features({
        "id": datasets.Value("string"), "images": datasets.Sequence(datasets.Image()),
        "question": datasets.Value("string"), "choices": datasets.Sequence(datasets.Value("string")),
        "correct_answer": datasets.Value("string"), "reasoning": datasets.Value("string"),
        "domain": datasets.Value("string"), "task": datasets.Value("string"),
        "ability_type": datasets.Value("string"), "ability_subcategory": datasets.Value("string"),
        "publication_source": datasets.Value("string"),
    })
    out = root / "robovista"
    target = out / "data" / "train-00000-of-00001.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(target))
    return out


# ---------------------------------------------------------------- Agent-X
AGENTX_TASKS = 828
AGENTX_VIDEOS = 112


def build_agentx(root: Path) -> Path:
    from lmms_agentic.tasks.agentx.core.release_data import TOOL_NAMES, toolmeta

    rng = random.Random(SEED + 2)
    out = root / "agentx"
    files = out / "files"
    files.mkdir(parents=True, exist_ok=True)
    clips = _clips(root / "_clips")
    pool = _Pool()
    catalogue = toolmeta()
    video_keys = set(rng.sample(range(AGENTX_TASKS), AGENTX_VIDEOS))
    data: dict[str, Any] = {}
    for key in range(AGENTX_TASKS):
        if key in video_keys:
            names = [f"AgentX_{key}.mp4"]
            _link(clips[key % len(clips)], files / names[0])
        else:
            n_images = rng.choices([1, 2, 3], weights=[80, 15, 5])[0]
            names = [f"AgentX_{key}{'abc'[i] if n_images > 1 else ''}.jpg" for i in range(n_images)]
            size = rng.choice([(640, 480), (1280, 720), (1024, 768), (800, 600)])
            for i, name in enumerate(names):
                (files / name).write_bytes(pool.get("scene", size, key + i, "JPEG"))
        tools = rng.sample(TOOL_NAMES, rng.randint(1, 4))
        steps = [{"step": n + 1, "task": f"step {n + 1} of task {key}", "tool": tool, "input": "image",
                  "output": f"output of {tool}", "thought": f"{tool} gives what step {n + 1} needs."}
                 for n, tool in enumerate(tools)]
        data[str(key)] = [{
            "query": f"Synthetic Agent-X query {key}: use the tools to answer about the media.",
            "file_path": ", ".join(names), "query_type": rng.choice(["objective", "subjective"]),
            "tool_metadata": {name: catalogue[name] for name in catalogue if name in tools},
            "reasoning_steps": steps,
            "final_answer": {"value": f"answer {key}", "justification": "The steps above give it."},
        }]
    (out / "data.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return out


# ---------------------------------------------------------------- entry points
BUILDERS: dict[str, Callable[[Path], Path]] = {
    "agentvqa": build_agentvqa, "robovista": build_robovista, "agentx": build_agentx,
}


def _stamp(name: str) -> dict[str, Any]:
    return {"version": VERSION, "benchmark": name, "clips": [list(c) for c in CLIPS], "seed": SEED}


def ensure(name: str, root: Path = ROOT, force: bool = False) -> Path:
    """The synthetic copy of benchmark ``name`` (built first when missing or stale)."""
    folder = root / name
    stamp = folder / "stamp.json"
    if not force and stamp.is_file() and json.loads(stamp.read_text()) == _stamp(name):
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    started = time.perf_counter()
    BUILDERS[name](root)
    stamp.write_text(json.dumps(_stamp(name)))
    print(f"  built synthetic {name} in {time.perf_counter() - started:.0f} s -> {folder}", flush=True)
    return folder


def ensure_all(root: Path = ROOT, force: bool = False) -> dict[str, Path]:
    return {name: ensure(name, root, force) for name in BUILDERS}


def data_env(folders: dict[str, Path]) -> dict[str, str]:
    """Environment variables that point each benchmark at its synthetic copy."""
    return {f"LMMS_AGENTIC_DATA_{name.upper()}": str(path) for name, path in folders.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the full-scale synthetic benchmark copies")
    parser.add_argument("--force", action="store_true", help="rebuild even when the stamp matches")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args(argv)
    for name, path in ensure_all(args.root, args.force).items():
        print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
