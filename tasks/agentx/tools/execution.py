"""Execution metrics of `agentx_tools`: what happened when the tools ran, per task and per tool.

Per sample (`summarise`, stored as `record["execution"]`): replies used, tool calls, calls that type-checked,
calls whose tool failed (error or limit) or was unavailable (replay miss), invalid replies (no parsable action),
whether a final answer came within the step limit, and the same counts per tool.  Aggregations pool the counts
over every gathered sample (so 1 and N ranks agree; a rate is NaN when nothing counts):
- `valid_call_rate` = type-checked calls / (tool calls + invalid replies);
- `tool_error_rate` = failed calls / type-checked calls; `tool_unavailable_rate` = replay misses / type-checked calls;
- `steps_used` = mean replies per task; `finished_rate` = share of tasks answered within the step limit;
- per tool, `tool_breakdown` = {tool: {calls, valid_rate, error_rate, unavailable_rate, mean_seconds, backends}}:
  not a metric (lmms-eval metrics are numbers); the plugin computes it from `valid_call_rate`'s gathered items when it
  writes the results file, `lmms_agentic.data.agentx_tools.per_tool.<text_answer|generative>` (the aggregations
  themselves write nothing).  `backends` is the backend actually used
  (`remote:model`: the tool server's model backend).
Calls answered `unavailable` because of the infrastructure (a backend's setting, model, endpoint or tool server; not
the model's arguments) are also counted per tool and reason in `infrastructure_failures` next to `per_tool`, and
a warning per such tool (count and reason) is logged at the end of the run, when the results file is written
(`hooks.results_facts`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters import provenance

RUNTIME_KEY = "agentx_tools"
log = logging.getLogger(__name__)
_warned: set[str] = set()


def summarise(state: Mapping[str, Any], max_steps: int, is_generative: bool | None = None) -> dict[str, Any]:
    rounds = list(state.get("rounds") or [])
    per_tool: dict[str, dict[str, Any]] = {}
    for entry in rounds:
        if entry.get("kind") != "call":
            continue
        tool = str(entry.get("tool") or "(unknown tool)")
        counts = per_tool.setdefault(tool, {"calls": 0, "valid": 0, "errors": 0, "unavailable": 0, "seconds": 0.0,
                                            "backends": []})
        counts["calls"] += 1
        if entry.get("valid"):
            counts["valid"] += 1
            counts["seconds"] += float(entry.get("seconds") or 0.0)
            counts["errors"] += entry.get("status") == "error"
            counts["unavailable"] += entry.get("status") == "unavailable"
            if entry.get("backend") and entry["backend"] not in counts["backends"]:
                counts["backends"].append(entry["backend"])
    total = {key: sum(c[key] for c in per_tool.values()) for key in ("calls", "valid", "errors", "unavailable")}
    return {"steps": len(rounds), "invalid_replies": sum(e.get("kind") == "invalid" for e in rounds),
            **total, "finished": bool(state.get("finished")) and len(rounds) <= max_steps,
            "stopped": state.get("stopped"), "max_steps": max_steps, "is_generative": is_generative,
            "per_tool": per_tool}


def view(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """What every execution metric receives for one sample: its execution summary."""
    execution = record.get("execution")
    return execution if isinstance(execution, Mapping) else {}


def _items(items: Sequence[Any]) -> list[Mapping[str, Any]]:
    return [view(item) if "execution" in item else item for item in items if isinstance(item, Mapping)]


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


def per_tool_facts(items: Sequence[Any]) -> dict[str, Any]:
    """The results file's `per_tool.<text_answer|generative>` from a subtask's gathered items (the plugin asks it
    with `valid_call_rate`'s items when it writes the results file; `provenance.from_items`)."""
    rows = _items(items)
    kinds = {row.get("is_generative") for row in rows}
    subtask = "generative" if kinds == {True} else ("text_answer" if kinds == {False} else "mixed")
    return {"per_tool": {subtask: tool_breakdown(rows)}}


@provenance.from_items(RUNTIME_KEY, per_tool_facts)
def valid_call_rate(items: Sequence[Any]) -> float:
    rows = _items(items)
    return _ratio(sum(r.get("valid", 0) for r in rows),
                  sum(r.get("calls", 0) + r.get("invalid_replies", 0) for r in rows))


def tool_error_rate(items: Sequence[Any]) -> float:
    rows = _items(items)
    return _ratio(sum(r.get("errors", 0) for r in rows), sum(r.get("valid", 0) for r in rows))


def tool_unavailable_rate(items: Sequence[Any]) -> float:
    rows = _items(items)
    return _ratio(sum(r.get("unavailable", 0) for r in rows), sum(r.get("valid", 0) for r in rows))


def steps_used(items: Sequence[Any]) -> float:
    rows = _items(items)
    return _ratio(sum(r.get("steps", 0) for r in rows), len(rows))


def finished_rate(items: Sequence[Any]) -> float:
    rows = _items(items)
    return _ratio(sum(bool(r.get("finished")) for r in rows), len(rows))


def failure_lines(failures: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The end-of-run warning per tool that failed for infrastructure reasons, logged once per line per process."""
    from lmms_agentic.adapters.agentic.tool_availability import summary

    lines = summary(failures, RUNTIME_KEY)
    for line in lines:
        if line not in _warned:
            _warned.add(line)
            log.warning("%s", line)
    return lines


def tool_breakdown(items: Sequence[Any]) -> dict[str, dict[str, Any]]:
    pooled: dict[str, dict[str, Any]] = {}
    for row in _items(items):
        for tool, counts in (row.get("per_tool") or {}).items():
            into = pooled.setdefault(tool, {"calls": 0, "valid": 0, "errors": 0, "unavailable": 0, "seconds": 0.0,
                                            "backends": []})
            for key in ("calls", "valid", "errors", "unavailable", "seconds"):
                into[key] += counts.get(key, 0)
            into["backends"] = sorted(set(into["backends"]) | set(counts.get("backends") or []))
    return {tool: {"calls": c["calls"], "valid_rate": _ratio(c["valid"], c["calls"]),
                   "error_rate": _ratio(c["errors"], c["valid"]),
                   "unavailable_rate": _ratio(c["unavailable"], c["valid"]),
                   "mean_seconds": _ratio(c["seconds"], c["valid"]), "backends": c["backends"]}
            for tool, c in sorted(pooled.items())}
