"""Hand-written Agent-X runs (lmms-eval layout, or lm-eval's) for the report, compare and coverage tests.

``write_agentx_run`` writes a results file with the `agentx` task and one sample file whose lines carry the record
under the first metric (`ground_s`, with the judge's result per judged metric in ``record["judge"]``) and compact
views under the others: ``{"score": x}`` when the judge scored the item, ``{"unscored_reason": r}`` when it did not,
and the deterministic ``exact_match_acc`` view, as ``tasks/agentx`` logs them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

JUDGED = ("ground_s", "tool_p", "goal_acc")


def _result(score: float | None) -> dict[str, Any]:
    if score is None:
        return {"score": None, "scored": False, "unscored_reason": "no_judge_configured", "judge_model": ""}
    return {"score": score, "scored": True, "unscored_reason": None, "judge_model": "gpt-4o-2024-08-06"}


def write_agentx_run(folder: Path, scores: list[float | None], *, model_args: str = "model=Qwen/Qwen2.5-VL-7B-Instruct",
                     stamp: str = "20260105_000000", limit: int | None = None, layout: str = "lmms-eval",
                     exact: list[bool] | None = None) -> Path:
    """An Agent-X run whose judged metrics get ``scores`` per item (None: unscored); returns the results file."""
    folder.mkdir(parents=True, exist_ok=True)
    exact = exact if exact is not None else [i % 2 == 0 for i in range(len(scores))]
    lines = []
    for n, (score, ok) in enumerate(zip(scores, exact, strict=True)):
        record = {"benchmark": "agentx", "id": f"ax{n}", "is_generative": False, "query_type": "objective",
                  "media_type": "image", "judge": {m: _result(score) for m in JUDGED}}
        line: dict[str, Any] = {"doc_id": n, "filtered_resps": "{}", "ground_s": record,
                                "exact_match_acc": {"score": 1.0 if ok else 0.0}}
        for metric in JUDGED[1:]:
            line[metric] = {"score": score} if score is not None else {"unscored_reason": "no_judge_configured"}
        lines.append(line)
    scored = [s for s in scores if s is not None]
    mean = sum(scored) / len(scored) if scored else math.nan
    row = {f"{m},none": mean for m in JUDGED} | {"exact_match_acc,none": sum(exact) / len(exact)}
    if layout == "lmms-eval":
        results_file, samples = folder / f"{stamp}_results.json", folder / f"{stamp}_samples_agentx.jsonl"
        args: Any = model_args
    else:
        results_file, samples = folder / f"results_{stamp}.json", folder / f"samples_agentx_{stamp}.jsonl"
        args = dict(part.split("=", 1) for part in model_args.split(",") if part)
        row = {k: v for k, v in row.items() if not (isinstance(v, float) and math.isnan(v))}  # lm-eval drops NaN
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    results_file.write_text(json.dumps({"results": {"agentx": row}, "group_subtasks": {"agentx": []},
                                        "config": {"model": "vllm", "model_args": args, "limit": limit}}),
                            encoding="utf-8")
    return results_file
