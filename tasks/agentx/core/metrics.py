"""Agent-X metrics: the names, the per-row view each metric receives, and the aggregations (0-1 scale).

Aggregations take what the harness gathered from all ranks: sample records (the first metric's value) or views of
them (None: the row does not count). Values are never rounded (`format_row` prints them); NaN when nothing counts.

Rules (reproducing the README tables from the authors' `analysis/metrics.ipynb`; see the benchmark's README):

* the eight direct judged metrics (`ground_s` ... `toolset_acc`): mean over every item whose judge result is scored,
  generative items included; an unscored or absent result ("missing") leaves the mean and lowers `cov_<...>`;
* `goal_acc`: the same over the non-generative items only;
* `goal_imggen` (README Goal_acc*): over the generative items only, the mean of the three means of `tool_p`,
  `tool_acc` and `toolset_acc` (NaN if any of the three has no scored item);
* "generative" is decided **by key**: `id` in `release_data.GENERATIVE_IDS` (the notebook's list is row positions, which
  shift when predictions are missing); a record's `is_generative` flag is only used for a record without an id, and
  a disagreement is logged (the key wins).

Names: `METRICS` is every metric a task reports, in report order; no name is a substring of another (lmms-eval
matches group metrics by substring), so Goal_acc* is `goal_imggen` and the coverage metrics are `cov_<short>` names
(`COVERAGE`). `aggregate` computes any of them; a judged mean goes through the `JudgedMean` passed in (default
`scored_mean`; the plugin's, `tasks/agentx/aggregations.py`, also warns on low judge coverage).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.tasks.agentx.core.failure_rules import CATEGORIES
from lmms_agentic.tasks.agentx.core.judging import GOAL_METRIC, JUDGED_METRICS
from lmms_agentic.tasks.agentx.core.release_data import GENERATIVE_IDS
from lmms_agentic.tasks.agentx.core.trace import FAILURES, PARSE_FAILURES

log = logging.getLogger(__name__)
Items = Sequence[Mapping[str, Any] | None]
View = Callable[[Mapping[str, Any]], Any]
JudgedMean = Callable[[str, list[Any]], float]
"""(metric, its views) -> the mean over the scored views (NaN if none); the plugin's also checks coverage."""
NAN = math.nan
MISSING = "missing"
"""Unscored reason of a judged metric without any result in the record."""

DIRECT: tuple[str, ...] = tuple(name for name, _ in JUDGED_METRICS if name != GOAL_METRIC)
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


# ---------------------------------------------------------------- means over views
def _score_of(view: Any) -> float | None:
    """The score of a judged view (`{"score": s}`, a result payload or a number); None when it is unscored."""
    if isinstance(view, Mapping):
        if view.get("unscored_reason") is not None:
            return None
        value = view.get("score")
    else:
        value = view
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"a scored item has no numeric score: {value!r}")
    return float(value)


def scored_mean(metric: str, views: list[Any]) -> float:
    """The plain `JudgedMean`: the mean over the scored views (NaN if none); `metric` only names it."""
    scores = [score for score in map(_score_of, views) if score is not None]
    return math.fsum(scores) / len(scores) if scores else NAN


def scored_share(views: list[Any]) -> float:
    """Coverage: the share of the views that are scored (0 for no views)."""
    return sum(_score_of(view) is not None for view in views) / len(views) if views else 0.0


def _mean(metric: str, items: Items) -> float:
    scores = [float(view["score"]) for view in _views(items, metric)]
    return math.fsum(scores) / len(scores) if scores else NAN


# ---------------------------------------------------------------- aggregations
def goal_imggen_parts(items: Items, judged_mean: JudgedMean = scored_mean) -> dict[str, float]:
    """The three generative-only means behind Goal_acc* ({"tool_p": ..., "tool_acc": ..., "toolset_acc": ...})."""
    _check_flags(items)
    views = _views(items, GOAL_STAR)
    return {part: judged_mean(f"{GOAL_STAR}[{part}]", [v["parts"][part] for v in views]) for part in GOAL_STAR_PARTS}


