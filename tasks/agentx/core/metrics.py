"""Agent-X metrics: the per-row view each metric receives, and the aggregations (on the paper's 0-1 scale).

Every aggregation accepts the values lmms-eval gathered from all ranks: sample records (the first metric of a task
receives the whole record, see `adapters.samples`) or views of them, and applies the metric's view to a record
first. None means "this row does not count for this metric". Values are never rounded here (print with
`format_row`); NaN when nothing is scored, never an exception on an empty list.

Rules (reproducing the README tables from the authors' `analysis/metrics.ipynb`; see tasks/agentx/README.md):

* the eight direct judged metrics (`ground_s` ... `toolset_acc`): mean over every item whose judge result is scored,
  generative items included; an unscored or absent result ("missing") leaves the mean and lowers `cov_<...>`;
* `goal_acc`: the same over the non-generative items only;
* `goal_imggen` (README Goal_acc*): over the generative items only, the mean of the three means of `tool_p`,
  `tool_acc` and `toolset_acc` (NaN if any of the three has no scored item);
* "generative" is decided **by key**: `id` in `protocol.GENERATIVE_IDS` (the notebook's list is row positions, which
  shift when predictions are missing); a record's `is_generative` flag is only used for a record without an id, and
  a disagreement is logged (the key wins).

Names: no metric name is a substring of another (lmms-eval matches group metrics by substring), so Goal_acc* is
`goal_imggen` and the coverage metrics are `cov_<short>` names (`COVERAGE`). Low judge coverage warns (or raises with
`LMMS_AGENTIC_JUDGE_STRICT_COVERAGE=1`) through `judges.coverage` when a judged mean is computed.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.judges.coverage import MISSING, judged_coverage, judged_mean
from lmms_agentic.tasks.agentx.errors import CATEGORIES
from lmms_agentic.tasks.agentx.judge import GOAL_METRIC, METRICS
from lmms_agentic.tasks.agentx.protocol import GENERATIVE_IDS
from lmms_agentic.tasks.agentx.trace import FAILURES, PARSE_FAILURES

log = logging.getLogger(__name__)
Items = Sequence[Mapping[str, Any] | None]
View = Callable[[Mapping[str, Any]], Any]
NAN = math.nan

DIRECT: tuple[str, ...] = tuple(name for name, _ in METRICS if name != GOAL_METRIC)
"""The eight judged metrics averaged over all items."""
GOAL_STAR = "goal_imggen"
"""README Goal_acc* ("Goal Accuracy w/ ImgGen"): derived, no judge call."""
GOAL_STAR_PARTS: tuple[str, ...] = ("tool_p", "tool_acc", "toolset_acc")
COVERAGE: dict[str, str] = {
    "ground_s": "cov_ground", "tool_p": "cov_toolprec", "tool_acc": "cov_toolacc", "fact_acc": "cov_faith",
    "context_s": "cov_context", "fact_p": "cov_factprec", "sem_acc": "cov_semantic", "goal_acc": "cov_goal",
    "toolset_acc": "cov_toolset", GOAL_STAR: "cov_imggen",
}
"""Judged metric -> its coverage metric (scored / eligible items: all, non-generative, or generative)."""
TRACE_ISSUES: frozenset[str] = frozenset(FAILURES) - frozenset(PARSE_FAILURES)
"""Failure classes of a reply that DID parse (several tools in a step, an unknown tool, no final answer)."""
DETERMINISTIC: tuple[str, ...] = ("toolset_f1_prog", "format_error_rate", "exact_match_acc", "parse_failure_rate")
ERROR_KEYS: tuple[str, ...] = tuple(key for members in CATEGORIES.values() for key in members)
REPORTED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Ground_s", "ground_s"), ("Tool_p", "tool_p"), ("Tool_acc", "tool_acc"), ("Fact_acc", "fact_acc"),
    ("Context_s", "context_s"), ("Fact_p", "fact_p"), ("Sem_acc", "sem_acc"), ("Goal_acc", "goal_acc"),
    ("Goal_acc*", GOAL_STAR), ("Tool_acc^s", "toolset_acc"),
)
"""README column -> metric name, in the README's order."""


