"""LLM judges: typed, cached, retried and auditable.  Installed as ``lmms_agentic.judges``.

Modules (importing this package creates no client, reads no environment and opens no connection):

* ``result``       ``JudgeResult`` (score or unscored + reason, dimensions, judge model, template id/version, raw
                   reply; ``as_dict()`` for sample logs) and the unscored reasons.
* ``config``       ``JudgeConfig.from_env()`` (``LMMS_AGENTIC_JUDGE_*`` variables), presets (``gpt-4o``,
                   ``qwen3-14b-local``), ``Secret``/``redact``.
* ``templates``    ``PromptTemplate`` (versioned; model output fenced as data) and ``JudgeRequest``.
* ``parsers``      strict ``ScoreParser``, ``YesNoParser``, ``ChoiceParser``, ``AnyOf``; refusal detection.
* ``rubric``       ``JsonObjectParser`` for multi-dimension JSON rubric replies (``Number``, ``Text``, ``Choice``).
* ``client``       ``JudgeClient.judge`` / ``judge_many`` (OpenAI-compatible HTTP, retries, concurrency, cache,
                   a circuit breaker: a judge that is down makes the rest unscored as ``judge_unavailable``).
* ``cache``        ``JudgeCache``: one atomic file per content-hash key, HMAC-checked with the cache's own key
                   file, safe for many processes.
* ``secrets``      every secret the process knows (judge and model keys, URL credentials) and ``Redactor``,
                   which removes them by value from what is written.
* ``transport``    one HTTP exchange under a total deadline and a reply-size cap.
* ``coverage``     ``coverage_summary`` / ``judged_mean`` / ``judged_coverage``: means over scored items beside
                   the scored fraction, with a loud warning (or error) on low coverage.
* ``mcq_fallback`` rules-first MCQ extraction with an opt-in judge fallback (``LMMS_AGENTIC_MCQ_JUDGE=1``).
* ``agreement``    agreement between two judge runs, ranking stability (also a CLI).
* ``testing``      a scripted OpenAI-compatible loopback server (test double); ``bench`` measures throughput.

Benchmark-specific judges (prompts, serialisation, metric definitions) live in their benchmark's folder, e.g.
``lmms_agentic.tasks.agentx.judge``; this package holds only what every judged metric shares.

Typical task use (inside ``process_results``; never raises for judge trouble)::

    from lmms_agentic.judges import JudgeRequest, default_client
    result = default_client().judge(JudgeRequest(TEMPLATE, {"response": text, "reference": gold}, item_id))
    return {"my_metric": result.as_dict()}

and in the aggregation: ``judged_mean("my_metric", items)`` plus ``judged_coverage(items)``.
"""

from .cache import CacheStats, JudgeCache
from .client import JudgeClient, default_client, request_key, reset_default_client
from .config import PRESETS, JudgeConfig, JudgePreset, Secret, get_preset, mask_url, redact
from .coverage import CoveragePolicy, JudgeCoverageError, coverage_summary, judged_coverage, judged_mean
from .fencing import DATA_NOTICE, fence, strip_data_blocks
from .parsers import AnyOf, ChoiceParser, Parsed, ReplyParser, ScoreParser, YesNoParser, looks_like_refusal
from .result import (
    AMBIGUOUS,
    JUDGE_UNAVAILABLE,
    NOT_CONFIGURED,
    PARSE_FAILURE,
    REFUSAL,
    TRANSPORT_ERROR,
    UNSCORED_REASONS,
    JudgeResult,
)
from .rubric import Choice, JsonObjectParser, Number, Text
from .templates import JudgeRequest, PromptTemplate

__all__ = [
    "AMBIGUOUS",
    "DATA_NOTICE",
    "JUDGE_UNAVAILABLE",
    "NOT_CONFIGURED",
    "PARSE_FAILURE",
    "PRESETS",
    "REFUSAL",
    "TRANSPORT_ERROR",
    "UNSCORED_REASONS",
    "AnyOf",
    "CacheStats",
    "Choice",
    "ChoiceParser",
    "CoveragePolicy",
    "JsonObjectParser",
    "JudgeCache",
    "JudgeClient",
    "JudgeConfig",
    "JudgeCoverageError",
    "JudgePreset",
    "JudgeRequest",
    "JudgeResult",
    "Number",
    "Parsed",
    "PromptTemplate",
    "ReplyParser",
    "ScoreParser",
    "Secret",
    "Text",
    "YesNoParser",
    "coverage_summary",
    "default_client",
    "fence",
    "get_preset",
    "judged_coverage",
    "judged_mean",
    "looks_like_refusal",
    "mask_url",
    "redact",
    "request_key",
    "reset_default_client",
    "strip_data_blocks",
]
