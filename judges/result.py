"""The typed judge result and the unscored reasons.

Owns: ``JudgeResult`` (what one judge call produced: a score, or *unscored* with a reason, plus everything
needed to audit it) and the constants naming why a call is unscored.  "Could not grade" is never the same
as "wrong": an unscored result has ``score=None`` and a reason, and every mean in this package skips it
and counts it (see ``coverage.py``).  Only ``as_dict()`` (plain, JSON-ready data) crosses into lmms-eval's
sample logs.  The API key never reaches a result (the client redacts every detail string).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "AMBIGUOUS",
    "JUDGE_UNAVAILABLE",
    "NOT_CONFIGURED",
    "PARSE_FAILURE",
    "REFUSAL",
    "TRANSPORT_ERROR",
    "UNSCORED_REASONS",
    "JudgeResult",
]

PARSE_FAILURE: Final = "parse_failure"
"""The judge answered, but its reply does not parse under the template's strict parser."""
TRANSPORT_ERROR: Final = "transport_error"
"""No usable HTTP answer after the bounded retries (timeout, connection error, 429/5xx, 4xx, bad body)."""
REFUSAL: Final = "refusal"
"""The judge declined: an OpenAI ``refusal`` field, finish_reason ``content_filter`` or an apology reply."""
NOT_CONFIGURED: Final = "not_configured"
"""No judge endpoint configured (LMMS_AGENTIC_JUDGE_BASE_URL / _MODEL / _PRESET unset); nothing was sent."""
JUDGE_UNAVAILABLE: Final = "judge_unavailable"
"""Not sent (or given up mid-retry): the client's circuit breaker had opened after a run of consecutive transport
failures, so the judge was treated as down for the rest of the run.  Never cached: a later run asks again."""
AMBIGUOUS: Final = "ambiguous"
"""The judge answered with more than one verdict that disagree ("Score: 0.2 ... Score: 0.9", two JSON objects with
different scores, one object naming its score key twice, "Yes" and "No" lines): no verdict is picked."""
UNSCORED_REASONS: Final = (PARSE_FAILURE, AMBIGUOUS, TRANSPORT_ERROR, REFUSAL, NOT_CONFIGURED, JUDGE_UNAVAILABLE)


@dataclass(frozen=True)
class JudgeResult:
    """One judge verdict, or an unscored outcome with its reason.

    A result is *scored* when ``unscored_reason`` is None.  Numeric judges set ``score``; label judges
    (the MCQ fallback) set ``label`` and leave ``score`` None; rubric judges add named ``dimensions``."""

    score: float | None
    """The verdict on the template's declared scale; None when unscored or for label-only judges."""
    unscored_reason: str | None = None
    """One of UNSCORED_REASONS, or None when the reply parsed."""
    dimensions: Mapping[str, float] = field(default_factory=dict)
    """Named rubric scores (JSON rubric judges), each within its declared range."""
    label: str | None = None
    """Categorical verdict ("yes"/"no", an option letter, "NONE"), when the parser yields one."""
    fields: Mapping[str, Any] = field(default_factory=dict)
    """Other parsed fields of a JSON reply (e.g. a justification)."""
    detail: str | None = None
    """Human-readable explanation of an unscored outcome (parse error, HTTP status); secrets redacted."""
    judge_model: str | None = None
    """The judge model identifier as the server reported it (response ``model``)."""
    judge_model_requested: str | None = None
    """The model name that was sent (a dated snapshot when a preset is used)."""
    temperature: float | None = None
    """Sampling temperature sent with the request (0 by default)."""
    template_id: str = ""
    """Prompt template identifier."""
    template_version: str = ""
    """Prompt template version; bumped on any prompt or parser change."""
    raw_reply: str | None = None
    """The judge's reply text exactly as received (None when nothing was received)."""
    finish_reason: str | None = None
    """The server's finish_reason ("stop", "length", "content_filter", ...)."""
    item_id: str | None = None
    """The caller's stable item id, copied from the request."""
    request_key: str | None = None
    """Content hash of the request (the cache key), for audits and joins."""
    cached: bool = False
    """True when the reply came from the on-disk cache (no request was sent)."""
    attempts: int = 0
    """HTTP attempts made for this result (0 for cache hits and unconfigured judges)."""

    @property
    def scored(self) -> bool:
        """True when the judge's reply parsed (``unscored_reason`` is None)."""
        return self.unscored_reason is None

    def as_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready dict for lmms-eval sample logs (no objects, no secrets)."""
        return {
            "score": self.score,
            "scored": self.scored,
            "unscored_reason": self.unscored_reason,
            "dimensions": {str(k): float(v) for k, v in self.dimensions.items()},
            "label": self.label,
            "fields": _plain(self.fields),
            "detail": self.detail,
            "judge_model": self.judge_model,
            "judge_model_requested": self.judge_model_requested,
            "temperature": self.temperature,
            "template_id": self.template_id,
            "template_version": self.template_version,
            "raw_reply": self.raw_reply,
            "finish_reason": self.finish_reason,
            "item_id": self.item_id,
            "request_key": self.request_key,
            "cached": self.cached,
            "attempts": self.attempts,
        }


def _plain(value: Any) -> Any:
    """Recursively turn mappings/sequences into dicts/lists and anything exotic into str."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)
