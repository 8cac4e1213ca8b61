"""Measures the media cost of option permutations: decode once per question vs once per row.

`python -m lmms_agentic.bench_media [TASK ...]` loads permuted task variants (data located as for an evaluation,
e.g. `LMMS_AGENTIC_DATA=mini`), then builds every row's visuals twice — with the decode-once caches
(`adapters.media.decoded_once`, `adapters.frames`) and with them switched off — and prints the wall time per
row and the extra cost each additional permutation adds. Bounded: at most `--max-rows` rows per task.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from lmms_agentic.adapters import frames, media
from lmms_agentic.permutations import load_task

DEFAULT_TASKS = ("robovista_cot_circular", "agentvqa_egocentric_videos_perm5", "agentvqa_web_agents_perm5")


def _visuals_time(config: dict[str, Any], docs: Any, cached: bool) -> float:
    """Seconds to build every row's visuals; uncached = caches emptied before each row."""
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    media.configure_image_cache(enabled=cached)
    frames.clear_cache()
    started = time.perf_counter()
    for doc in docs:
        if not cached:
            frames.clear_cache()
        config["doc_to_visual"](doc, kwargs)
    return time.perf_counter() - started


def measure(task: str, max_rows: int) -> str:
    config, docs = load_task(task)
    docs = docs.select(range(min(len(docs), max_rows)))
    questions, rows = len(set(docs["group_id"])), len(docs)
    per_row = _visuals_time(config, docs, cached=False)
    once = _visuals_time(config, docs, cached=True)
    media.configure_image_cache(enabled=True)
    first_pass = per_row * questions / rows  # the unavoidable first decode of every question
    extra = max(1, rows - questions)
    return (f"{task}: {rows} rows / {questions} questions | decode per row {per_row:.2f} s "
            f"({per_row / rows * 1000:.1f} ms/row) | decode once per question {once:.2f} s "
            f"({once / rows * 1000:.1f} ms/row) | each extra permutation row: "
            f"{(per_row - first_pass) / extra * 1000:.1f} ms -> {max(0.0, once - first_pass) / extra * 1000:.1f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("tasks", nargs="*", default=list(DEFAULT_TASKS))
    parser.add_argument("--max-rows", type=int, default=500)
    args = parser.parse_args(argv)
    for task in args.tasks:
        print(measure(task, args.max_rows), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
