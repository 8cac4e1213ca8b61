"""Coverage of judged metrics: the mean over scored items beside the scored fraction.

Owns: ``coverage_summary`` (mean over scored items, coverage, counts and unscored reasons), the low-coverage
warning (or error in strict mode) and the two float-returning helpers for lmms-eval aggregation functions.
The warning names the cause it saw (``low_coverage_cause``: no judge set, judge unreachable, rate-limited, replies
that do not parse, refusals, no judge result logged) and the fix for that cause.  It is logged once per run: the
first judged metric below the threshold logs it with its counts; every later one is only recorded, and at the end
of the process (``atexit``) one summary line gives each such metric's scored/total counts.
An unscored item is never counted as 0: it leaves the mean and lowers the coverage.  No scored items -> the mean
is NaN (never 0) and coverage is 0.  Means are exactly rounded sums (``math.fsum``), so they do not depend on the
order items arrive in: 1 and N processes (whose gathered order differs) report byte-identical values.
Thresholds come from ``CoveragePolicy`` (built from ``LMMS_AGENTIC_JUDGE_MIN_COVERAGE`` /
``LMMS_AGENTIC_JUDGE_STRICT_COVERAGE`` when the helper runs, not at import).

Items may be ``JudgeResult`` objects, their ``as_dict()`` payloads (as lmms-eval gathers them from the ranks),
plain numbers, or None (an item with no judge result at all: reason "missing").
"""

from __future__ import annotations

import atexit
import logging
import math
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .config import ENV, env_flag
from .result import JudgeResult

__all__ = ["CoveragePolicy", "JudgeCoverageError", "coverage_summary", "judged_coverage", "judged_mean"]

log = logging.getLogger(__name__)
MISSING = "missing"


class JudgeCoverageError(RuntimeError):
    """Raised in strict mode when too few items of a judged metric were scored."""


@dataclass(frozen=True)
class CoveragePolicy:
    """Minimum scored fraction, and whether falling below it raises instead of warning."""

    min_coverage: float = 0.95
    strict: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CoveragePolicy:
        env = os.environ if environ is None else environ
        raw = env.get(ENV["min_coverage"], "").strip()
        try:
            minimum = float(raw) if raw else 0.95
        except ValueError:
            raise ValueError(f"{ENV['min_coverage']}={raw!r} is not a number") from None
        if not 0.0 <= minimum <= 1.0:
            raise ValueError(f"{ENV['min_coverage']}={raw!r} must be within [0, 1]")
        strict = env_flag(env.get(ENV["strict_coverage"], ""), ENV["strict_coverage"])
        return cls(minimum, strict)


RATE_LIMITED = "rate_limited"
"""Not an unscored reason of its own: a transport failure whose detail is an HTTP 429 (counted apart for the
warning, whose fix differs)."""
_JUDGE = f"{ENV['base_url']} with {ENV['model']}, or {ENV['preset']} (gpt-4o, qwen3-14b-local)"
_RERUN = "and rerun; answers already cached are not re-sent"
CAUSES: Mapping[str, tuple[str, str]] = {
    "not_configured": ("no judge set", f"set {_JUDGE} {_RERUN}"),
    "transport_error": ("the judge was unreachable",
                        f"check that {ENV['base_url']} answers (URL, network, {ENV['api_key']}) {_RERUN}"),
    "judge_unavailable": ("the judge was unreachable (the client stopped asking after repeated failures)",
                          f"check that {ENV['base_url']} answers (URL, network, {ENV['api_key']}) {_RERUN}"),
    RATE_LIMITED: ("the judge rate-limited the requests (HTTP 429)",
                   f"lower {ENV['concurrency']} or raise the endpoint's rate limit {_RERUN}"),
    "parse_failure": ("judge replies that do not parse",
                      f"use a judge that follows the template's reply format (the paper's: {ENV['preset']}); the raw "
                      "replies are in the samples' judge records"),
    "ambiguous": ("judge replies with verdicts that disagree (two scores, or a Yes and a No)",
                  f"use a judge that gives one verdict per reply ({ENV['preset']}); the raw replies are in the "
                  "samples' judge records"),
    "refusal": ("the judge refused", f"use another judge model ({ENV['preset']})"),
    MISSING: ("items with no judge result logged",
              f"rescore the run with a judge set (python -m lmms_agentic rescore RUN, with {_JUDGE})"),
}
_recorded: dict[str, list[str]] = {}
"""Low-coverage metrics of this process since the warning: metric -> ["scored/total", ...]."""
_cause_logged: list[str] = []


def _read_detail(item: Any) -> str:
    if isinstance(item, JudgeResult):
        return item.detail or ""
    return str(item.get("detail") or "") if isinstance(item, Mapping) else ""


def _read(item: Any, dimension: str | None) -> tuple[float | None, str | None]:
    """(score, None) for a scored item, (None, reason) otherwise."""
    if item is None:
        return None, MISSING
    if isinstance(item, JudgeResult):
        reason, score, dims = item.unscored_reason, item.score, item.dimensions
    elif isinstance(item, Mapping):
        reason, score, dims = item.get("unscored_reason"), item.get("score"), item.get("dimensions") or {}
    elif isinstance(item, (int, float)) and not isinstance(item, bool):
        reason, score, dims = None, float(item), {}
    else:
        raise TypeError(f"cannot read a judge score from {type(item).__name__}")
    if reason is not None:
        if reason in ("transport_error", "judge_unavailable") and "HTTP 429" in _read_detail(item):
            return None, RATE_LIMITED
        return None, str(reason)
    value = dims.get(dimension) if dimension is not None else score
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        what = f"dimension {dimension!r}" if dimension is not None else "score"
        raise ValueError(f"a scored item has no numeric {what}: {value!r}")
    return float(value), None


