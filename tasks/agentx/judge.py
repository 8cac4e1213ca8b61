"""Agent-X judging through the project's judge layer (plugin): the core's judge calls sent with `judges.client`.

Owns the versioned ``PromptTemplate`` of every judged metric (id ``agentx/<code key>``, version "1"; system prompt =
the verbatim string of ``core/judge_prompts.py``, user template and field values from ``core/judging.py``), the
strict score parser, the judge-style choice (``LMMS_AGENTIC_AGENTX_JUDGE_STYLE``, else from the judge model), the
judge callable that sends one item's calls as one ``judge_many`` batch (cache first; never raises for judge trouble)
and the judge the one-shot tasks hand the core (``plugin_judge``: only when the plugin's own ``LMMS_AGENTIC_JUDGE_*``
variables configure one; a provider's API key such as ``OPENAI_API_KEY`` never turns it on).

Use (``gt`` is the ``data.json`` record or the ``{gt}`` block, ``prediction`` the parsed model output)::

    from lmms_agentic.tasks.agentx.judge import judge_item
    judged = judge_item(doc_id, gt, prediction, query_type=qt, is_generative=gen)  # style from the judge model
    # -> {"ground_s": JudgeResult.as_dict(), ..., "toolset_acc": {...}}  (no "goal_acc" for generative ids)

What the judge receives
-----------------------
System message: byte-identical to the released scripts (pinned by SHA-256 digests in tests/agentx/test_judge.py).
User message: the released template (e.g. ``GT: {gt}\\nagent's reasoning steps: {pred_steps}``) with exactly these
differences, all from the judge layer's fencing (``judges.fencing``):

1. it starts with ``fencing.DATA_NOTICE`` and a blank line;
2. every field value (all seven: ``gt``, ``pred_steps``, ``pred_final_answer``, ``gt_tool_metadata``,
   ``gt_final_answer``, ``query_type``, ``gt_query``; the GT is LMM-generated text too) is wrapped as
   ``<<<DATA <field> <nonce> BEGIN>>>\\n<value>\\n<<<DATA <field> <nonce> END>>>`` where the original had the bare
   value, so the BEGIN line follows the label on its line ("GT: <<<DATA gt ... BEGIN>>>") and the label of the next
   field follows the END line after the template's own ``\\n``;
3. inside a value every run of three or more ``<`` or ``>`` is broken by a space ("<<<" -> "< <<").

Everything else in the user message (labels, their order, the ``\\n`` between them) is the released text.  The two
grounding templates (GPT and Qwen label) share one id and differ in digest (part of every cache key).

Scores: ``SCORE_PARSER`` = ``AnyOf`` of ``JsonObjectParser({"Score": Number(0, 1)}, python_literals=True,
numeric_strings=True)`` (one ``{...}``, optionally fenced; ``json.loads`` then ``ast.literal_eval``) and the strict
``ScoreParser(0, 1)`` for "Score: x" / "'Score': 'x'" (covers replies whose apostrophes break ``literal_eval``).
**Out-of-range scores are rejected, not clamped**: a 1.3 or a 75 means the judge used
another scale, so clamping would report a wrong 1.0; the item is unscored (``parse_failure`` with the reason) and
lowers the metric's coverage.  JSON response format is not requested: the verbatim prompts ask for a "python
dictionary" and never mention JSON, which OpenAI's JSON mode requires.
"""

from __future__ import annotations

import functools
import logging
import os
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Final

from lmms_agentic.judges.client import JudgeClient, default_client
from lmms_agentic.judges.config import JudgeConfig
from lmms_agentic.judges.parsers import AnyOf, ScoreParser
from lmms_agentic.judges.result import TRANSPORT_ERROR, JudgeResult
from lmms_agentic.judges.rubric import JsonObjectParser, Number
from lmms_agentic.judges.templates import JudgeRequest, PromptTemplate
from lmms_agentic.tasks.agentx.core import judging, task
from lmms_agentic.tasks.agentx.core.judge_prompts import SYSTEM_PROMPTS
from lmms_agentic.tasks.agentx.core.judging import (
    REPORTED_NAMES,
    TEMPLATE_VERSION,
    Judge,
    JudgeCall,
    Style,
    StyledJudge,
    check_style,
)

__all__ = [
    "ENV_STYLE",
    "SCORE_PARSER",
    "client_judge",
    "judge_doc",
    "judge_item",
    "plugin_judge",
    "style_for",
    "styled_client_judge",
    "template",
]

log = logging.getLogger(__name__)

ENV_STYLE: Final = "LMMS_AGENTIC_AGENTX_JUDGE_STYLE"
SCORE_PARSER: Final = AnyOf((
    JsonObjectParser({"Score": Number(0.0, 1.0)}, score="Score", numeric_strings=True, python_literals=True),
    ScoreParser(0, 1, integer=False, labels=("score",)),
))
"""The score parser: one JSON / Python-literal dict with a numeric ``Score`` in [0, 1], else a strict ``Score: x``."""


