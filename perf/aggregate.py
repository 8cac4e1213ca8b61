"""Aggregation, bootstrap intervals and the report on 1,000 questions x 5 permutations (target: under 3 s, one core).

The run folder is written once into ``.cache/bench/run_perm5/``: the five ``agentvqa_<domain>_perm5`` tasks over
the synthetic AgentVQA copy (5,000 rows), every row's sample record made by the task's own ``process_results`` on
a reply drawn per row (a seeded mix of right letters, wrong letters, "A" and no answer), written as lmms-eval
writes ``<ts>_samples_<task>.jsonl`` lines, plus a ``<ts>_results.json`` naming the ``agentvqa_perm5`` group.

Timed, in a child process pinned to one core with one BLAS/OpenMP thread (CPU time, imports included):
* aggregation: every metric's aggregation function of every task's metric list over its per-row values, as
  lmms-eval calls them after gathering the ranks;
* report: ``lmms_agentic.report.write_report`` on the folder (``collect``, tables, the 95% bootstrap intervals it
  computes itself, charts).
The target is on their sum.  For scale: ``adapters.stats.bootstrap_ci`` of the pooled accuracy, clustered by
question, with the report's 1,000 resamples (reported on its own, not added).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from perf import synth
from perf.common import CACHE, REPO, Figure, at_most, info

SECTION = "aggregate"
LIMIT_S = 3.0
RUN = CACHE / "run_perm5"
STAMP = "20260601_000000"
TASKS = tuple(f"agentvqa_{d}_perm5" for d in
              ("web_agents", "egocentric_videos", "games", "spatial_planning", "robotics"))
VERSION = 1


def _reply(rng: random.Random, gold: str) -> str:
    roll = rng.random()
    if roll < 0.45:
        return f"The answer is {gold}."
    if roll < 0.75:
        return f"Answer: {rng.choice('ABCD')}"
    if roll < 0.9:
        return "A"
    return "I cannot tell from these images."


def build_run(folder: Path = RUN) -> Path:
    """The synthetic run folder (written when missing or stale); returns its results file."""
    results_file = folder / f"{STAMP}_results.json"
    stamp = folder / "stamp.json"
    if results_file.is_file() and stamp.is_file() and json.loads(stamp.read_text()) == {"version": VERSION}:
        return results_file
    from lmms_agentic.devtools.permutations import load_task

    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    results: dict[str, Any] = {}
    for task in TASKS:
        config, docs = load_task(task)
        lines = []
        for doc_id, doc in enumerate(docs.remove_columns([c for c in ("images",) if c in docs.column_names])):
            out = config["process_results"](doc, [_reply(rng, str(doc["answer"]))])
            lines.append(json.dumps({"doc_id": doc_id, "target": str(doc["answer"]), **out}, default=str))
        (folder / f"{STAMP}_samples_{task}.jsonl").write_text("\n".join(lines) + "\n")
        results[task] = {"alias": task, "samples": len(docs)}
    results_file.write_text(json.dumps({
        "results": results, "group_subtasks": {"agentvqa_perm5": list(TASKS)},
        "configs": {}, "config": {"model": "synthetic"}, "n-samples": {}}, indent=1))
    stamp.write_text(json.dumps({"version": VERSION}))
    return results_file


def _child(results_file: Path) -> dict[str, float]:
    """Runs in the pinned child: the three timed parts (CPU seconds)."""
    import time

    from lmms_agentic.adapters import stats
    from lmms_agentic.adapters.core import scores
    from lmms_agentic.devtools.permutations import resolved_config, task_path
    from lmms_agentic.report import collect, write_report

    samples = {task: [json.loads(line) for line in (results_file.parent / f"{STAMP}_samples_{task}.jsonl")
                      .read_text().splitlines()] for task in TASKS}
    configs = {task: resolved_config(task_path(task)) for task in TASKS}
    started = time.process_time()
    for task, lines in samples.items():
        for metric in configs[task]["metric_list"]:
            name = metric["metric"]
            metric["aggregation"]([line[name] for line in lines if name in line])
    aggregation = time.process_time() - started

    started = time.process_time()
    write_report(results_file.parent)
    report = time.process_time() - started

    _, variants = collect(results_file)
    items = [item for variant in variants for item in variant.items]
    started = time.process_time()
    stats.bootstrap_ci(items, lambda xs: scores.accuracy(xs), cluster_key="group_id", n_boot=1000)
    bootstrap = time.process_time() - started
    return {"aggregation": aggregation, "bootstrap": bootstrap, "report": report, "rows": float(len(items))}


def run(quick: bool = False) -> list[Figure]:
    folders = synth.ensure_all()
    os.environ.update(synth.data_env(folders))
    results_file = build_run()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"}
    command = [sys.executable, "-c", "import json, sys; from perf.aggregate import _child; from pathlib import "
               f"Path; print(json.dumps(_child(Path({str(results_file)!r}))))"]
    if hasattr(os, "sched_setaffinity"):
        command = ["taskset", "-c", str(min(os.sched_getaffinity(0))), *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd=REPO)
    parts = json.loads(done.stdout.strip().splitlines()[-1])
    total = parts["aggregation"] + parts["report"]
    detail = (f"{int(parts['rows'])} rows; aggregation {parts['aggregation']:.2f} s, report (with its bootstrap "
              f"intervals) {parts['report']:.2f} s (CPU, one core)")
    return [
        at_most(SECTION, "1,000 questions x 5 permutations: aggregation + report", total, LIMIT_S, "s", detail,
                **parts),
        info(SECTION, "  of which write_report", parts["report"], "s"),
        info(SECTION, "  bootstrap_ci of the pooled accuracy (1,000 resamples, by question)", parts["bootstrap"], "s"),
    ]


if __name__ == "__main__":
    for figure in run():
        print(f"{figure.name:60s} {figure.shown():>10s}  {figure.target:8s} {figure.detail}")