def coverage_summary(metric: str, items: Iterable[Any], *, dimension: str | None = None,
                     policy: CoveragePolicy | None = None, warn: bool = True) -> dict[str, Any]:
    """``{metric: mean over scored, metric_coverage: scored/total, n_scored, n_unscored, unscored_reasons}``.

    ``dimension`` reads a named rubric dimension instead of ``score``.  With ``warn`` (default) a coverage
    below ``policy.min_coverage`` logs a warning with the numbers and the fix, or raises
    ``JudgeCoverageError`` when ``policy.strict``; an empty item list only warns."""
    scores: list[float] = []
    reasons: Counter[str] = Counter()
    for item in items:
        score, reason = _read(item, dimension)
        if reason is not None:
            reasons[reason] += 1
        elif score is not None:
            scores.append(score)
    n_scored, n_unscored = len(scores), sum(reasons.values())
    total = n_scored + n_unscored
    coverage = n_scored / total if total else 0.0
    summary: dict[str, Any] = {
        metric: math.fsum(scores) / n_scored if n_scored else math.nan,
        f"{metric}_coverage": coverage,
        "n_scored": n_scored,
        "n_unscored": n_unscored,
        "unscored_reasons": reasons,
    }
    if warn:
        _check(metric, summary, policy if policy is not None else CoveragePolicy.from_env())
    return summary


def _check(metric: str, summary: Mapping[str, Any], policy: CoveragePolicy) -> None:
    coverage, n_scored, n_unscored = summary[f"{metric}_coverage"], summary["n_scored"], summary["n_unscored"]
    total = n_scored + n_unscored
    if total == 0:
        log.warning("judged metric %s has no items: its value is NaN (coverage 0)", metric)
        return
    if coverage >= policy.min_coverage:
        return
    causes = low_coverage_causes(summary["unscored_reasons"])
    message = (
        f"LOW JUDGE COVERAGE for {metric}: {n_scored}/{total} items scored ({coverage:.1%} < "
        f"{policy.min_coverage:.0%}); cause: {'; '.join(f'{cause} ({n})' for cause, n, _ in causes)}. The reported "
        f"mean covers scored items only. Fix: {'; '.join(dict.fromkeys(fix for _, _, fix in causes))}. "
        f"Set {ENV['strict_coverage']}=1 to make this an error."
    )
    if policy.strict:
        raise JudgeCoverageError(message)
    _recorded.setdefault(metric, []).append(f"{n_scored}/{total}")
    seen = [cause for cause, _, _ in causes]
    if all(cause in _cause_logged for cause in seen):
        return
    if not _cause_logged:
        atexit.register(_log_run_summary)
    _cause_logged.extend(cause for cause in seen if cause not in _cause_logged)
    log.warning("%s Other judged metrics with low coverage are listed once at the end of the run.", message)


def low_coverage_causes(reasons: Mapping[str, int]) -> list[tuple[str, int, str]]:
    """(cause, items, fix) for each unscored reason of a metric, most frequent first."""
    unknown = ("unscored items of another kind", f"see the samples' judge records (detail) and rerun with {_JUDGE}")
    return [(*CAUSES.get(reason, unknown)[:1], count, CAUSES.get(reason, unknown)[1])
            for reason, count in Counter(reasons).most_common()]


def reset_run_state() -> None:
    """Forget this process's low-coverage warnings (a new run in the same process, e.g. the next test)."""
    _recorded.clear()
    _cause_logged.clear()


def run_summary() -> str:
    """The end-of-run line: every low-coverage judged metric of this process with its scored/total counts
    (one count per aggregation, e.g. per task); empty when at most one metric was low."""
    if len(_recorded) < 2:
        return ""
    counts = "; ".join(f"{metric} {', '.join(seen)}" for metric, seen in _recorded.items())
    return (f"LOW JUDGE COVERAGE in this run ({len(_recorded)} judged metrics, scored/total): {counts}. "
            f"Cause and fix: see the first LOW JUDGE COVERAGE warning above ({'; '.join(_cause_logged)}).")


def _log_run_summary() -> None:
    line = run_summary()
    if line:
        log.warning("%s", line)


def judged_mean(metric: str, items: Iterable[Any], *, dimension: str | None = None,
                policy: CoveragePolicy | None = None) -> float:
    """Mean over scored items (NaN if none), after the coverage check: for lmms-eval aggregation functions."""
    return float(coverage_summary(metric, items, dimension=dimension, policy=policy)[metric])


def judged_coverage(items: Iterable[Any], *, dimension: str | None = None) -> float:
    """Scored fraction (0 for no items), without warning: for a ``<metric>_coverage`` aggregation."""
    return float(coverage_summary("m", items, dimension=dimension, warn=False)["m_coverage"])
