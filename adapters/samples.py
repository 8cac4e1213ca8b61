"""The per-sample result contract of multiple-choice tasks: one record per document, logged once, plus compact views.

lmms-eval writes every value `process_results` returns into the sample log and hands each metric's aggregation only
the values returned under that metric's name. So an MCQ task returns:

- under its FIRST metric (the benchmark's headline): the full sample **record** (below), which that metric
  aggregates through `score`;
- under every other metric: a compact **view** of the record: `{"score": x}` (x on the metric's scale, 100/0 for a
  percentage), a small dict of the fields the aggregation needs, or None when the row does not count for that
  metric (e.g. a per-source accuracy on a row of another source). Views never carry `"score": None`: lmms-eval's
  CLT standard error (computed from `score`) would fail on it.

Record fields, the same meaning in every MCQ benchmark:

- `benchmark`, `id`: the benchmark and its own stable item id (lmms-eval's `doc_id` is only a row index);
- `domain`, `source`: labels for breakdowns;
- `answer`: the gold letter in this row (after any option permutation);
- `pred`: the letter of the project's strict extractor (or of the LLM-judge fallback when
  `LMMS_AGENTIC_MCQ_JUDGE=1` and the rules found nothing); None = no answer. Letter-bias metrics use `pred`;
- `correct`: `pred == answer`;
- `rule`, `no_answer_reason`, `extraction_path` ("rules" / "judge"), `judge` (the fallback's judge result or None);
- `request_failed`: the backend returned lmms-eval's `[LMMS_EVAL_REQUEST_FAILED` marker (also a no-answer);
- `loop`: the thinking-loop verdict on the raw reply (`adapters.loops`): `loop`, `truncated`, the repeating cycle,
  the reply length; every task reports `loop_rate` and `truncation_rate` (`LOOP_VIEWS`);
- `score`: 100 × whether this row counts as correct for the task's first metric (the benchmark's headline field,
  e.g. RoboVista's `correct_parity`); absent in permutation tasks, whose first metric is question-level;
- benchmark-specific fields (RoboVista: `pred_parity`, `correct_parity`, `parity_mode`, `confidence`, ...).

Rows of a permutation task (see `adapters.permutation`) add `group_id`, `perm_mode`, `perm_seed`, `perm_index`,
`permutation`, `chosen` (the original option index that `pred` points to) and `gold_original`, and return the
permutation metrics' views instead of the task's own (`adapters.permutation_metrics.views`).

`read_record(sample_line)` finds the record in a line of `<ts>_samples_<task>.jsonl` (the value that carries both
`benchmark` and `id`; views never do).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters import permutation, permutation_metrics
from lmms_agentic.adapters.core.task import CoreTask, Judge, task_values
from lmms_agentic.adapters.loops import check_response

Record = dict[str, Any]
View = Callable[[Mapping[str, Any]], Any]
ProcessResults = Callable[[Mapping[str, Any], list[Any]], dict[str, Any]]


def response_text(results: Sequence[Any]) -> object:
    """The model's reply for a `generate_until` document (lmms-eval passes a one-element list)."""
    return results[0] if results else ""


def loop_check(response: object, answered: bool) -> dict[str, object]:
    """The thinking-loop / truncation verdict of a reply (`adapters.loops`; no token counts reach process_results,
    so `truncated` means "ends inside a loop, unanswered"; the report refines it with the logged token counts)."""
    return check_response(response, answered=answered).as_dict()


def _percent(value: bool) -> dict[str, float]:
    return {"score": 100.0 if value else 0.0}


def loop_view(record: Mapping[str, Any]) -> Any:
    return _percent(bool(record["loop"]["loop"]))


def truncation_view(record: Mapping[str, Any]) -> Any:
    return _percent(bool(record["loop"]["truncated"]))


LOOP_VIEWS: dict[str, View] = {"loop_rate": loop_view, "truncation_rate": truncation_view}
"""Reported by every task (MCQ, permutation and free-form alike), after its own metrics."""


def has_letter(record: Mapping[str, Any]) -> bool:
    """An MCQ record's `answered`: the extractor (or its judge fallback) read a letter."""
    return record.get("pred") is not None


def core_results_function(core: CoreTask, kind: str, judge: Callable[[], Judge | None] = lambda: None,
                          answered: Callable[[Mapping[str, Any]], bool] = has_letter,
                          loop_views: Mapping[str, View] = LOOP_VIEWS) -> ProcessResults:
    """The plugin's `process_results` for a task of `kind` of a benchmark core (`adapters.core.task`): the core
    decides the record and every metric value (`core.score`, `core.METRICS`); the plugin adds only its extras: the
    judge it passes in (`judge()`, e.g. the MCQ fallback extractor; None = rules only), the thinking-loop verdict
    (`loop`: `answered(record)` says whether the record holds an answer; reported as `loop_views`) and, on rows of
    a permutation task, the permutation fields and views."""

    def process_results(doc: Mapping[str, Any], results: list[Any]) -> dict[str, Any]:
        response = response_text(results)
        record = core.score(doc, response, judge())
        record["loop"] = loop_check(response, answered(record))
        if "group_id" in doc:
            # the first metric of a permutation task is question-level: its record carries no row `score` (which
            # lmms-eval would read for a per-row standard error of `perm_mean_acc`)
            record.pop("score", None)
            record.update(permutation.row_fields(doc, record["pred"]))
            return permutation_metrics.views(record)
        return {**task_values(core, kind, record), **{name: view(record) for name, view in loop_views.items()}}

    return process_results


def mcq_example_replies(doc: Mapping[str, Any]) -> list[str]:
    """Replies that exercise an MCQ scorer on `doc` (a benchmark's `example_replies`): the gold letter, a wrong one,
    no answer, and a think-then-answer reply with a stated confidence."""
    letters = [chr(ord("A") + i) for i, text in enumerate(doc["options"]) if text]
    wrong = next(letter for letter in letters if letter != doc["answer"])
    return [doc["answer"], f"A red cup is on the left. The answer is {wrong}.", "A robot arm holds it.",
            f"<think>Option {wrong} looks close.</think> Answer: {doc['answer']}\nConfidence: 70%"]


def read_record(sample_line: Mapping[str, Any]) -> dict[str, Any] | None:
    """The sample record of one logged sample line (None for lines of tasks that are not ours)."""
    for key, value in sample_line.items():  # lm-eval also logs the doc, which has "benchmark" and "id" too
        if key != "doc" and isinstance(value, dict) and "benchmark" in value and "id" in value:
            return value
    return None
