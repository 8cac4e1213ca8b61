"""Media work: 32-frame sampling with decord against PyAV on long videos, and a 5-permutation run against a plain one.

* Frame sampling: ``adapters.frames.sample_frames(path, 32, use_cache=False)`` on the synthetic 40-60 s clips
  (24-30 fps, so 960-1,800 frames each), once with decord only and once with PyAV only (best of 2, CPU time).
  Informational: how much the PyAV fallback costs.
* Permutations (target: at most 1.1x): ``doc_to_visual`` for every row of ``agentvqa_<domain>_perm5`` (each
  question shown under 5 option orders) against every row of ``agentvqa_<domain>`` over the same questions, caches
  emptied before each pass.  The rows of one question share their media (decoded once per question), so the extra
  four orders should cost next to nothing.  ``--quick`` (and the default, to fit the 15-minute budget) takes the
  first ``QUESTIONS`` questions of each domain.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from perf import synth
from perf.common import Figure, Timer, at_most, best_of, info

SECTION = "media"
LIMIT = 1.1
DOMAINS = ("web_agents", "egocentric_videos", "games", "spatial_planning", "robotics")
QUESTIONS = 40  # per domain


def _visual_pass(config: dict[str, Any], docs: Any, ids: set[str]) -> int:
    """``doc_to_visual`` of every row whose question (``group_id`` in a permutation task, else ``id``) is in ids,
    in the documents' order (lmms-eval's order for a simple model)."""
    from lmms_agentic.adapters import frames, media

    media.configure_image_cache(enabled=True, clear=True)
    frames.clear_cache()
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    questions = docs["group_id" if "group_id" in docs.column_names else "id"]
    return sum(len(config["doc_to_visual"](docs[i], kwargs)) for i, question in enumerate(questions)
               if question in ids)


def permutations(questions: int) -> list[Figure]:
    from lmms_agentic.devtools.permutations import load_task

    plain_timer, perm_timer = Timer(), Timer()
    rows = 0
    for domain in DOMAINS:
        plain = load_task(f"agentvqa_{domain}")
        permuted = load_task(f"agentvqa_{domain}_perm5")
        ids = set(sorted(plain[1]["id"])[:questions])
        with plain_timer.measure():
            _visual_pass(*plain, ids)
        with perm_timer.measure():
            _visual_pass(*permuted, ids)
        rows += sum(1 for i in permuted[1]["group_id"] if i in ids)
    n = questions * len(DOMAINS)
    detail = (f"{n} questions, {rows} permuted rows in the task's row order (a question's orders are adjacent, "
              f"adapters/permutation.py); media CPU {plain_timer.cpu:.1f} s plain vs {perm_timer.cpu:.1f} s with 5 "
              "orders (before: order-major rows, 2.08x)")
    return [
        at_most(SECTION, "5-permutation run / plain run: media work (CPU)", perm_timer.cpu / plain_timer.cpu, LIMIT,
                "x", detail, plain_cpu_s=plain_timer.cpu, perm5_cpu_s=perm_timer.cpu, questions=n, rows=rows),
    ]


def decoders(repeats: int) -> list[Figure]:
    from lmms_agentic.adapters import frames

    root = synth.ensure("agentvqa").parent / "_clips"
    clips = sorted(p for p in root.glob("clip_*.mp4") if int(p.name.split("_")[1][:-1]) >= 40)
    decord_cpu = pyav_cpu = 0.0
    for clip in clips:
        decord_cpu += best_of(repeats, partial(frames.sample_frames, clip, 32, use_cache=False,
                                               decoders=("decord",)))[1]
        pyav_cpu += best_of(repeats, partial(frames.sample_frames, clip, 32, use_cache=False, decoders=("pyav",)))[1]
    n = len(clips)
    detail = (f"{n} clips of 40-60 s; per video: decord {decord_cpu / n * 1000:.0f} ms, PyAV {pyav_cpu / n * 1000:.0f} "
              "ms (CPU)")
    return [info(SECTION, "32 frames of a 40-60 s video: PyAV / decord", pyav_cpu / decord_cpu, "x", detail,
                 decord_ms=decord_cpu / n * 1000, pyav_ms=pyav_cpu / n * 1000),
            info(SECTION, "32 frames of a 40-60 s video with decord", decord_cpu / n * 1000, "ms")]


def run(quick: bool = False) -> list[Figure]:
    os.environ.update(synth.data_env(synth.ensure_all()))
    return decoders(1 if quick else 2) + permutations(QUESTIONS // 2 if quick else QUESTIONS)


if __name__ == "__main__":
    import sys

    for figure in run(quick="--quick" in sys.argv):
        print(f"{figure.name:55s} {figure.shown():>10s}  {figure.target:8s} {figure.detail}")
