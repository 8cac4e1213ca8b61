"""AgentVQA's metric views (`adapters.samples`): what each metric after `accuracy` receives from a sample record.

The names and the per-item inputs are the core's (`core/metrics.py`); this module wraps them in the plugin's view
contract: `{"score": 100|0}`, or None for rows a metric does not count. `accuracy` receives the full record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_agentic.adapters.samples import View, field_view_where, no_answer_view, request_failed_view, score
from lmms_agentic.tasks.agentvqa.core.metrics import coords_shown_as_released, metric_names, source_metric
from lmms_agentic.tasks.agentvqa.core.records import SOURCES


def _coords_view(record: Mapping[str, Any]) -> Any:
    return score(coords_shown_as_released(record))


VIEWS: dict[str, View] = {
    "no_answer_rate": no_answer_view,
    "request_failed_rate": request_failed_view,
    "coords_as_released": _coords_view,
    **{source_metric(slug): field_view_where("correct", "source", slug) for slug in SOURCES},
}
"""Every metric after `accuracy` (which carries the record)."""


def views_for(doc: Mapping[str, Any]) -> dict[str, View]:
    """The views a document's task reports (its domain's metrics after `accuracy`)."""
    return {name: VIEWS[name] for name in metric_names(str(doc["domain"]))[1:]}