@functools.cache
def template(code_key: str, style: Style) -> PromptTemplate:
    """The judge template of one released metric (``code_key``, e.g. "goal_accuray") for a serialisation style."""
    return PromptTemplate(id=judging.template_id(code_key), version=TEMPLATE_VERSION,
                          user=judging.user_template(code_key, style), parser=SCORE_PARSER,
                          system=SYSTEM_PROMPTS[code_key])


def _request(call: JudgeCall) -> JudgeRequest:
    return JudgeRequest(template(call.code_key, call.style), call.values, call.item_id)


def client_judge(client: JudgeClient) -> Judge:
    """The core's ``Judge`` on a judge client: one item's calls as one ``judge_many`` batch (concurrency from the
    client config; cache first), or cache lookups only when no judge is configured (then ``not_configured``, no
    thread pool, no network).  An unexpected error below the client becomes a ``transport_error`` result per call
    (it must not make lmms-eval re-run, and re-pay, the item)."""
    def judge(calls: Sequence[JudgeCall]) -> list[dict[str, Any]]:
        batch = [_request(call) for call in calls]
        item_id = calls[0].item_id
        try:
            if client.config.configured:
                results = client.judge_many(batch, progress=False, desc=f"agentx {item_id}")
            else:
                results = [client.judge(request) for request in batch]
        except Exception as err:
            log.exception("Agent-X judging of item %s failed unexpectedly", item_id)
            detail = f"unexpected {err.__class__.__name__} while judging"
            results = [JudgeResult(score=None, unscored_reason=TRANSPORT_ERROR, detail=detail, item_id=item_id,
                                   template_id=r.template.id, template_version=r.template.version,
                                   judge_model_requested=client.config.model) for r in batch]
        return [result.as_dict() for result in results]

    return judge


def judge_item(item_id: str, gt: Mapping[str, Any], prediction: Mapping[str, Any], *, query_type: str,
               is_generative: bool, style: str | None = None, client: JudgeClient | None = None,
               metrics: Sequence[str] = REPORTED_NAMES,
               tool_metadata: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Judge one Agent-X item: {metric name: ``JudgeResult.as_dict()``} for ``metrics`` (``core/judging.py``'s
    ``judge_item`` with ``client_judge``).

    ``gt``: a ``data.json`` record or a GT block (``judging.gt_block``); ``tool_metadata`` overrides
    ``gt["tool_metadata"]``.  ``style`` ("gpt"/"qwen") defaults to ``style_for(client.config)``; ``client`` to
    the per-process ``default_client()``.  Never raises for judge trouble: transport errors, refusals and
    unparsable replies are unscored results with a reason; with no judge configured every result is
    ``not_configured`` and nothing is sent.  GT and argument errors raise before any request."""
    judge = client if client is not None else default_client()
    chosen = check_style(style) if style is not None else style_for(judge.config)
    return judging.judge_item(item_id, gt, prediction, client_judge(judge), query_type=query_type,
                              is_generative=is_generative, style=chosen, tool_metadata=tool_metadata,
                              metrics=metrics)


def styled_client_judge(client: JudgeClient) -> StyledJudge:
    """The core's judge on a judge client, in the style tied to that judge (``style_for(client.config)``)."""
    return StyledJudge(client_judge(client), style_for(client.config))


_WARNED: weakref.WeakSet[JudgeClient] = weakref.WeakSet()


def plugin_judge() -> StyledJudge | None:
    """The judge the one-shot tasks pass to the core (``core.task.score``): the per-process ``default_client()``
    when the plugin's own variables configure one (``LMMS_AGENTIC_JUDGE_PRESET``, or ``LMMS_AGENTIC_JUDGE_BASE_URL``
    with ``LMMS_AGENTIC_JUDGE_MODEL``; a provider's API key alone never does), else None, with one warning per
    client saying how to set one (the judged metrics are then unscored, ``judging.NO_JUDGE``)."""
    client = default_client()
    if client.config.configured:
        return styled_client_judge(client)
    if client not in _WARNED:
        _WARNED.add(client)
        log.warning("no LLM judge configured: judged metrics are unscored. Set LMMS_AGENTIC_JUDGE_PRESET, "
                    "or LMMS_AGENTIC_JUDGE_BASE_URL and LMMS_AGENTIC_JUDGE_MODEL (see lmms_agentic.judges)")
    return None


def judge_doc(doc: Mapping[str, Any], prediction: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The judged metrics of one loaded Agent-X document (a row of ``hooks.all_docs``) for ``prediction`` with the
    per-process ``default_client()`` (``core.task.judged``: unscored as not judgeable when the load recorded a
    ``judge_blocker``; without a configured judge only cached answers score, the rest is ``not_configured``)."""
    return task.judged(doc, prediction, styled_client_judge(default_client()))


def style_for(config: JudgeConfig, environ: Mapping[str, str] | None = None) -> Style:
    """The serialisation style tied to a judge: ``LMMS_AGENTIC_AGENTX_JUDGE_STYLE`` (gpt/qwen) when set, else
    ``judging.style_for_model`` of the judge model."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_STYLE, "").strip().lower()
    if raw:
        try:
            return check_style(raw)
        except ValueError:
            raise ValueError(f"{ENV_STYLE}={env.get(ENV_STYLE)!r}: expected 'gpt' or 'qwen'") from None
    return judging.style_for_model(config.model)
