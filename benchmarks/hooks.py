"""Per-document hook work against the bare decode and resize the protocol needs, per benchmark (target <= 1.2x).

Hook work, as lmms-eval does it for one task: ``load_task`` (the data located by ``LMMS_AGENTIC_DATA_<BENCHMARK>``,
read, validated and normalised by the task's ``process_docs``; the first task of a benchmark pays the load, the
others share it), then for every document ``doc_to_messages`` (images decoded and preprocessed, video frames
sampled, the prompt) and ``process_results`` on a typical reply (extraction, metrics, the sample record).

Bare work, what any harness must do for the same protocol: read the table (pyarrow) or ``data.json``, then per row
decode every image (RoboVista: the paper's longest side 720 and JPEG q85 round trip), sample the video frames the
protocol asks for with decord (32 for AgentVQA, 8 for Agent-X), and format the prompt text.

Both passes run in this process on the same documents, bare first (``repeats`` times each, alternating; ``make
bench`` uses one); the figure is the ratio of the smallest CPU times (the wall times are reported too).
``--quick`` uses every 4th document (the load, done for all of them, then weighs more).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from benchmarks import synth
from benchmarks.common import Figure, Timer, at_most, info

SECTION = "hooks"
LIMIT = 1.2
TASKS = {
    "agentvqa": ("agentvqa_web_agents", "agentvqa_egocentric_videos", "agentvqa_games", "agentvqa_spatial_planning",
                 "agentvqa_robotics"),
    "robovista": ("robovista_zeroshot_full",),
    "agentx": ("agentx_text_answer", "agentx_generative"),
}
MCQ_REPLY = "Looking at the options, the gripper should move left first. The answer is B."
AGENTX_REPLY = json.dumps({
    "reasoning_steps": [
        {"step": 1, "task": "Describe the image", "tool": "SceneDescriber", "input": "image",
         "output": "A table with blocks.", "thought": "I need the scene first."},
        {"step": 2, "task": "Count the red blocks", "tool": "ObjectCounter", "input": "image, red block",
         "output": "3", "thought": "Three red blocks."},
    ],
    "final_answer": {"value": "3", "justification": "The counter finds three red blocks."},
})


# ---------------------------------------------------------------- bare work
def _decode(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    return image.convert("RGB") if image.mode != "RGB" else (image.load() and image) or image


def _paper_preprocess(image: Image.Image) -> Image.Image:
    """RoboVista's protocol: RGB/L, longer side 720 (never upscaled), JPEG q85 round trip."""
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    scale = 720 / max(image.size)
    if scale < 1:
        image = image.resize((int(image.width * scale), int(image.height * scale)))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=85)
    buffer.seek(0)
    out = Image.open(buffer)
    out.load()
    return out


def _frames(path: str, n: int) -> list[Image.Image]:
    import decord

    reader = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1)
    total = len(reader)
    indices = [round(i * (total - 1) / (n - 1)) for i in range(n)] if total >= n else list(range(total))
    return [Image.fromarray(frame) for frame in reader.get_batch(indices).asnumpy()]


