"""RoboVista's metric names and the aggregations that are not a plain mean (paper Table III calibration).

Counting convention (paper, public runner): every item stays in the denominator; an unanswered item, an
unparsable reply or a failed request counts as incorrect. `parity_acc` (the headline, paper Tables I-III) uses the
runner's first released parser (`parity_20260706`, `pred_parity`); `parity_20260714_acc` the runner's second;
`strict_acc` the project's strict extractor (`pred`). Breakdowns use the raw label values; the rows with an empty
domain or ability count only in the overall figures. Every other metric is the mean of per-item scores
(`adapters.core.scores.mean_score`). Calibration error follows `adapters.core.scores.calibration_error`
(consecutive bins of 100 items). Names are chosen so that no name is a substring of another (lmms-eval matches group
metrics by substring).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.core import scores
from lmms_agentic.tasks.robovista.core.records import ABILITY_SPLIT, DOMAINS

Items = Sequence[Mapping[str, Any] | None]

DOMAIN_TASK_METRICS = ("parity_acc", "parity_20260714_acc", "strict_acc", "no_answer_rate", "request_failed_rate",
                       "perception_acc", "planning_acc")
FULL_METRICS = (*DOMAIN_TASK_METRICS, *(f"ability_{a}_acc" for a in ABILITY_SPLIT),
                *(f"domain_{d}_acc" for d in DOMAINS))
CONFIDENCE_METRICS = (*FULL_METRICS, "calibration_error", "hle_compat_calibration", "confidence_coverage")
ICL_METRICS = (*CONFIDENCE_METRICS, "icl_fallback_rate")
LOOP_METRICS = ("loop_rate", "truncation_rate")
"""Reported by every task after its own metrics (the plugin's loop detection)."""
METRICS = (*ICL_METRICS, *LOOP_METRICS)
"""Every metric a RoboVista task reports (the option-permutation tasks report the shared permutation metrics)."""


def _calibration(items: Items, hle_compat: bool) -> float:
    scored = [item for item in items if item is not None]
    return scores.calibration_error([float(item["confidence"]) for item in scored],
                                   [bool(item["correct"]) for item in scored], hle_compat=hle_compat)


def calibration_error(items: Items) -> float:
    """RMS calibration error (%) over items with a parsed confidence, all bins (default definition); each item is
    `{"confidence": float, "correct": bool}` or None (not counted)."""
    return _calibration(items, hle_compat=False)


def hle_compat_calibration(items: Items) -> float:
    """The same, reproducing the HLE reference loop that skips the last bin."""
    return _calibration(items, hle_compat=True)
