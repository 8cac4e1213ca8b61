"""Hand-written lmms-eval output folders for the reproduction, report and rescore tests.

``write_run`` writes what lmms-eval writes for a run of the RoboVista zero-shot group and the AgentVQA group (a
results file with groups and metrics, and one sample file per subtask whose lines carry the benchmark's record
under the first metric), for a model whose correctness per item is given. The records follow
``adapters.samples``; everything else the report needs comes from the benchmarks' manifests.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROBOVISTA_DOMAINS = ("agriculture", "domestic", "industrial_manufacturing")
AGENTVQA_DOMAINS = ("games", "robotics", "web_agents")
Correct = Callable[[str, str, int], bool]
"""(benchmark, domain, item index) -> whether the model answered that item correctly."""


def _robovista_line(n: int, domain: str, index: int, ok: bool) -> dict[str, Any]:
    record = {"benchmark": "robovista", "id": f"rv_{domain}_{index}", "domain": domain, "source": "s",
              "answer": "B", "pred": "B" if ok else "C", "correct": ok, "correct_parity": ok, "pred_parity":
              "B" if ok else "C", "ability_split": "SC" if index % 2 else "PL", "ability_type": "scene_understanding",
              "confidence": None, "score": 100.0 if ok else 0.0}
    return {"doc_id": n, "filtered_resps": record["pred"], "parity_acc": record,
            "strict_acc": {"score": 100.0 if ok else 0.0},
            "perception_acc": {"score": 100.0 if ok else 0.0} if index % 2 else None,
            "planning_acc": None if index % 2 else {"score": 100.0 if ok else 0.0}}


def _agentvqa_line(n: int, domain: str, index: int, ok: bool) -> dict[str, Any]:
    record = {"benchmark": "agentvqa", "id": f"av_{domain}_{index}", "domain": domain, "source": "s",
              "answer": "A", "pred": "A" if ok else "D", "correct": ok, "score": 100.0 if ok else 0.0}
    return {"doc_id": n, "filtered_resps": record["pred"], "accuracy": record}


def write_run(folder: Path, correct: Correct, *, model_args: str = "", model: str = "vllm", items: int = 12,
              stamp: str = "20260101_000000", extra: Mapping[str, Any] | None = None) -> Path:
    """A finished two-benchmark run under ``folder``; returns its results file."""
    folder.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    groups: dict[str, list[str]] = {}
    for benchmark, domains, metric, line in (("robovista", ROBOVISTA_DOMAINS, "parity_acc", _robovista_line),
                                             ("agentvqa", AGENTVQA_DOMAINS, "accuracy", _agentvqa_line)):
        groups[benchmark] = [f"{benchmark}_{d}" for d in domains]
        accuracies = []
        for domain in domains:
            lines = [line(i, domain, i, correct(benchmark, domain, i)) for i in range(items)]
            accuracy = 100.0 * sum(correct(benchmark, domain, i) for i in range(items)) / items
            accuracies.append(accuracy)
            results[f"{benchmark}_{domain}"] = {f"{metric},none": accuracy, f"{metric}_stderr,none": "N/A"}
            path = folder / f"{stamp}_samples_{benchmark}_{domain}.jsonl"
            path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        results[benchmark] = {f"{metric},none": sum(accuracies) / len(accuracies)}
    target = folder / f"{stamp}_results.json"
    target.write_text(json.dumps({"results": results, "group_subtasks": groups,
                                  "config": {"model": model, "model_args": model_args, "limit": None},
                                  **(extra or {})}), encoding="utf-8")
    return target
