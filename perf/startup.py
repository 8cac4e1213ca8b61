"""Startup: lmms-eval building its task index with the package registered and without it (target: at most 1.05x).

Each measurement is a fresh interpreter that does what the CLI does before it evaluates anything: import
``lmms_eval.models`` (which loads every ``lmms_eval.models`` entry point: ours registers the task folder) and build
``TaskManager()``.  Without: the same with ``LMMS_AGENTIC_AUTO_REGISTER=0`` (the package's opt-out; lmms-eval then
indexes only its own tasks).  The two alternate ``repeats`` times; the figure is the ratio of the fastest wall times
(the run least disturbed by the rest of the machine: on a shared 2-core machine single runs of this 10 s startup vary
by +-10%, more than the 5% to be measured; the medians are shown beside it).  The child also reports how many tasks
the index holds and whether ours are in it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from perf.common import REPO, Figure, at_most, info

SECTION = "startup"
LIMIT = 1.05
CHILD = (
    "import json, time\n"
    "started = time.perf_counter()\n"
    "import lmms_eval.models\n"
    "from lmms_eval.tasks import TaskManager\n"
    "manager = TaskManager()\n"
    "elapsed = time.perf_counter() - started\n"
    "names = manager.all_tasks\n"
    "print(json.dumps({'seconds': elapsed, 'tasks': len(names), 'ours': 'robovista' in names}))\n"
)


def once(with_package: bool) -> dict[str, float]:
    env = {**os.environ, "LMMS_AGENTIC_AUTO_REGISTER": "1" if with_package else "0", "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True,
                          cwd=REPO)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(quick: bool = False) -> list[Figure]:
    repeats = 2 if quick else 5
    once(True)  # warm the OS file cache for both
    bare, ours = [], []
    for _ in range(repeats):
        bare.append(once(False))
        ours.append(once(True))
    bare_s = min(r["seconds"] for r in bare)
    ours_s = min(r["seconds"] for r in ours)
    medians = statistics.median(r["seconds"] for r in ours), statistics.median(r["seconds"] for r in bare)
    detail = (f"fastest of {repeats}: {ours_s:.2f} s with the package ({int(ours[0]['tasks'])} tasks, ours "
              f"{'in' if ours[0]['ours'] else 'MISSING'}) vs {bare_s:.2f} s without ({int(bare[0]['tasks'])} tasks); "
              f"medians {medians[0]:.2f} / {medians[1]:.2f} s")
    figures = [at_most(SECTION, "TaskManager() after importing lmms_eval.models: with / without the package",
                       ours_s / bare_s, LIMIT, "x", detail, with_s=ours_s, without_s=bare_s,
                       tasks_with=ours[0]["tasks"], tasks_without=bare[0]["tasks"])]
    if not ours[0]["ours"]:
        figures[0].ok = False
    figures.append(info(SECTION, "task index added by the package", ours_s - bare_s, "s"))
    return figures


if __name__ == "__main__":
    for figure in run(quick="--quick" in sys.argv):
        print(f"{figure.name:70s} {figure.shown():>10s}  {figure.target:8s} {figure.detail}")
