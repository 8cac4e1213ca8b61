"""Per-document hook work against the bare decode and resize the protocol needs, per benchmark (target <= 1.2x).

Hook work, as lmms-eval does it for one task: ``load_task`` (the data located by ``LMMS_AGENTIC_DATA_<BENCHMARK>``,
read, validated and normalised by the task's ``process_docs``; the first task of a benchmark pays the load, the
others share it), then for every document ``doc_to_messages`` (images decoded and preprocessed, video frames
sampled, the prompt) and ``process_results`` on a typical reply (extraction, metrics, the sample record).

Bare work, what any harness must do for the same protocol: read the table (pyarrow) or ``data.json``, then per row
decode every image (RoboVista: the paper's longest side 720 and JPEG q85 round trip), sample the video frames the
protocol asks for with decord (32 for AgentVQA, 8 for Agent-X), and format the prompt text.

Both run in this process on the same documents, interleaved document by document (the order alternating), so that
a slow spell of a shared machine (single passes vary by +-20% there) weighs on both alike; each reads its data
first (the hook side through ``load_task``).  ``repeats`` such passes (``make bench`` uses one); the figure is the
ratio of the smallest CPU times (the wall times are reported too).
``--quick`` uses every 4th document (the load, done for all of them, then weighs more).
"""

from __future__ import annotations

import functools
import io
import json
import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from perf import synth
from perf.common import Figure, Timer, at_most, info

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


def _agentx_rows(folder: Path) -> list[dict[str, Any]]:
    data = json.loads((folder / "data.json").read_text())
    return [{"id": key, **value[0]} for key, value in data.items()]


def bare_agentvqa(folder: Path, row: dict[str, Any]) -> int:
    visuals = [_decode(cell["bytes"]) for cell in row["images"] or []]
    if row["video"]:
        visuals += _frames(str(folder / row["video"]), 32)
    text = "\n".join([row["question"], *row["action_history"], "Options:",
                      *(f"{'ABCD'[k]}. {o}" for k, o in enumerate(row["options"])), "Answer with the letter."])
    return len(visuals) + bool(text)


def bare_robovista(folder: Path, row: dict[str, Any]) -> int:
    visuals = [_paper_preprocess(Image.open(io.BytesIO(cell["bytes"]))) for cell in row["images"]]
    options = "\n".join(f"{'ABCDE'[k]}. {c}" for k, c in enumerate(row["choices"]))
    text = row["question"] + "\n\nOptions:\n" + options
    return len(visuals) + bool(text)


def bare_agentx(folder: Path, row: dict[str, Any]) -> int:
    names = [name.strip() for name in row["file_path"].split(",")]
    if names[0].endswith(".mp4"):
        visuals = _frames(str(folder / "files" / names[0]), 8)
    else:
        visuals = [Image.open(folder / "files" / name).convert("RGB") for name in names]
    return len(visuals) + bool("Query: " + row["query"])


# benchmark -> (read every row, the per-row work)
BARE: dict[str, tuple[Callable[[Path], list[dict[str, Any]]], Callable[[Path, dict[str, Any]], int]]] = {
    "agentvqa": (_parquet_rows, bare_agentvqa),
    "robovista": (_parquet_rows, bare_robovista),
    "agentx": (_agentx_rows, bare_agentx),
}


# ---------------------------------------------------------------- hook work
def _reset_caches() -> None:
    """Forget loaded data and decoded media, so every pass pays for them again."""
    from lmms_agentic.adapters import benchmarks, documents, frames, media

    media.configure_image_cache(enabled=True, clear=True)
    frames.clear_cache()
    loaded = getattr(documents, "_CACHE", None)  # (the loaded-documents cache; no public way to empty it)
    if isinstance(loaded, dict):
        loaded.clear()
    benchmarks.clear_cache()


def hook_load(benchmark: str) -> dict[str, tuple[Mapping[str, Any], Mapping[str, Any], Any]]:
    """Every task of ``benchmark`` loaded as lmms-eval loads it: {doc id: (task config, kwargs, document)}."""
    from lmms_agentic.devtools.permutations import load_task

    _reset_caches()
    out = {}
    for task in TASKS[benchmark]:
        config, docs = load_task(task)
        kwargs: Mapping[str, Any] = config["lmms_eval_specific_kwargs"]["default"]
        for i, doc_id in enumerate(docs["id"]):
            out[str(doc_id)] = (config, kwargs, docs[i])
    return out


def hook_doc(benchmark: str, config: Mapping[str, Any], kwargs: Mapping[str, Any], doc: Any) -> int:
    """One document's hook work: its messages (media decoded) and the processing of a typical reply."""
    messages = config["doc_to_messages"](doc, kwargs)
    config["process_results"](doc, [AGENTX_REPLY if benchmark == "agentx" else MCQ_REPLY])
    return len(messages)


def _one_pass(benchmark: str, folder: Path, picks: Collection[str]) -> tuple[Timer, Timer]:
    """Both kinds of work over the picked documents, interleaved document by document (which goes first alternates),
    so that a slow spell of a shared machine weighs on both alike."""
    read_rows, bare_row = BARE[benchmark]
    bare_timer, hook_timer = Timer(), Timer()
    with bare_timer.measure():
        rows = {str(row["id"]): row for row in read_rows(folder)}
    with hook_timer.measure():
        loaded = hook_load(benchmark)
    for k, doc_id in enumerate(sorted(picks)):
        config, kwargs, doc = loaded[doc_id]
        order = [(bare_timer, functools.partial(bare_row, folder, rows[doc_id])),
                 (hook_timer, functools.partial(hook_doc, benchmark, config, kwargs, doc))]
        for timer, work in order if k % 2 == 0 else order[::-1]:
            with timer.measure():
                work()
    return bare_timer, hook_timer


def measure(benchmark: str, folder: Path, step: int, repeats: int) -> list[Figure]:
    every = sorted(hook_load(benchmark))  # (also warms the imports and the OS file cache for both kinds of work)
    picks = set(every[::step])
    passes = [_one_pass(benchmark, folder, picks) for _ in range(repeats)]
    bare_cpu = min(bare.cpu for bare, _ in passes)
    hook_cpu = min(hook.cpu for _, hook in passes)
    wall_ratio = min(hook.wall for _, hook in passes) / min(bare.wall for bare, _ in passes)
    n = len(picks)
    detail = (f"{n} of {len(every)} docs; CPU per doc {hook_cpu / n * 1000:.1f} ms hooks vs "
              f"{bare_cpu / n * 1000:.1f} ms bare; wall ratio {wall_ratio:.2f}x")
    return [
        at_most(SECTION, f"{benchmark}: hook work / bare decode+resize (CPU)", hook_cpu / bare_cpu, LIMIT, "x",
                detail, docs=n, hook_cpu_s=hook_cpu, bare_cpu_s=bare_cpu, wall_ratio=wall_ratio),
        info(SECTION, f"{benchmark}: hook work per document", hook_cpu / n * 1000, "ms"),
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
