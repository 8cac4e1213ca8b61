"""What lmms-agentic adds to lm-eval's results file, as its lmms-eval hook does for lmms-eval's: the data each
benchmark loaded (location, revision or fingerprint, rows; ``adapters.provenance``), the lmms-agentic and lm-eval
releases and the judge configuration (endpoint with credentials masked, model, decoding; never the key).

Installed by ``runtime.install`` (when lm-eval loads one of the generated tasks) around lm-eval's
``EvaluationTracker.save_results_aggregated``; ``rescore``, ``errors`` and ``reproduce --from`` read it back, so an
lm-eval run folder is analysed on the data it was run on without setting ``LMMS_AGENTIC_DATA`` again.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from importlib import metadata
from typing import Any

log = logging.getLogger(__name__)
RESULTS_KEY = "lmms_agentic"
_MARKER = "_lmms_agentic_record"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def run_record() -> dict[str, Any] | None:
    """``{"version", "lm_eval", "data", "judge"}`` for this process (None when no benchmark's data was loaded)."""
    from lmms_agentic import __version__
    from lmms_agentic.adapters import provenance
    from lmms_agentic.judges.config import judge_record

    used = provenance.used()
    if not used:
        return None
    try:
        judge = judge_record()
    except (ValueError, KeyError) as exc:  # a malformed judge setting already stopped the judged tasks
        log.warning("judge configuration not recorded in the results (%s)", exc)
        judge = None
    return {"version": __version__, "lm_eval": _version("lm_eval"), "data": used, "judge": judge}


def install() -> bool:
    """Wrap lm-eval's ``save_results_aggregated`` to add ``run_record()``; False when lm-eval has no such method."""
    try:
        from lm_eval.loggers.evaluation_tracker import EvaluationTracker
    except ImportError:
        return False
    original: Callable[..., Any] | None = getattr(EvaluationTracker, "save_results_aggregated", None)
    if original is None:
        log.warning("this lm-eval has no EvaluationTracker.save_results_aggregated: the data location is not "
                    "recorded next to its results (set LMMS_AGENTIC_DATA again for rescore and errors)")
        return False
    if getattr(original, _MARKER, False):
        return True

    @functools.wraps(original)
    def save_results_aggregated(self: Any, results: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        record = run_record()
        if record is not None and isinstance(results, dict):
            results[RESULTS_KEY] = record
        return original(self, results, *args, **kwargs)

    setattr(save_results_aggregated, _MARKER, True)
    EvaluationTracker.save_results_aggregated = save_results_aggregated
    return True
