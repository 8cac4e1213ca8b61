"""Agent-X aggregations over the per-item payloads gathered from all ranks (agentx.md §6).

Every function takes the full list of payloads (one per document, whatever the metric key) and returns a float on
the paper's 0-1 scale; NaN when nothing is scored, never an exception on an empty list.  Print with 2 decimals
(``format_row``); values are never rounded here.

Payload (built by ``hooks.process_results``)::

    {"id": "<data.json key>", "is_generative": bool, "query_type": str, "media_type": str,
     "judge": {"<metric name>": JudgeResult.as_dict(), ...}, "format_ok": bool, "parse_failure": str | None,
     "toolset_f1_prog": float, "toolset_precision_prog": float, "toolset_recall_prog": float,
     "exact_match": bool | None, "errors": {"<taxonomy key>": bool, ...}}

Rules (§6, reproducing the README tables from ``analysis/metrics.ipynb``):

* the eight direct judged metrics (``ground_s`` ... ``toolset_acc``): mean over every item whose judge result is
  scored, generative items included; an unscored or absent result leaves the mean and lowers ``cov_<...>``;
* ``goal_acc``: the same over the non-generative items only;
* ``goal_imggen`` (README Goal_acc*): over the generative items only, the mean of the three means of ``tool_p``,
  ``tool_acc`` and ``toolset_acc`` (NaN if any of the three has no scored item);
* "generative" is decided **by key**: ``id`` in ``protocol.GENERATIVE_IDS`` (the notebook's list is row positions,
  which shift when predictions are missing); the payload's ``is_generative`` is only used for an item without an id
  and is cross-checked otherwise (a mismatch is logged; the key wins).

Names: no metric name is a substring of another (lmms-eval matches group metrics by substring), so Goal_acc* is
``goal_imggen`` and the coverage metrics are ``cov_<short>`` names (``COVERAGE``), not ``<metric>_coverage``.
Low judge coverage warns (or raises with ``LMMS_AGENTIC_JUDGE_STRICT_COVERAGE=1``) through ``judges.coverage``
when a judged mean is computed.
"""

from __future__ import annotations

import importlib
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lmms_agentic.judges.agentx import GOAL_METRIC, METRICS
from lmms_agentic.judges.coverage import judged_coverage, judged_mean
from lmms_agentic.tasks.agentx.protocol import GENERATIVE_IDS

__all__ = [
    "COVERAGE",
    "DETERMINISTIC",
    "DIRECT",
    "GOAL_STAR",
    "GOAL_STAR_PARTS",
    "REPORTED_COLUMNS",
    "error_keys",
    "format_row",
    "goal_imggen_parts",
    "is_generative",
    "metric_names",
    "reported_row",
    "summary",
]

log = logging.getLogger(__name__)
Items = Sequence[Mapping[str, Any]]
Aggregation = Callable[[Items], float]
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
DETERMINISTIC: tuple[str, ...] = ("toolset_f1_prog", "format_error_rate", "exact_match_acc", "parse_failure_rate")
REPORTED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Ground_s", "ground_s"), ("Tool_p", "tool_p"), ("Tool_acc", "tool_acc"), ("Fact_acc", "fact_acc"),
    ("Context_s", "context_s"), ("Fact_p", "fact_p"), ("Sem_acc", "sem_acc"), ("Goal_acc", "goal_acc"),
    ("Goal_acc*", GOAL_STAR), ("Tool_acc^s", "toolset_acc"),
)
"""README column -> metric name, in the README's order."""


# ---------------------------------------------------------------- selection
def is_generative(item: Mapping[str, Any]) -> bool:
    """True for a generative (image-output) task, by its ``data.json`` key; ``is_generative`` only without an id."""
    key = item.get("id")
    if key is None:
        return bool(item.get("is_generative", False))
    return str(key) in GENERATIVE_IDS


