"""Peak resident memory of an lmms-eval run over the synthetic AgentVQA copy, at 250 and 1,000 items (target: flat).

Two runs of the real CLI, ``lmms-eval --model agentic_scripted --tasks agentvqa --limit L`` (the model is
registered by the package and calls the task's ``doc_to_visual`` for every request, so images are decoded and
video frames sampled as for a real backend), with ``--limit 50`` (5 domains x 50 = 250 items) and ``--limit 200``
(all 1,000).  Peak RSS is what ``/usr/bin/time -v`` reports as "Maximum resident set size" (the process and the
children it waited for); without ``/usr/bin/time``, a psutil sampler of the process tree every 0.1 s.  Target:
the 1,000-item peak at most 1.1x the 250-item peak (media are loaded lazily, per request, not held).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perf import synth
from perf.common import REPO, Figure, at_most, info

SECTION = "memory"
LIMIT = 1.1


def _command(limit: int, output: Path) -> list[str]:
    lmms_eval = Path(sys.executable).with_name("lmms-eval")
    return [str(lmms_eval), "--model", "agentic_scripted", "--model_args", "policy=hash", "--tasks", "agentvqa",
            "--limit", str(limit), "--output_path", str(output), "--batch_size", "1"]


def _sampled_peak(command: list[str], env: dict[str, str]) -> tuple[int, float]:
    import psutil

    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    peak = 0
    parent = psutil.Process(process.pid)
    while process.poll() is None:
        try:
            rss = parent.memory_info().rss + sum(c.memory_info().rss for c in parent.children(recursive=True))
            peak = max(peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.1)
    if process.returncode:
        raise RuntimeError(f"{' '.join(command)} failed with exit status {process.returncode}")
    return peak, time.perf_counter() - started


def peak_rss(limit: int) -> tuple[float, float]:
    """(peak RSS in MiB, wall seconds) of one run."""
    env = {**os.environ, **synth.data_env(synth.ensure_all()), "TQDM_DISABLE": "1"}
    output = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    try:
        command = _command(limit, output)
        time_v = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
        if time_v is None:
            peak, wall = _sampled_peak(command, env)
            return peak / 2**20, wall
        started = time.perf_counter()
        done = subprocess.run([time_v, "-v", *command], env=env, capture_output=True, text=True, cwd=REPO)
        wall = time.perf_counter() - started
        if done.returncode:
            raise RuntimeError(f"lmms-eval --limit {limit} failed ({done.returncode}): {done.stderr[-2000:]}")
        match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        if match is None:
            raise RuntimeError("/usr/bin/time -v printed no maximum resident set size")
        return int(match.group(1)) / 1024, wall
    finally:
        shutil.rmtree(output, ignore_errors=True)


def run(quick: bool = False) -> list[Figure]:
    small, small_wall = peak_rss(50)
    large, large_wall = peak_rss(200)
    detail = (f"peak RSS {small:.0f} MiB at 250 items ({small_wall:.0f} s), {large:.0f} MiB at 1,000 items "
              f"({large_wall:.0f} s)")
    return [
        at_most(SECTION, "peak RSS, lmms-eval agentvqa run: 1,000 items / 250 items", large / small, LIMIT, "x",
                detail, peak_250_mib=small, peak_1000_mib=large, wall_250_s=small_wall, wall_1000_s=large_wall),
        info(SECTION, "peak RSS at 1,000 items", large, "MiB"),
    ]


if __name__ == "__main__":
    for figure in run(quick="--quick" in sys.argv):
        print(f"{figure.name:60s} {figure.shown():>10s}  {figure.target:8s} {figure.detail}")
