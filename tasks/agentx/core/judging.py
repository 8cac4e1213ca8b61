"""Agent-X judged metrics, harness-neutral: what each judge call asks, and how one item's answers become its values.

Owns the judged metrics (``JUDGED_METRICS``: nine reported, ``UNREPORTED_METRICS``: three more the released scripts
compute), the released user templates (``{{field}}`` placeholders; the system prompts are ``core/judge_prompts.py``),
the GPT- and Qwen-script serialisation of the ground truth and the prediction (``serialise``, ``gt_block``,
``field_values``), the style a judge model implies (``style_for_model``) and ``judge_item``: the calls of one item
(``JudgeCall``, no Goal call for generative ids) handed to a judge that the caller passes in, and its answers keyed
by metric; the style a passed judge asks for (``StyledJudge``, ``style_of``) and the unscored results of an item that
is not judged (``unscored_results``: no judge, or a GT the released scripts cannot judge).  The judge itself
(client, cache, breaker, fencing, the strict score parser) is the plugin's (``tasks/agentx/judge.py``); an answer
is the judge layer's result payload (``{"score": ...}`` or ``{"unscored_reason": ...}`` with details), which
``core/metrics.py`` reads.

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
  both templates share the id ``agentx/grounding_accuracy``.
* Deliberate deviation: the Qwen script replaces every ``\\n`` of the chat-templated prompt with a space; this is not
  reproduced (the prompt reaches the server as chat messages).

Goal accuracy is **not asked for generative ids**; ``judge_item`` omits ``goal_acc`` for them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from lmms_agentic.tasks.agentx.core.judge_prompts import SYSTEM_PROMPTS

Style = Literal["gpt", "qwen"]
STYLES: Final[tuple[Style, ...]] = ("gpt", "qwen")
TEMPLATE_VERSION: Final = "1"
MISSING_PREDICTION: Final = "[]"
"""What the released scripts use for a prediction without ``reasoning_steps`` or ``final_answer``."""

JUDGED_METRICS: Final[tuple[tuple[str, str], ...]] = (
    ("ground_s", "grounding_accuracy"), ("tool_p", "precision_score"), ("tool_acc", "tool_accuray"),
    ("fact_acc", "faithfulness_accuray"), ("context_s", "context_score"), ("fact_p", "factual_precision"),
    ("sem_acc", "semantic_accuracy"), ("goal_acc", "goal_accuray"), ("toolset_acc", "toolset_accuray"),
)
"""The nine judged reported metrics: (metric name, released code key).  Goal_acc* is derived (``core/metrics.py``)."""
UNREPORTED_METRICS: Final[tuple[tuple[str, str], ...]] = (
    ("step_s", "step_score"), ("clarity_s", "clarity_penalty"), ("reward_s", "reward_score"))
"""Computed by the released scripts but not reported (optional, ``metrics=ALL_NAMES``; 3 more calls per item)."""
ALL_JUDGED_METRICS: Final[tuple[tuple[str, str], ...]] = JUDGED_METRICS + UNREPORTED_METRICS
REPORTED_NAMES: Final[tuple[str, ...]] = tuple(name for name, _ in JUDGED_METRICS)
ALL_NAMES: Final[tuple[str, ...]] = tuple(name for name, _ in ALL_JUDGED_METRICS)
GOAL_METRIC: Final = "goal_acc"
NO_JUDGE: Final = "not_configured"
"""Unscored reason of every judged metric of an item scored without a judge (the judge layer's reason for an
unconfigured judge, so coverage reports name the cause: no judge set)."""
NOT_JUDGEABLE: Final = "gt_not_judgeable"
"""Unscored reason of every judged metric of an item whose released GT the released judge scripts cannot judge
(they raise inside their per-item ``try`` and keep all scores None; ``records.normalise`` sets ``judge_blocker``)."""
_CODE_KEY: Final[Mapping[str, str]] = dict(ALL_JUDGED_METRICS)

# The released user templates, placeholders in {{field}} syntax.
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
_PLACEHOLDER: Final = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def check_style(style: str) -> Style:
    """``style`` as a ``Style``; ValueError for anything but "gpt" and "qwen"."""
    if style == "gpt":
        return "gpt"
    if style == "qwen":
        return "qwen"
    raise ValueError(f"Agent-X judge style must be 'gpt' or 'qwen', got {style!r}")


def style_for_model(model: str | None) -> Style:
    """The released script a judge model follows: "qwen" for a model name containing "qwen" (the Qwen3-14B judge
    script), else "gpt"."""
    return "qwen" if "qwen" in (model or "").lower() else "gpt"


def code_key(metric: str) -> str:
    """The released code key of a judged metric name ("goal_acc" -> "goal_accuray")."""
    return _CODE_KEY[metric]


def template_id(key: str) -> str:
    """The judge template id of a released code key (``agentx/<code key>``, version ``TEMPLATE_VERSION``)."""
    return f"agentx/{key}"


def user_template(key: str, style: Style) -> str:
    """The released user template of one metric (``key``, e.g. "goal_accuray") for a serialisation style."""
    if key not in _USER:
        raise KeyError(f"unknown Agent-X judge metric {key!r} (known: {', '.join(_USER)})")
    return _USER_QWEN.get(key, _USER[key]) if check_style(style) == "qwen" else _USER[key]


def _fields(key: str, style: Style) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_PLACEHOLDER.findall(user_template(key, style))))


def serialise(value: Any, style: Style, *, compact: bool = False) -> str:
    """One value as the released script of ``style`` inserts it (``compact``: Qwen's plain ``json.dumps``)."""
    if check_style(style) == "gpt":
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


def field_values(key: str, gt: Mapping[str, Any], prediction: Mapping[str, Any], *, query_type: str,
                 style: Style, tool_metadata: Mapping[str, Any] | None = None,
                 memo: dict[tuple[str, bool], str] | None = None) -> dict[str, str]:
    """The serialised field values of one metric's user template (exactly the template's fields, in order).

    ``gt``: see ``gt_block``; ``tool_metadata`` defaults to ``gt["tool_metadata"]`` (the GT tools' catalogue
    entries).  ``prediction``: the parsed model output (``reasoning_steps``, ``final_answer``; a missing key becomes
    the string ``'[]'``, a present one is used whatever its value).  ``memo`` (one dict per item) keeps values
    serialised for one metric for the item's other metrics (the GT block is in most of the nine templates)."""
    compact = style == "qwen" and key == "faithfulness_accuray"
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
        return {name: available[name]() for name in _fields(key, style)}
    values = {}
    for name in _fields(key, style):
        slot = (name, compact)
        if slot not in memo:
            memo[slot] = available[name]()
        values[name] = memo[slot]
    return values


def judged_metric_names(metrics: Sequence[str], is_generative: bool) -> list[str]:
    """The judged metrics asked for an item, in order, duplicates dropped (no Goal_acc for a generative item);
    ValueError for an unknown name."""
    unknown = [m for m in metrics if m not in _CODE_KEY]
    if unknown:
        raise ValueError(f"unknown Agent-X metrics {unknown} (known: {', '.join(_CODE_KEY)})")
    names = list(dict.fromkeys(metrics))
    return [m for m in names if not (is_generative and m == GOAL_METRIC)]


@dataclass(frozen=True)
class JudgeCall:
    """One judge call: the metric, its released code key, the serialisation style, the item and the template's
    serialised field values (the user message is ``user_template(code_key, style)`` with the values filled in)."""

    metric: str
    code_key: str
    style: Style
    item_id: str
    values: dict[str, str]

    @property
    def system(self) -> str:
        """The verbatim system prompt of the metric."""
        return SYSTEM_PROMPTS[self.code_key]


Judge = Callable[[Sequence[JudgeCall]], Sequence[Mapping[str, Any]]]
"""Answers the calls of one item, in order: one result payload each (scored or unscored with a reason); it never
raises for judge trouble."""


@dataclass(frozen=True)
class StyledJudge:
    """A `Judge` that names the serialisation style its judge model was prompted in by the released scripts (the
    GPT or the Qwen judge script); calling it asks `answer`."""

    answer: Judge
    style: Style = "gpt"

    def __call__(self, calls: Sequence[JudgeCall]) -> Sequence[Mapping[str, Any]]:
        return self.answer(calls)


def style_of(judge: object) -> Style:
    """The serialisation style of the calls ``judge`` is asked: its ``style`` attribute (a ``StyledJudge``'s), else
    "gpt" (the GPT judge script, the paper's judge)."""
    return check_style(str(getattr(judge, "style", "gpt")))


def unscored_results(item_id: str, reason: str, detail: str, *, is_generative: bool,
                     metrics: Sequence[str] = REPORTED_NAMES) -> dict[str, dict[str, Any]]:
    """{metric name: an unscored result payload} (``reason``, ``detail`` says why) for the metrics ``judge_item``
    would have asked; nothing is asked.  The payload has the judge layer's keys a report reads (``score`` None,
    ``scored`` false, ``unscored_reason``, ``detail``, the item and the template)."""
    return {name: {"score": None, "scored": False, "unscored_reason": reason, "detail": detail,
                   "item_id": str(item_id), "template_id": template_id(code_key(name)),
                   "template_version": TEMPLATE_VERSION}
            for name in judged_metric_names(metrics, is_generative)}


def judge_calls(item_id: str, gt: Mapping[str, Any], prediction: Mapping[str, Any], *, query_type: str,
                is_generative: bool, style: str, tool_metadata: Mapping[str, Any] | None = None,
                metrics: Sequence[str] = REPORTED_NAMES) -> list[JudgeCall]:
    """The judge calls of one item (no Goal call for generative ids).

    Raises ``KeyError``/``ValueError`` for a malformed GT record, an unknown metric or style: programming or data
    errors, raised before any call is made."""
    chosen = check_style(style)
    calls: list[JudgeCall] = []
    memo: dict[tuple[str, bool], str] = {}
    for name in judged_metric_names(metrics, is_generative):
        key = _CODE_KEY[name]
        try:
            values = field_values(key, gt, prediction, query_type=query_type, style=chosen,
                                  tool_metadata=tool_metadata, memo=memo)
        except KeyError as err:
            raise KeyError(f"Agent-X item {item_id}: the GT record lacks {err} (needed by {name})") from None
        calls.append(JudgeCall(name, key, chosen, str(item_id), values))
    return calls


def judge_item(item_id: str, gt: Mapping[str, Any], prediction: Mapping[str, Any], judge: Judge, *,
               query_type: str, is_generative: bool, style: str, tool_metadata: Mapping[str, Any] | None = None,
               metrics: Sequence[str] = REPORTED_NAMES) -> dict[str, dict[str, Any]]:
    """Judge one Agent-X item: {metric name: the judge's result payload} for ``metrics`` (default: the nine reported
    ones; ``goal_acc`` is omitted for generative items, which are never asked).  ``judge`` answers all of the
    item's calls at once and is not called when there are none."""
    calls = judge_calls(item_id, gt, prediction, query_type=query_type, is_generative=is_generative, style=style,
                        tool_metadata=tool_metadata, metrics=metrics)
    if not calls:
        return {}
    answers = judge(calls)
    return {call.metric: dict(answer) for call, answer in zip(calls, answers, strict=True)}
