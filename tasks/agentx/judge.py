"""Agent-X judging through the project's judge layer.

Owns: the nine reported judged metrics and the three unreported ones as versioned ``PromptTemplate``s (id
``agentx/<code key>``, version "1"; system prompt = the verbatim string of ``agentx_prompts``), the GPT- and
Qwen-script serialisation of the ground truth and the prediction, the score parser, the judge-style choice and
``judge_item`` (one ``judge_many`` batch per item; never raises for judge trouble).

Use (in ``process_results``; ``gt`` is the ``data.json`` record or the ``{gt}`` block, ``prediction`` the parsed
model output)::

    from lmms_agentic.tasks.agentx.judge import judge_item
    judged = judge_item(doc_id, gt, prediction, query_type=qt, is_generative=gen)  # style from the judge model
    # -> {"ground_s": JudgeResult.as_dict(), ..., "toolset_acc": {...}}  (no "goal_acc" for generative ids)

``METRICS`` lists (metric name, released code key): ground_s/grounding_accuracy, tool_p/precision_score,
tool_acc/tool_accuray, fact_acc/faithfulness_accuray, context_s/context_score, fact_p/factual_precision,
sem_acc/semantic_accuracy, goal_acc/goal_accuray, toolset_acc/toolset_accuray; ``UNREPORTED_METRICS`` adds
step_s/step_score, clarity_s/clarity_penalty, reward_s/reward_score (pass ``metrics=ALL_NAMES``).
``style_for(config)`` ties the serialisation to the judge (logged per sample as ``judge_style``).

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

Everything else in the user message (labels, their order, the ``\\n`` between them) is the released text.

Serialisation (``serialise``), as the released scripts call it on each value:

* ``style="gpt"``: Python ``str()`` (single-quoted repr of dicts and lists; a string is inserted as is);
* ``style="qwen"``: ``json.dumps(value, ensure_ascii=False, indent=2)``; faithfulness uses plain ``json.dumps``
  (ASCII escapes, no indent).  ``query_type`` is inserted raw in both styles (the scripts never serialise it).
  Note that Qwen dumps *strings* too: the missing-key placeholder ``'[]'`` becomes ``"[]"``, the empty record's
  ``""`` steps become ``""`` and ``gt_query`` is quoted (the GPT script gives ``[]``, an empty value and the bare
  query).
* The GT block is ``{"query", "GT reasoning steps", "GT final answer"}`` in that order; a prediction without
  ``reasoning_steps`` / ``final_answer`` uses the string ``'[]'`` (a present key is used whatever its value).
* Grounding's user label is ``agent's reasoning steps:`` (GPT script) or ``agent's reasoning trace:`` (Qwen script);
  both templates share the id ``agentx/grounding_accuracy`` and differ in digest (part of every cache key).
* Deliberate deviation: the Qwen script replaces every ``\\n`` of the chat-templated prompt with a space; this module
  does not (the prompt reaches the server as chat messages; flattening would also merge the fence lines).

Scores: ``SCORE_PARSER`` = ``AnyOf`` of ``JsonObjectParser({"Score": Number(0, 1)}, python_literals=True,
numeric_strings=True)`` (one ``{...}``, optionally fenced; ``json.loads`` then ``ast.literal_eval``) and the strict
``ScoreParser(0, 1)`` for "Score: x" / "'Score': 'x'" (covers replies whose apostrophes break ``literal_eval``).
**Out-of-range scores are rejected, not clamped**: a 1.3 or a 75 means the judge used
another scale, so clamping would report a wrong 1.0; the item is unscored (``parse_failure`` with the reason) and
lowers the metric's coverage.  JSON response format is not requested: the verbatim prompts ask for a "python
dictionary" and never mention JSON, which OpenAI's JSON mode requires.

Goal accuracy is **not asked for generative ids**; ``judge_item`` omits ``goal_acc`` for them.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from lmms_agentic.judges.client import JudgeClient, default_client
from lmms_agentic.judges.config import JudgeConfig
from lmms_agentic.judges.parsers import AnyOf, ScoreParser
from lmms_agentic.judges.result import TRANSPORT_ERROR, JudgeResult
from lmms_agentic.judges.rubric import JsonObjectParser, Number
from lmms_agentic.judges.templates import JudgeRequest, PromptTemplate
from lmms_agentic.tasks.agentx.judge_prompts import SYSTEM_PROMPTS

__all__ = [
    "ALL_METRICS",
    "ALL_NAMES",
    "ENV_STYLE",
    "GOAL_METRIC",
    "METRICS",
    "NOT_JUDGEABLE",
    "REPORTED_NAMES",
    "SCORE_PARSER",
    "STYLES",
    "TEMPLATE_VERSION",
    "UNREPORTED_METRICS",
    "Style",
    "field_values",
    "gt_block",
    "judge_item",
    "not_judgeable_item",
    "requests_for_item",
    "serialise",
    "style_for",
    "template",
]

log = logging.getLogger(__name__)

Style = Literal["gpt", "qwen"]
STYLES: Final[tuple[Style, ...]] = ("gpt", "qwen")
ENV_STYLE: Final = "LMMS_AGENTIC_AGENTX_JUDGE_STYLE"
TEMPLATE_VERSION: Final = "1"
MISSING_PREDICTION: Final = "[]"
"""What the released scripts use for a prediction without ``reasoning_steps`` or ``final_answer``."""

METRICS: Final[tuple[tuple[str, str], ...]] = (
    ("ground_s", "grounding_accuracy"),
    ("tool_p", "precision_score"),
    ("tool_acc", "tool_accuray"),
    ("fact_acc", "faithfulness_accuray"),
    ("context_s", "context_score"),
    ("fact_p", "factual_precision"),
    ("sem_acc", "semantic_accuracy"),
    ("goal_acc", "goal_accuray"),
    ("toolset_acc", "toolset_accuray"),
)
"""The nine judged reported metrics: (lmms-eval metric name, released code key).  Goal_acc* is derived."""
UNREPORTED_METRICS: Final[tuple[tuple[str, str], ...]] = (
    ("step_s", "step_score"),
    ("clarity_s", "clarity_penalty"),
    ("reward_s", "reward_score"),
)
"""Computed by the released scripts but not reported (optional; 3 more calls per item)."""
ALL_METRICS: Final[tuple[tuple[str, str], ...]] = METRICS + UNREPORTED_METRICS
REPORTED_NAMES: Final[tuple[str, ...]] = tuple(name for name, _ in METRICS)
ALL_NAMES: Final[tuple[str, ...]] = tuple(name for name, _ in ALL_METRICS)
GOAL_METRIC: Final = "goal_acc"
NOT_JUDGEABLE: Final = "gt_not_judgeable"
"""Unscored reason of every judged metric of an item whose released GT the released judge scripts cannot judge
(they raise inside their per-item ``try`` and keep all scores None): see ``not_judgeable_item``."""
_CODE_KEY: Final[Mapping[str, str]] = dict(ALL_METRICS)

# The released user templates, placeholders in the judge layer's {{field}} syntax.
_USER: Final[Mapping[str, str]] = {
    "grounding_accuracy": "GT: {{gt}}\nagent's reasoning steps: {{pred_steps}}",
    "precision_score": "GT: {{gt}}\nagent's reasoning trace: {{pred_steps}}",
    "tool_accuray": "tool metadata: {{gt_tool_metadata}}\nagent's reasoning steps: {{pred_steps}}",
    "faithfulness_accuray": "GT: {{gt}}\nagent's reasoning trace: {{pred_steps}}",
    "context_score": "GT: {{gt}}\nagent's reasoning_steps: {{pred_steps}}",
    "factual_precision": "GT: {{gt}}\nagent's reasoning steps: {{pred_steps}}",
    "semantic_accuracy": ("GT: {{gt}}\nagent's reasoning steps: {{pred_steps}}\n"
                          "agent's final answer: {{pred_final_answer}}"),
    "goal_accuray": ("GT answer: {{gt_final_answer}}\nquery_type: {{query_type}}\n"
                     "agent's final answer: {{pred_final_answer}}"),
    "toolset_accuray": "GT: {{gt}}\nagent's reasoning steps: {{pred_steps}}",
    "step_score": "agent's reasoning step: {{pred_steps}}",
    "clarity_penalty": "agent's reasoning trace: {{pred_steps}}",
    "reward_score": "query: {{gt_query}}\nagent's reasoning trace: {{pred_steps}}",
}
_USER_QWEN: Final[Mapping[str, str]] = {
    "grounding_accuracy": "GT: {{gt}}\nagent's reasoning trace: {{pred_steps}}",
}

SCORE_PARSER: Final = AnyOf((
    JsonObjectParser({"Score": Number(0.0, 1.0)}, score="Score", numeric_strings=True, python_literals=True),
    ScoreParser(0, 1, integer=False, labels=("score",)),
))
"""The score parser: one JSON / Python-literal dict with a numeric ``Score`` in [0, 1], else a strict ``Score: x``."""


def _check_style(style: str) -> Style:
    if style == "gpt":
        return "gpt"
    if style == "qwen":
        return "qwen"
    raise ValueError(f"Agent-X judge style must be 'gpt' or 'qwen', got {style!r}")


@functools.cache
def template(code_key: str, style: Style) -> PromptTemplate:
    """The judge template of one released metric (``code_key``, e.g. "goal_accuray") for a serialisation style."""
    if code_key not in _USER:
        raise KeyError(f"unknown Agent-X judge metric {code_key!r} (known: {', '.join(_USER)})")
    user = _USER_QWEN.get(code_key, _USER[code_key]) if _check_style(style) == "qwen" else _USER[code_key]
    return PromptTemplate(id=f"agentx/{code_key}", version=TEMPLATE_VERSION, user=user, parser=SCORE_PARSER,
                          system=SYSTEM_PROMPTS[code_key])


def serialise(value: Any, style: Style, *, compact: bool = False) -> str:
    """One value as the released script of ``style`` inserts it (``compact``: Qwen's plain ``json.dumps``)."""
    if _check_style(style) == "gpt":
        return str(value)
    if compact:
        return json.dumps(value, default=str)
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def gt_block(gt: Mapping[str, Any]) -> dict[str, Any]:
    """The ``{gt}`` dict of the released scripts: ``{"query", "GT reasoning steps", "GT final answer"}``.

    ``gt`` is either a ``data.json`` record (``query``, ``reasoning_steps``, ``final_answer``) or already such a
    block; values are used as given (a ``[[...]]``-wrapped step list stays wrapped, as in the released runs)."""
    if "GT reasoning steps" in gt:
        return {"query": gt["query"], "GT reasoning steps": gt["GT reasoning steps"],
                "GT final answer": gt["GT final answer"]}
    return {"query": gt["query"], "GT reasoning steps": gt["reasoning_steps"], "GT final answer": gt["final_answer"]}


def field_values(code_key: str, gt: Mapping[str, Any], prediction: Mapping[str, Any], *, query_type: str,
                 style: Style, tool_metadata: Mapping[str, Any] | None = None,
                 memo: dict[tuple[str, bool], str] | None = None) -> dict[str, str]:
    """The serialised field values of one metric's user template (exactly the template's fields).

    ``gt``: see ``gt_block``; ``tool_metadata`` defaults to ``gt["tool_metadata"]`` (the GT tools' catalogue
    entries).  ``prediction``: the parsed model output (``reasoning_steps``, ``final_answer``; a missing key becomes
    the string ``'[]'``, a present one is used whatever its value).  ``memo`` (one dict per item) keeps values
    serialised for one metric for the item's other metrics (the GT block is in most of the nine templates)."""
    compact = style == "qwen" and code_key == "faithfulness_accuray"
    steps = prediction.get("reasoning_steps", MISSING_PREDICTION)
    final = prediction.get("final_answer", MISSING_PREDICTION)
    available = {
        "gt": lambda: serialise(gt_block(gt), style, compact=compact),
        "pred_steps": lambda: serialise(steps, style, compact=compact),
        "pred_final_answer": lambda: serialise(final, style),
        "gt_tool_metadata": lambda: serialise(tool_metadata if tool_metadata is not None else gt["tool_metadata"],
                                              style),
        "gt_final_answer": lambda: serialise(gt_block(gt)["GT final answer"], style),
        "query_type": lambda: str(query_type),
        "gt_query": lambda: serialise(gt["query"], style),
    }
    if memo is None:
        return {name: available[name]() for name in template(code_key, style).fields}
    values = {}
    for name in template(code_key, style).fields:
        key = (name, compact)
        if key not in memo:
            memo[key] = available[name]()
        values[name] = memo[key]
    return values


def _metric_names(metrics: Sequence[str], is_generative: bool) -> list[str]:
    unknown = [m for m in metrics if m not in _CODE_KEY]
    if unknown:
        raise ValueError(f"unknown Agent-X metrics {unknown} (known: {', '.join(_CODE_KEY)})")
    names = list(dict.fromkeys(metrics))
    return [m for m in names if not (is_generative and m == GOAL_METRIC)]


def requests_for_item(item_id: str, gt: Mapping[str, Any], prediction: Mapping[str, Any], *, query_type: str,
                      is_generative: bool, style: str, tool_metadata: Mapping[str, Any] | None = None,
                      metrics: Sequence[str] = REPORTED_NAMES) -> dict[str, JudgeRequest]:
    """{metric name: request} for one item (no Goal request for generative ids).

    Raises ``KeyError``/``ValueError`` for a malformed GT record, an unknown metric or style: programming or data
    errors, raised before any request is sent."""
    chosen = _check_style(style)
    out: dict[str, JudgeRequest] = {}
    memo: dict[tuple[str, bool], str] = {}
    for name in _metric_names(metrics, is_generative):
        code_key = _CODE_KEY[name]
        try:
            values = field_values(code_key, gt, prediction, query_type=query_type, style=chosen,
                                  tool_metadata=tool_metadata, memo=memo)
        except KeyError as err:
            raise KeyError(f"Agent-X item {item_id}: the GT record lacks {err} (needed by {name})") from None
        out[name] = JudgeRequest(template(code_key, chosen), values, str(item_id))
    return out


def judge_item(item_id: str, gt: Mapping[str, Any], prediction: Mapping[str, Any], *, query_type: str,
               is_generative: bool, style: str | None = None, client: JudgeClient | None = None,
               metrics: Sequence[str] = REPORTED_NAMES,
               tool_metadata: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Judge one Agent-X item: {metric name: ``JudgeResult.as_dict()``} for ``metrics`` (default: the nine
    reported ones; ``goal_acc`` is omitted for generative items, which are never asked).

    ``gt``: a ``data.json`` record or a GT block (``gt_block``); ``tool_metadata`` overrides
    ``gt["tool_metadata"]``.  ``style`` ("gpt"/"qwen") defaults to ``style_for(client.config)``; ``client`` to
    the per-process ``default_client()``.  The item's calls run as one ``client.judge_many`` batch (concurrency
    from the client config; cache first).  Never raises for judge trouble: transport errors, refusals and
    unparsable replies are unscored results with a reason; with no judge configured every result is
    ``not_configured`` and nothing is sent.  GT and argument errors raise before any request."""
    judge = client if client is not None else default_client()
    chosen = _check_style(style) if style is not None else style_for(judge.config)
    requests = requests_for_item(item_id, gt, prediction, query_type=query_type, is_generative=is_generative,
                                 style=chosen, tool_metadata=tool_metadata, metrics=metrics)
    names, batch = list(requests), list(requests.values())
    if not batch:
        return {}
    try:
        if judge.config.configured:
            results = judge.judge_many(batch, progress=False, desc=f"agentx {item_id}")
        else:  # cache lookups only, then not_configured: no thread pool, no network
            results = [judge.judge(request) for request in batch]
    except Exception as err:  # a bug below the client must not make lmms-eval re-run (and re-pay) the item
        log.exception("Agent-X judging of item %s failed unexpectedly", item_id)
        detail = f"unexpected {err.__class__.__name__} while judging"
        results = [JudgeResult(score=None, unscored_reason=TRANSPORT_ERROR, detail=detail, item_id=str(item_id),
                               template_id=r.template.id, template_version=r.template.version,
                               judge_model_requested=judge.config.model) for r in batch]
    return {name: result.as_dict() for name, result in zip(names, results, strict=True)}


def not_judgeable_item(item_id: str, detail: str, *, is_generative: bool,
                       metrics: Sequence[str] = REPORTED_NAMES) -> dict[str, dict[str, Any]]:
    """{metric name: unscored ``JudgeResult.as_dict()``} (reason ``NOT_JUDGEABLE``, ``detail`` says why) for the
    metrics ``judge_item`` would have asked; nothing is sent.  The released scripts leave every score of such an
    item None, so it drops out of every judged mean; here it does too, and lowers each metric's coverage."""
    return {name: JudgeResult(score=None, unscored_reason=NOT_JUDGEABLE, item_id=str(item_id),
                              detail=f"not judged, as in the released judge scripts: {detail}",
                              template_id=f"agentx/{_CODE_KEY[name]}", template_version=TEMPLATE_VERSION).as_dict()
            for name in _metric_names(metrics, is_generative)}


def style_for(config: JudgeConfig, environ: Mapping[str, str] | None = None) -> Style:
    """The serialisation style tied to a judge: ``LMMS_AGENTIC_AGENTX_JUDGE_STYLE`` (gpt/qwen) when set, else
    "qwen" for a model name containing "qwen" (the Qwen3-14B judge script), else "gpt"."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_STYLE, "").strip().lower()
    if raw:
        try:
            return _check_style(raw)
        except ValueError:
            raise ValueError(f"{ENV_STYLE}={env.get(ENV_STYLE)!r}: expected 'gpt' or 'qwen'") from None
    return "qwen" if "qwen" in (config.model or "").lower() else "gpt"