def _parquet_rows(folder: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    table = pq.read_table(next((folder / "data").glob("*.parquet")))
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def bare_agentvqa(folder: Path, ids: Collection[str]) -> int:
    n = 0
    for row in _parquet_rows(folder):
        if row["id"] not in ids:
            continue
        visuals = [_decode(cell["bytes"]) for cell in row["images"] or []]
        if row["video"]:
            visuals += _frames(str(folder / row["video"]), 32)
        text = "\n".join([row["question"], *row["action_history"], "Options:",
                          *(f"{'ABCD'[k]}. {o}" for k, o in enumerate(row["options"])), "Answer with the letter."])
        n += len(visuals) + bool(text)
    return n


def bare_robovista(folder: Path, ids: Collection[str]) -> int:
    n = 0
    for row in _parquet_rows(folder):
        if row["id"] not in ids:
            continue
        visuals = [_paper_preprocess(Image.open(io.BytesIO(cell["bytes"]))) for cell in row["images"]]
        options = "\n".join(f"{'ABCDE'[k]}. {c}" for k, c in enumerate(row["choices"]))
        text = row["question"] + "\n\nOptions:\n" + options
        n += len(visuals) + bool(text)
    return n


def bare_agentx(folder: Path, ids: Collection[str]) -> int:
    data = json.loads((folder / "data.json").read_text())
    n = 0
    for key, value in data.items():
        if key not in ids:
            continue
        record = value[0]
        names = [name.strip() for name in record["file_path"].split(",")]
        if names[0].endswith(".mp4"):
            visuals = _frames(str(folder / "files" / names[0]), 8)
        else:
            visuals = [Image.open(folder / "files" / name).convert("RGB") for name in names]
        n += len(visuals) + bool("Query: " + record["query"])
    return n


BARE = {"agentvqa": bare_agentvqa, "robovista": bare_robovista, "agentx": bare_agentx}


# ---------------------------------------------------------------- hook work
def _reset_caches() -> None:
    """Forget loaded data and decoded media, so every pass pays for them again."""
    from lmms_agentic.adapters import benchmarks, docs, frames, media

    media.configure_image_cache(enabled=True, clear=True)
    frames.clear_cache()
    loaded = getattr(docs, "_CACHE", None)  # (the loaded-documents cache; no public way to empty it)
    if isinstance(loaded, dict):
        loaded.clear()
    benchmarks.clear_cache()


def hook_pass(benchmark: str, ids: Collection[str]) -> int:
    from lmms_agentic.permutations import load_task

    _reset_caches()
    n = 0
    for task in TASKS[benchmark]:
        config, docs = load_task(task)
        kwargs: Mapping[str, Any] = config["lmms_eval_specific_kwargs"]["default"]
        reply = AGENTX_REPLY if benchmark == "agentx" else MCQ_REPLY
        for i, doc_id in enumerate(docs["id"]):
            if doc_id not in ids:
                continue
            doc = docs[i]
            messages = config["doc_to_messages"](doc, kwargs)
            config["process_results"](doc, [reply])
            n += len(messages)
    return n


def _doc_ids(benchmark: str) -> list[str]:
    from lmms_agentic.permutations import load_task

    return [str(i) for task in TASKS[benchmark] for i in load_task(task)[1]["id"]]


def measure(benchmark: str, folder: Path, step: int, repeats: int) -> list[Figure]:
    bare_cpu: list[float] = []
    hook_cpu: list[float] = []
    bare_wall: list[float] = []
    hook_wall: list[float] = []
    every = _doc_ids(benchmark)  # (also warms the imports and the OS file cache for both passes)
    total = len(every)
    picks = set(sorted(every)[::step])
    for _ in range(repeats):
        bare_timer, hook_timer = Timer(), Timer()
        with bare_timer.measure():
            BARE[benchmark](folder, picks)
        with hook_timer.measure():
            hook_pass(benchmark, picks)
        bare_cpu.append(bare_timer.cpu)
        hook_cpu.append(hook_timer.cpu)
        bare_wall.append(bare_timer.wall)
        hook_wall.append(hook_timer.wall)
    ratio = min(hook_cpu) / min(bare_cpu)
    n = len(picks)
    detail = (f"{n} of {total} docs; CPU per doc {min(hook_cpu) / n * 1000:.1f} ms hooks vs "
              f"{min(bare_cpu) / n * 1000:.1f} ms bare; wall ratio {min(hook_wall) / min(bare_wall):.2f}x")
    return [
        at_most(SECTION, f"{benchmark}: hook work / bare decode+resize (CPU)", ratio, LIMIT, "x", detail,
                docs=n, hook_cpu_s=min(hook_cpu), bare_cpu_s=min(bare_cpu), hook_wall_s=min(hook_wall),
                bare_wall_s=min(bare_wall)),
        info(SECTION, f"{benchmark}: hook work per document", min(hook_cpu) / n * 1000, "ms"),
    ]


def run(quick: bool = False) -> list[Figure]:
    folders = synth.ensure_all()
    os.environ.update(synth.data_env(folders))
    figures = []
    for benchmark in TASKS:
        figures += measure(benchmark, folders[benchmark], step=4 if quick else 1, repeats=1)
    return figures


if __name__ == "__main__":
    import sys

    for figure in run(quick="--quick" in sys.argv):
        print(f"{figure.name:60s} {figure.shown():>12s}  {figure.target:10s} {figure.detail}")