def _goal_imggen(items: Items, judged_mean: JudgedMean) -> float:
    """Goal_acc*: mean of the generative-only means of tool_p, tool_acc and toolset_acc (NaN if one is NaN)."""
    means = list(goal_imggen_parts(items, judged_mean).values())
    return NAN if any(math.isnan(m) for m in means) else sum(means) / len(means)


def _imggen_coverage(items: Items) -> float:
    """Mean over the three Goal_acc* parts of their scored share among the generative items."""
    views = _views(items, COVERAGE[GOAL_STAR])
    return sum(scored_share([v["parts"][p] for v in views]) for p in GOAL_STAR_PARTS) / len(GOAL_STAR_PARTS)


_COVERED: dict[str, str] = {coverage: metric for metric, coverage in COVERAGE.items()}


def aggregate(metric: str, items: Items, judged_mean: JudgedMean = scored_mean) -> float:
    """The value of `metric` (a name of `METRICS`) over the gathered items, by the rules of the module docstring;
    coverage metrics: the scored share of the eligible items."""
    if metric not in VIEWS:
        raise KeyError(f"unknown Agent-X metric {metric!r}")
    if metric == GOAL_STAR:
        return _goal_imggen(items, judged_mean)
    if metric == COVERAGE[GOAL_STAR]:
        return _imggen_coverage(items)
    if metric in _COVERED:
        return scored_share(_views(items, metric))
    if metric == GOAL_METRIC:
        _check_flags(items)
    if metric in DIRECT or metric == GOAL_METRIC:
        return judged_mean(metric, _views(items, metric))
    return _mean(metric, items)


def error_rate(items: Items, key: str) -> float:
    """Share of items flagged `key` by the failure rules (over items that carry the key); NaN for other keys."""
    metric = f"err_{key}"
    return _mean(metric, items) if metric in VIEWS else NAN


# ---------------------------------------------------------------- names and printing
LOOP_METRICS: tuple[str, ...] = ("loop_rate", "truncation_rate")
"""The thinking-loop metrics: their views read the `loop` verdict a harness adds to the record (the plugin's
`adapters.loops` check); the core's record has none, so they are in no `task.TASK_METRICS` kind."""
METRICS: tuple[str, ...] = (*DIRECT, GOAL_METRIC, GOAL_STAR, *COVERAGE.values(), *DETERMINISTIC,
                            *(f"err_{k}" for k in ERROR_KEYS), *LOOP_METRICS)
"""Every metric a task of Agent-X reports, in report order (the first one carries the sample record)."""


def error_keys() -> tuple[str, ...]:
    """The failure rules' keys (`failure_rules.CATEGORIES`), one `err_<key>` metric each."""
    return ERROR_KEYS


def metric_names(is_generative: bool | None = None) -> tuple[str, ...]:
    """Every metric of `METRICS`; with `is_generative` given, the metrics an item of that kind feeds (a generative
    item feeds no Goal_acc, a text-answer item no Goal_acc*)."""
    skip: set[str] = set()
    if is_generative is True:
        skip = {GOAL_METRIC, COVERAGE[GOAL_METRIC]}
    elif is_generative is False:
        skip = {GOAL_STAR, COVERAGE[GOAL_STAR]}
    return tuple(name for name in METRICS if name not in skip)


def summary(items: Items, names: Sequence[str] | None = None,
            judged_mean: JudgedMean = scored_mean) -> dict[str, float]:
    """{metric: value} for `names` (default: all of `METRICS`)."""
    return {name: aggregate(name, items, judged_mean) for name in (names if names is not None else METRICS)}


def reported_row(items: Items, judged_mean: JudgedMean = scored_mean) -> dict[str, float]:
    """The README row: {column: value} in README order (0-1 scale, unrounded)."""
    return {column: aggregate(metric, items, judged_mean) for column, metric in REPORTED_COLUMNS}


def format_row(row: Mapping[str, float], digits: int = 2) -> dict[str, str]:
    """Values as printed in the README (`digits` decimals; NaN as "nan")."""
    return {column: "nan" if math.isnan(value) else f"{value:.{digits}f}" for column, value in row.items()}