# ---------------------------------------------------------------- selection and views
def is_generative(item: Mapping[str, Any]) -> bool:
    """True for a generative (image-output) task, by its `data.json` key; `is_generative` only without an id."""
    key = item.get("id")
    if key is None:
        return bool(item.get("is_generative", False))
    return str(key) in GENERATIVE_IDS


def _is_record(item: Mapping[str, Any]) -> bool:
    return "id" in item or "judge" in item


def _judged(record: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """The compact judge outcome of `metric`: `{"score": s}` or `{"unscored_reason": r}` ("missing" if absent)."""
    result = (record.get("judge") or {}).get(metric)
    if not isinstance(result, Mapping):
        return {"unscored_reason": MISSING}
    if result.get("unscored_reason") is not None:
        return {"unscored_reason": result["unscored_reason"]}
    return {"score": result["score"]}


def _direct_view(metric: str) -> View:
    return lambda record: _judged(record, metric)


def _goal_view(record: Mapping[str, Any]) -> Any:
    return None if is_generative(record) else _judged(record, GOAL_METRIC)


def _imggen_view(record: Mapping[str, Any]) -> Any:
    return {"parts": {part: _judged(record, part) for part in GOAL_STAR_PARTS}} if is_generative(record) else None


def _flag_view(field: str, true_means: bool = True) -> View:
    def view(record: Mapping[str, Any]) -> Any:
        value = record.get(field)
        return None if value is None else {"score": 1.0 if bool(value) == true_means else 0.0}

    return view


def _number_view(record: Mapping[str, Any]) -> Any:
    value = record.get("toolset_f1_prog")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return {"score": float(value)}


def _unreadable(record: Mapping[str, Any]) -> bool:
    """Nothing could be read from the reply: `parse_failure` set, and not to an issue of a trace that did parse
    (records written before version 1.1 put the first trace issue, e.g. "missing_final_answer", there)."""
    failure = record.get("parse_failure")
    return bool(failure) and failure not in TRACE_ISSUES


def _error_view(key: str) -> View:
    def view(record: Mapping[str, Any]) -> Any:
        flag = (record.get("errors") or {}).get(key)
        return None if flag is None else {"score": 1.0 if flag else 0.0}

    return view


VIEWS: dict[str, View] = {
    **{name: _direct_view(name) for name in DIRECT},
    GOAL_METRIC: _goal_view,
    GOAL_STAR: _imggen_view,
    **{COVERAGE[name]: _direct_view(name) for name in DIRECT},
    COVERAGE[GOAL_METRIC]: _goal_view,
    COVERAGE[GOAL_STAR]: _imggen_view,
    "toolset_f1_prog": _number_view,
    "format_error_rate": _flag_view("format_ok", true_means=False),
    "exact_match_acc": _flag_view("exact_match"),
    "parse_failure_rate": lambda record: {"score": 1.0 if _unreadable(record) else 0.0},
    **{f"err_{key}": _error_view(key) for key in ERROR_KEYS},
    "loop_rate": lambda record: {"score": 1.0 if (record.get("loop") or {}).get("loop") else 0.0},
    "truncation_rate": lambda record: {"score": 1.0 if (record.get("loop") or {}).get("truncated") else 0.0},
}


def _check_flags(items: Items) -> None:
    mismatched = [str(item["id"]) for item in items if item is not None and _is_record(item)
                  and item.get("id") is not None and item.get("is_generative") is not None
                  and bool(item["is_generative"]) != is_generative(item)]
    if mismatched:
        log.warning("Agent-X: %d payload(s) carry an is_generative flag that disagrees with the generative id list "
                    "(ids %s); the id list (by key) is used", len(mismatched), ", ".join(mismatched[:10]))


def _views(items: Items, metric: str) -> list[Any]:
    """Each item's view of `metric` (records are viewed first; rows that do not count are dropped)."""
    view = VIEWS[metric]
    out = []
    for item in items:
        value = view(item) if item is not None and _is_record(item) else item
        if value is not None:
            out.append(value)
    return out


# ---------------------------------------------------------------- judged metrics
def _direct(metric: str, items: Items) -> float:
    return judged_mean(metric, _views(items, metric))


def ground_s(items: Items) -> float:
    return _direct("ground_s", items)


def tool_p(items: Items) -> float:
    return _direct("tool_p", items)


def tool_acc(items: Items) -> float:
    return _direct("tool_acc", items)


def fact_acc(items: Items) -> float:
    return _direct("fact_acc", items)


def context_s(items: Items) -> float:
    return _direct("context_s", items)


def fact_p(items: Items) -> float:
    return _direct("fact_p", items)


def sem_acc(items: Items) -> float:
    return _direct("sem_acc", items)


def toolset_acc(items: Items) -> float:
    return _direct("toolset_acc", items)


def goal_acc(items: Items) -> float:
    """Goal accuracy over the scored non-generative items (generative ones are masked by key); NaN if none."""
    _check_flags(items)
    return judged_mean(GOAL_METRIC, _views(items, GOAL_METRIC))


def goal_imggen_parts(items: Items) -> dict[str, float]:
    """The three generative-only means behind Goal_acc* ({"tool_p": ..., "tool_acc": ..., "toolset_acc": ...})."""
    _check_flags(items)
    views = _views(items, GOAL_STAR)
    return {part: judged_mean(f"{GOAL_STAR}[{part}]", [v["parts"][part] for v in views]) for part in GOAL_STAR_PARTS}


def goal_imggen(items: Items) -> float:
    """Goal_acc*: mean of the generative-only means of tool_p, tool_acc and toolset_acc (NaN if one is NaN)."""
    means = list(goal_imggen_parts(items).values())
    return NAN if any(math.isnan(m) for m in means) else sum(means) / len(means)


# ---------------------------------------------------------------- coverage
def _coverage(metric: str, items: Items) -> float:
    return judged_coverage(_views(items, COVERAGE[metric]))


def cov_ground(items: Items) -> float:
    return _coverage("ground_s", items)


def cov_toolprec(items: Items) -> float:
    return _coverage("tool_p", items)


def cov_toolacc(items: Items) -> float:
    return _coverage("tool_acc", items)


def cov_faith(items: Items) -> float:
    return _coverage("fact_acc", items)


def cov_context(items: Items) -> float:
    return _coverage("context_s", items)


def cov_factprec(items: Items) -> float:
    return _coverage("fact_p", items)


def cov_semantic(items: Items) -> float:
    return _coverage("sem_acc", items)


def cov_toolset(items: Items) -> float:
    return _coverage("toolset_acc", items)


def cov_goal(items: Items) -> float:
    return _coverage(GOAL_METRIC, items)


def cov_imggen(items: Items) -> float:
    """Mean over the three Goal_acc* parts of their scored share among the generative items."""
    views = _views(items, COVERAGE[GOAL_STAR])
    return sum(judged_coverage([v["parts"][p] for v in views]) for p in GOAL_STAR_PARTS) / len(GOAL_STAR_PARTS)


# ---------------------------------------------------------------- deterministic companions
def _mean(metric: str, items: Items) -> float:
    scores = [float(view["score"]) for view in _views(items, metric)]
    return math.fsum(scores) / len(scores) if scores else NAN


def toolset_f1_prog(items: Items) -> float:
    """Mean programmatic toolset F1 over items that carry one."""
    return _mean("toolset_f1_prog", items)


def format_error_rate(items: Items) -> float:
    """Share of items whose output failed the format checks (`format_ok` false)."""
    return _mean("format_error_rate", items)


def exact_match_acc(items: Items) -> float:
    """Mean exact match over the items where it is defined (`exact_match` not None)."""
    return _mean("exact_match_acc", items)


def parse_failure_rate(items: Items) -> float:
    """Share of items from whose reply nothing could be read: no output, or no JSON / Python-literal object
    (`parse_failure` is "no_output" or "invalid_json").  A reply that parsed but lacks a final answer is not a parse
    failure: generative tasks have an empty GT answer, so their own GT traces carry none (see README)."""
    return _mean("parse_failure_rate", items)


def loop_rate(items: Items) -> float:
    """Share of replies ending in a thinking loop (`adapters.loops`; 0-1 scale like every Agent-X metric)."""
    return _mean("loop_rate", items)


def truncation_rate(items: Items) -> float:
    """Share of replies that end inside a loop (or at the token limit) with nothing parsed."""
    return _mean("truncation_rate", items)


def error_rate(items: Items, key: str) -> float:
    """Share of items flagged `key` by the error taxonomy (over items that carry the key); NaN for other keys."""
    metric = f"err_{key}"
    return _mean(metric, items) if metric in VIEWS else NAN


def err_no_action_no_response(items: Items) -> float:
    return error_rate(items, "no_action_no_response")


def err_whole_response_is_thought(items: Items) -> float:
    return error_rate(items, "whole_response_is_thought")


def err_tool_conflict_or_repetition(items: Items) -> float:
    return error_rate(items, "tool_conflict_or_repetition")


def err_invalid_json_format(items: Items) -> float:
    return error_rate(items, "invalid_json_format")


def err_answer_without_format(items: Items) -> float:
    return error_rate(items, "answer_without_format")


def err_misinterpreting_visual_content(items: Items) -> float:
    return error_rate(items, "misinterpreting_visual_content")


def err_step_keyword_mismatch(items: Items) -> float:
    return error_rate(items, "step_keyword_mismatch")


# ---------------------------------------------------------------- registry and printing
def error_keys() -> tuple[str, ...]:
    """The error taxonomy's keys (`errors.CATEGORIES`), one `err_<key>` metric each."""
    return ERROR_KEYS


def _registry() -> dict[str, Callable[[Items], float]]:
    names = [*DIRECT, GOAL_METRIC, GOAL_STAR, *COVERAGE.values(), *DETERMINISTIC, *(f"err_{k}" for k in ERROR_KEYS),
             "loop_rate", "truncation_rate"]
    return {name: globals()[name] for name in names}


def metric_names(is_generative: bool | None = None) -> tuple[str, ...]:
    """Every aggregation this module provides (judged, Goal_acc*, coverage, deterministic, one per error key).

    With `is_generative` given: the metrics an item of that kind feeds (a generative item feeds no Goal_acc, a
    text-answer item no Goal_acc*)."""
    skip: set[str] = set()
    if is_generative is True:
        skip = {GOAL_METRIC, COVERAGE[GOAL_METRIC]}
    elif is_generative is False:
        skip = {GOAL_STAR, COVERAGE[GOAL_STAR]}
    return tuple(name for name in _registry() if name not in skip)


def summary(items: Items, names: Sequence[str] | None = None) -> dict[str, float]:
    """{metric: value} for `names` (default: all of `metric_names()`)."""
    registry = _registry()
    return {name: registry[name](items) for name in (names if names is not None else registry)}


def reported_row(items: Items) -> dict[str, float]:
    """The README row: {column: value} in README order (0-1 scale, unrounded)."""
    registry = _registry()
    return {column: registry[metric](items) for column, metric in REPORTED_COLUMNS}


def format_row(row: Mapping[str, float], digits: int = 2) -> dict[str, str]:
    """Values as printed in the README (`digits` decimals; NaN as "nan")."""
    return {column: "nan" if math.isnan(value) else f"{value:.{digits}f}" for column, value in row.items()}