def _split(items: Iterable[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(non-generative, generative) by key; logs payloads whose ``is_generative`` disagrees with the key."""
    plain: list[Mapping[str, Any]] = []
    generative: list[Mapping[str, Any]] = []
    mismatched: list[str] = []
    for item in items:
        by_key = is_generative(item)
        flag = item.get("is_generative")
        if item.get("id") is not None and flag is not None and bool(flag) != by_key:
            mismatched.append(str(item["id"]))
        (generative if by_key else plain).append(item)
    if mismatched:
        log.warning("Agent-X: %d payload(s) carry an is_generative flag that disagrees with the generative id list "
                    "(ids %s); the id list (by key, agentx.md §7) is used", len(mismatched),
                    ", ".join(mismatched[:10]))
    return plain, generative


def _results(items: Iterable[Mapping[str, Any]], metric: str) -> list[Any]:
    """The judge result of ``metric`` per item (None when absent: counted as unscored "missing")."""
    return [(item.get("judge") or {}).get(metric) for item in items]


# ---------------------------------------------------------------- judged metrics
def _direct(metric: str) -> Aggregation:
    def aggregate(items: Items) -> float:
        return judged_mean(metric, _results(items, metric))

    aggregate.__name__ = aggregate.__qualname__ = metric
    aggregate.__doc__ = f"Mean judge score of {metric} over all scored items (generative included); NaN if none."
    return aggregate


ground_s = _direct("ground_s")
tool_p = _direct("tool_p")
tool_acc = _direct("tool_acc")
fact_acc = _direct("fact_acc")
context_s = _direct("context_s")
fact_p = _direct("fact_p")
sem_acc = _direct("sem_acc")
toolset_acc = _direct("toolset_acc")


def goal_acc(items: Items) -> float:
    """Goal accuracy over the scored non-generative items (generative ones are masked by key); NaN if none."""
    plain, _ = _split(items)
    return judged_mean(GOAL_METRIC, _results(plain, GOAL_METRIC))


def goal_imggen_parts(items: Items) -> dict[str, float]:
    """The three generative-only means behind Goal_acc* ({"tool_p": ..., "tool_acc": ..., "toolset_acc": ...})."""
    _, generative = _split(items)
    return {part: judged_mean(f"{GOAL_STAR}[{part}]", _results(generative, part)) for part in GOAL_STAR_PARTS}


def goal_imggen(items: Items) -> float:
    """Goal_acc*: mean of the generative-only means of tool_p, tool_acc and toolset_acc (NaN if one is NaN)."""
    means = list(goal_imggen_parts(items).values())
    return NAN if any(math.isnan(m) for m in means) else sum(means) / len(means)


# ---------------------------------------------------------------- coverage
def _coverage(metric: str) -> Aggregation:
    def aggregate(items: Items) -> float:
        if metric == GOAL_METRIC:
            return judged_coverage(_results(_split(items)[0], metric))
        if metric == GOAL_STAR:
            generative = _split(items)[1]
            return sum(judged_coverage(_results(generative, p)) for p in GOAL_STAR_PARTS) / len(GOAL_STAR_PARTS)
        return judged_coverage(_results(items, metric))

    name = COVERAGE[metric]
    aggregate.__name__ = aggregate.__qualname__ = name
    aggregate.__doc__ = f"Scored share of the items eligible for {metric} (0 when there are none)."
    return aggregate


cov_ground = _coverage("ground_s")
cov_toolprec = _coverage("tool_p")
cov_toolacc = _coverage("tool_acc")
cov_faith = _coverage("fact_acc")
cov_context = _coverage("context_s")
cov_factprec = _coverage("fact_p")
cov_semantic = _coverage("sem_acc")
cov_goal = _coverage("goal_acc")
cov_toolset = _coverage("toolset_acc")
cov_imggen = _coverage(GOAL_STAR)


# ---------------------------------------------------------------- deterministic companions
def _mean(values: Iterable[float]) -> float:
    data = list(values)
    return sum(data) / len(data) if data else NAN


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def toolset_f1_prog(items: Items) -> float:
    """Mean programmatic toolset F1 (§5.9) over items that carry one."""
    return _mean(v for v in (_number(item.get("toolset_f1_prog")) for item in items) if v is not None)


def format_error_rate(items: Items) -> float:
    """Share of items whose output failed the format checks (``format_ok`` false)."""
    return _mean(0.0 if item["format_ok"] else 1.0 for item in items if item.get("format_ok") is not None)


def exact_match_acc(items: Items) -> float:
    """Mean exact match over the items where it is defined (``exact_match`` not None)."""
    return _mean(1.0 if item["exact_match"] else 0.0 for item in items if item.get("exact_match") is not None)


def parse_failure_rate(items: Items) -> float:
    """Share of items whose output could not be parsed (``parse_failure`` set)."""
    return _mean(1.0 if item.get("parse_failure") else 0.0 for item in items)


def _error_rate(key: str) -> Aggregation:
    def aggregate(items: Items) -> float:
        flags = [(item.get("errors") or {}).get(key) for item in items]
        return _mean(1.0 if flag else 0.0 for flag in flags if flag is not None)

    aggregate.__name__ = aggregate.__qualname__ = f"err_{key}"
    aggregate.__doc__ = f"Share of items flagged {key!r} by the error taxonomy (over items that carry the key)."
    return aggregate


def error_keys() -> tuple[str, ...]:
    """Taxonomy keys from ``adapters.trace_errors.CATEGORIES`` (grouped or flat; empty without that module)."""
    try:
        module = importlib.import_module("lmms_agentic.adapters.trace_errors")
    except ImportError:
        return ()
    categories = getattr(module, "CATEGORIES", ())
    if not isinstance(categories, Mapping):
        return tuple(str(key) for key in categories)
    keys: list[str] = []
    for group, members in categories.items():  # {group: (key, ...)} or {key: description}
        keys.extend([str(group)] if isinstance(members, str) else [str(m) for m in members])
    return tuple(dict.fromkeys(keys))


def __getattr__(name: str) -> Aggregation:
    """Resolves ``!function lmms_agentic.tasks.agentx.metrics.err_<taxonomy key>`` references."""
    if name.startswith("err_") and len(name) > 4:
        return _error_rate(name[4:])
    raise AttributeError(f"{__name__} has no attribute {name!r}")


# ---------------------------------------------------------------- registry and printing
def _registry() -> dict[str, Aggregation]:
    table: dict[str, Aggregation] = {name: globals()[name] for name in DIRECT}
    table.update({GOAL_METRIC: goal_acc, GOAL_STAR: goal_imggen})
    table.update({cov: globals()[cov] for cov in COVERAGE.values()})
    table.update({name: globals()[name] for name in DETERMINISTIC})
    table.update({f"err_{key}": _error_rate(key) for key in error_keys()})
    return table


def metric_names(is_generative: bool | None = None) -> tuple[str, ...]:
    """Every aggregation this module provides (judged, Goal_acc*, coverage, deterministic, one per error key).

    With ``is_generative`` given: the metrics an item of that kind feeds (a generative item feeds no Goal_acc, a
    text-answer item no Goal_acc*); the aggregations mask by key anyway, so either choice gives the same values."""
    skip: set[str] = set()
    if is_generative is True:
        skip = {GOAL_METRIC, COVERAGE[GOAL_METRIC]}
    elif is_generative is False:
        skip = {GOAL_STAR, COVERAGE[GOAL_STAR]}
    return tuple(name for name in _registry() if name not in skip)


def summary(items: Items, names: Sequence[str] | None = None) -> dict[str, float]:
    """{metric: value} for ``names`` (default: all of ``metric_names()``)."""
    registry = _registry()
    return {name: registry[name](items) for name in (names if names is not None else registry)}


def reported_row(items: Items) -> dict[str, float]:
    """The README row: {column: value} in README order (0-1 scale, unrounded)."""
    registry = _registry()
    return {column: registry[metric](items) for column, metric in REPORTED_COLUMNS}


def format_row(row: Mapping[str, float], digits: int = 2) -> dict[str, str]:
    """Values as printed in the README (``digits`` decimals; NaN as "nan")."""
    return {column: "nan" if math.isnan(value) else f"{value:.{digits}f}" for column, value in row.items()}
