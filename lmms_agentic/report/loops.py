"""Thinking loops in a run: loop and truncation rates, and accuracy with and without the looped samples.

Reasoning models can cycle without progress until the token limit (AgentVQA App. J). Every sample record carries
the loop verdict of `adapters.loops` on the raw reply (`loop`: the tail is an exact repeat; `truncated`: it ends
inside a loop, unanswered). The report adds what the records cannot know: lmms-eval logs each sample's output token
count (`token_counts[0].output_tokens`, where the backend reports it) and the results file holds the task's
`max_new_tokens`, so a sample that used the whole budget (within `adapters.loops.token_slack`) without an answer is
counted as cut at the limit even when its text shows no loop. The table then shows accuracy over all samples, over
the samples without a loop and over the looped ones, so "thinking hurts model X" can be traced to loops or not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lmms_agentic.adapters.core import scores
from lmms_agentic.adapters.loops import token_slack


def _token_counts(results_file: Path, tasks: Sequence[str]) -> dict[str, int]:
    """Record id -> output tokens, from the run's sample files (absent when the backend reported none)."""
    from lmms_agentic.adapters.samples import read_record

    stamp = results_file.name.removesuffix("_results.json")
    found: dict[str, int] = {}
    for task in tasks:
        path = results_file.parent / f"{stamp}_samples_{task}.jsonl"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            record = read_record(sample)
            counts = sample.get("token_counts") or []
            tokens = counts[0].get("output_tokens") if counts and isinstance(counts[0], dict) else None
            if record is not None and isinstance(tokens, int):
                found[str(record["id"])] = tokens
    return found


def _budget(results: Mapping[str, Any], tasks: Sequence[str]) -> int | None:
    """The tasks' `max_new_tokens` when they agree (the effective budget can be larger on vLLM: max(task, model))."""
    budgets = {((results.get("configs", {}).get(task) or {}).get("generation_kwargs") or {}).get("max_new_tokens")
               for task in tasks}
    budget = budgets.pop() if len(budgets) == 1 else None
    return budget if isinstance(budget, int) and budget > 0 else None


def _fmt(value: float) -> str:
    return "n/a" if value != value else f"{value:.1f}"


def loop_section(results: Mapping[str, Any], variants: Sequence[Any], results_file: Path) -> list[str]:
    """Markdown lines of the report's "Thinking loops" section (one line when no variant shows any)."""
    rows = []
    seen_any = False
    for variant in variants:
        items = [item for item in variant.items if isinstance(item.get("loop"), Mapping)]
        if not items:
            continue
        tokens = _token_counts(results_file, variant.tasks)
        budget = _budget(results, variant.tasks)
        hit = [item for item in items if budget is not None and str(item["id"]) in tokens
               and tokens[str(item["id"])] >= budget - token_slack(budget) and item["pred"] is None]
        looped = [item for item in items if item["loop"]["loop"]]
        clean = [item for item in items if not item["loop"]["loop"]]
        field = variant.correct_field
        seen_any = seen_any or bool(looped or hit) or any(item["loop"]["truncated"] for item in items)
        rows.append(f"| {variant.name} | {len(items)} | {_fmt(scores.percent(len(looped), len(items)))} | "
                    f"{_fmt(scores.rate(items, lambda item: bool(item['loop']['truncated'])))} | "
                    f"{_fmt(scores.percent(len(hit), len(items))) if budget is not None and tokens else 'n/a'} | "
                    f"{_fmt(scores.accuracy(items, field))} | {_fmt(scores.accuracy(clean, field))} | "
                    f"{_fmt(scores.accuracy(looped, field))} ({len(looped)}) |")
    if not rows:
        return []
    if not seen_any:
        return ["", "## Thinking loops", "", "No reply ends in a thinking loop (`adapters/loops.py`) in any variant."]
    return ["", "## Thinking loops (accuracy %, as the headline counts it; `adapters/loops.py`)", "",
            "| variant | n | loop rate | ends in a loop, unanswered | cut at the token limit, unanswered | acc "
            "| acc without looped | acc of looped (n) |", "|---|---:|---:|---:|---:|---:|---:|---:|", *rows]
