"""What the viewer shows of one logged sample line: its list row (status, why, the metrics it failed, error modes,
flags, search text) and its page (prompt, reply, what the extractor read and by which rule, gold, every metric's
value, the judge's verdicts, Agent-X steps, executed-tool rounds).

Pure functions over one line of a harness's sample file (either harness; the record is the value carrying
``benchmark`` and ``id``, ``adapters.samples.read_record``) and the benchmark's declaration (``benchmark.json``:
headline metric, scale, breakdown fields). Status follows the report's reading of a line (``report.judged.
line_value``): the first of the headline metric, the benchmark's profile metrics and the record metric that the
line counts decides; 0 is ``wrong``, the top of the scale ``correct``, anything between ``partial``, no score
``unscored`` with the judge's or the view's reason. Permutation-level facts (a question whose chosen option
changes between orders: ``flipped``) need every row of the question and are added by ``viewer.build``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.report.judged import line_value

SEARCH_CHARS = 200
"""The list's text search reads this much of the prompt's start and end (a question may follow a long system
text) and of the reply; the page shows everything."""
EXTRACTION_FIELDS = ("pred", "rule", "extraction_path", "no_answer_reason", "parity_mode", "pred_parity",
                     "rule_parity", "correct_parity", "confidence", "format_ok", "parse_path", "parse_failure",
                     "exact_match")
"""Record fields that say what the extractor (or the trace parser) read and by which rule, in display order."""
HEADER_FIELDS = ("domain", "source", "query_type", "media_type", "input_type", "ability_type", "ability_split",
                 "task", "protocol")
FAILED_CALL = frozenset({"error", "invalid_arguments", "unavailable", "timeout"})
"""Round statuses counted as a tool error in the list's filter (a call that did not give the tool's result)."""
THUMBNAIL_TEXT = re.compile(r'"png_b64":\s*"([A-Za-z0-9+/=]*)"')
"""A logged returned-image thumbnail inside a stored response (the episode payload)."""


@dataclass(frozen=True)
class Outcome:
    """How a line counts: ``status`` (correct / wrong / partial / unscored), its ``score`` on the benchmark's
    scale (None when unscored), the metric that decided and the reason when there is one."""

    status: str
    score: float | None
    metric: str
    why: str


def record_metric(line: Mapping[str, Any]) -> str | None:
    """The name under which the line carries its record (the task's first metric)."""
    for key, value in line.items():
        if key != "doc" and isinstance(value, dict) and "benchmark" in value and "id" in value:
            return key
    return None


def reply_text(line: Mapping[str, Any]) -> str:
    """The model's full reply (``resps`` keeps the thinking when the harness logged it, else ``filtered_resps``)."""
    value: Any = line.get("resps", line.get("filtered_resps", ""))
    while isinstance(value, list):
        value = value[0] if value else ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _top(benchmark: Benchmark | None) -> float:
    return 1.0 if benchmark is not None and benchmark.scale == "unit" else 100.0


def _unscored_reason(line: Mapping[str, Any], metric: str, record: Mapping[str, Any]) -> str:
    view = line.get(metric)
    if isinstance(view, Mapping) and view.get("unscored_reason"):
        return str(view["unscored_reason"])
    judge = record.get("judge")
    entry = judge.get(metric) if isinstance(judge, Mapping) else None
    if isinstance(entry, Mapping) and entry.get("unscored_reason"):
        detail = f": {entry['detail']}" if entry.get("detail") else ""
        return f"{entry['unscored_reason']}{detail}"
    return "no value for this metric"


def outcome(line: Mapping[str, Any], benchmark: Benchmark | None) -> Outcome:
    """How the line counts (module docstring)."""
    record = read_record(line) or {}
    own = record_metric(line) or ""
    candidates = [benchmark.headline_metric, *benchmark.profile] if benchmark is not None else []
    top = _top(benchmark)
    for metric in dict.fromkeys([*candidates, own]):
        counts, score, _ = line_value(line, metric)
        if not counts:
            continue
        if score is None:
            return Outcome("unscored", None, metric, _unscored_reason(line, metric, record))
        status = "correct" if score >= top else "wrong" if score <= 0 else "partial"
        return Outcome(status, score, metric, mcq_reason(record))
    if "group_id" in record and isinstance(record.get("correct"), bool):  # a permutation row without a score
        return Outcome("correct" if record["correct"] else "wrong", top if record["correct"] else 0.0, "correct",
                       mcq_reason(record))
    return Outcome("unscored", None, own, "the line counts for none of the benchmark's metrics")


def failed_metrics(line: Mapping[str, Any], benchmark: Benchmark | None) -> dict[str, float | None]:
    """{metric: score, None when unscored} of the metrics (the benchmark's headline and profile, and the record
    metric) that the line counts and did not get full marks on (the list's "failed metric" filter, which the
    overview's values link to). A permutation row without a score fails its record metric with 0 when wrong."""
    record = read_record(line) or {}
    own = record_metric(line) or ""
    candidates = [benchmark.headline_metric, *benchmark.profile] if benchmark is not None else []
    top = _top(benchmark)
    found: dict[str, float | None] = {}
    for metric in dict.fromkeys([*candidates, own]):
        counts, score, _ = line_value(line, metric)
        if counts and (score is None or score < top):
            found[metric] = score
    if own and own not in found and record.get("correct") is False and "group_id" in record \
            and not line_value(line, own)[0]:
        found[own] = 0.0
    return found


def mcq_reason(record: Mapping[str, Any]) -> str:
    """Why a multiple-choice row has no answer ("" when it has one)."""
    if record.get("request_failed"):
        return "request failed"
    if "pred" in record and record.get("pred") is None:
        return f"no answer ({record.get('no_answer_reason') or 'no_match'})"
    return ""


def error_modes(record: Mapping[str, Any]) -> list[str]:
    """The failure labels the record carries: Agent-X's error flags and parse failure, a missing answer's reason,
    a failed request, an episode's stop (step limit) or error."""
    found: list[str] = []
    flags = record.get("errors")
    if isinstance(flags, Mapping):
        found += [str(name) for name, value in flags.items() if value is True]
    if record.get("parse_failure"):
        found.append(f"parse: {record['parse_failure']}")
    if "pred" in record and record.get("pred") is None:
        found.append(f"no answer: {record.get('no_answer_reason') or 'no_match'}")
    if record.get("request_failed"):
        found.append("request failed")
    execution = record.get("execution")
    if isinstance(execution, Mapping) and execution.get("stopped"):
        found.append(f"stopped: {execution['stopped']}")
    if record.get("episode_error"):
        found.append("episode error")
    return found


def looped(record: Mapping[str, Any]) -> bool:
    verdict = record.get("loop")
    return isinstance(verdict, Mapping) and bool(verdict.get("loop") or verdict.get("truncated"))


def rounds(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = record.get("rounds")
    return [entry for entry in found if isinstance(entry, Mapping)] if isinstance(found, list) else []


def tool_error(record: Mapping[str, Any]) -> bool:
    """An executed-tools episode with a call that did not return the tool's result (error, bad arguments...)."""
    return any(entry.get("kind") == "call" and entry.get("status") in FAILED_CALL for entry in rounds(record))


def question_text(line: Mapping[str, Any]) -> str:
    value = line.get("input", line.get("arguments", ""))
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)[:SEARCH_CHARS]


def summary(line: Mapping[str, Any], task: str, benchmark: Benchmark | None) -> dict[str, Any]:
    """The sample's row in the list (the viewer's filters read these fields)."""
    record = read_record(line) or {}
    result = outcome(line, benchmark)
    question = question_text(line)
    head, tail = (question, "") if len(question) <= 2 * SEARCH_CHARS else \
        (question[:SEARCH_CHARS], question[-SEARCH_CHARS:])
    search = " ".join([str(record.get("id", "")), head, tail, reply_text(line)[:SEARCH_CHARS]]).lower()
    return {"task": task, "benchmark": str(record.get("benchmark", "")), "id": str(record.get("id", "")),
            "domain": str(record.get("domain") or record.get("query_type") or ""), "status": result.status,
            "why": result.why, "errors": error_modes(record), "loop": looped(record),
            "tool_error": tool_error(record), "flipped": False, "pred": _short(record.get("pred")),
            "fails": failed_metrics(line, benchmark),
            "score": result.score, "text": search}


def _short(value: Any) -> str:
    return "" if value is None else str(value)[:40]


def extraction(record: Mapping[str, Any]) -> list[list[str]]:
    """(field, value) rows of what the extractor read and by which rule (EXTRACTION_FIELDS present in the record);
    RoboVista-style ``parsers`` tables give one row per parser."""
    rows = [[name, _text(record[name])] for name in EXTRACTION_FIELDS if name in record]
    parsers = record.get("parsers")
    if isinstance(parsers, Mapping):
        for name, parsed in parsers.items():
            if isinstance(parsed, Mapping):
                rows.append([f"parser {name}", f"letter {_text(parsed.get('letter'))}, rule "
                                               f"{_text(parsed.get('rule'))}, correct {_text(parsed.get('correct'))}"])
    fallback = record.get("judge")
    if isinstance(fallback, Mapping) and "score" in fallback and "template_id" in fallback:
        rows.append(["MCQ judge fallback", _text(fallback.get("label") or fallback.get("raw_reply"))])
    return rows


def _text(value: Any) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def metric_values(line: Mapping[str, Any], record_key: str | None) -> list[list[str]]:
    """(metric, value) of every metric the line reports (the record metric as its score or judge result)."""
    rows = []
    for key, value in line.items():
        if key in ("doc", "doc_id", "target", "arguments", "resps", "filtered_resps", "token_counts", "doc_hash",
                   "input", "input_media", "prompt_hash", "target_hash"):
            continue
        if key == record_key:
            counts, score, _ = line_value(line, key)
            rows.append([key, _text(score) if counts and score is not None else "unscored" if counts else "—"])
        elif isinstance(value, Mapping) and set(value) <= {"score", "unscored_reason"}:
            rows.append([key, _text(value.get("score", value.get("unscored_reason")))])
        elif value is None:
            rows.append([key, "— (does not count)"])
    return rows


def verdicts(record: Mapping[str, Any]) -> list[dict[str, str]]:
    """The LLM judge's verdict per judged metric (score, scored or why not, the judge's reply as its reason)."""
    judge = record.get("judge")
    if not isinstance(judge, Mapping) or "template_id" in judge:
        return []
    found = []
    for metric, entry in judge.items():
        if not isinstance(entry, Mapping):
            continue
        reason = entry.get("raw_reply") or entry.get("detail") or ""
        found.append({"metric": str(metric), "score": _text(entry.get("score")),
                      "verdict": "scored" if entry.get("unscored_reason") is None and entry.get("scored", True)
                      else f"unscored: {entry.get('unscored_reason')}",
                      "dimensions": _text(entry.get("dimensions") or {}), "label": _text(entry.get("label")),
                      "reason": str(reason), "judge": _text(entry.get("judge_model"))})
    return found


def steps(record: Mapping[str, Any]) -> list[dict[str, str]]:
    """Agent-X reasoning steps the trace parser read from the reply (tool, input, output, thought)."""
    prediction = record.get("prediction")
    found = prediction.get("reasoning_steps") if isinstance(prediction, Mapping) else None
    if not isinstance(found, list):
        return []
    return [{"step": _text(step.get("step")), "task": _text(step.get("task")), "tool": _text(step.get("tool_used")),
             "input": _text(step.get("tool_input")), "output": _text(step.get("tool_output")),
             "thought": _text(step.get("thought"))} for step in found if isinstance(step, Mapping)]


def final_answer(record: Mapping[str, Any]) -> str:
    prediction = record.get("prediction")
    answer = prediction.get("final_answer") if isinstance(prediction, Mapping) else None
    return _text(answer) if answer else ""


def round_rows(record: Mapping[str, Any]) -> list[dict[str, str]]:
    """Each executed-tools round: the reply, the call parsed from it, the backend, status, observation and the
    name of an image the tool returned (its thumbnail, which the sample log keeps, is added by
    ``media.add_returned_images``)."""
    return [{"round": _text(entry.get("round")), "reply": _text(entry.get("reply")), "kind": _text(entry.get("kind")),
             "call": "" if entry.get("tool") is None else f"{entry.get('tool')}({_text(entry.get('arguments'))})",
             "valid": _text(entry.get("valid")), "backend": _text(entry.get("backend")),
             "status": _text(entry.get("status")), "observation": _text(entry.get("observation")),
             "image": "" if not entry.get("image") else str(entry["image"])} for entry in rounds(record)]


def detail(line: Mapping[str, Any], task: str, benchmark: Benchmark | None, label: str) -> dict[str, Any]:
    """Everything the sample's page shows that the line itself holds (media and the rendered prompt are added by
    ``viewer.media`` from the benchmark's data; permutation siblings by ``viewer.build``)."""
    record = read_record(line) or {}
    key = record_metric(line)
    result = outcome(line, benchmark)
    fields = [[name, _text(record[name])] for name in HEADER_FIELDS if name in record]
    if benchmark is not None:
        fields += [[name, _text(record[name])] for name in benchmark.breakdowns
                   if name in record and name not in HEADER_FIELDS]
    gold = record.get("answer", line.get("target"))
    return {"run": label, "task": task, "benchmark": str(record.get("benchmark", "")),
            "id": str(record.get("id", "")), "doc_id": _text(line.get("doc_id")), "fields": fields,
            "status": result.status, "why": result.why, "decided_by": result.metric, "score": _text(result.score),
            "input": question_text(line), "reply": _elided(reply_text(line)) if rounds(record) else reply_text(line),
            "extraction": extraction(record),
            "gold": _text(gold), "metrics": metric_values(line, key), "verdicts": verdicts(record),
            "steps": steps(record), "final_answer": final_answer(record), "rounds": round_rows(record),
            "errors": error_modes(record), "record": shown_record(record)}


def _elision(b64: str) -> str:
    return f"[{len(b64):,} base64 characters: the returned image's thumbnail, shown in the rounds table]"


def _elided(text: str) -> str:
    return THUMBNAIL_TEXT.sub(lambda found: f'"png_b64": "{_elision(found.group(1))}"', text)


def shown_record(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """The record as its page shows it: each round's returned-image thumbnail named, not carried (the site writes
    it as a file, ``media.add_returned_images``)."""
    found = record.get("rounds")
    if not isinstance(found, list):
        return record
    shown = []
    for entry in found:
        image = entry.get("returned_image") if isinstance(entry, Mapping) else None
        if isinstance(image, Mapping) and isinstance(image.get("png_b64"), str):
            entry = {**entry, "returned_image": {**image, "png_b64": _elision(image["png_b64"])}}
        shown.append(entry)
    return {**record, "rounds": shown}


def permutation_row(record: Mapping[str, Any], reply: str) -> dict[str, str]:
    """One order of a permuted question: the order, the letter read, and that letter mapped back to the option
    it names in the original order (``chosen`` is the original option index)."""
    chosen = record.get("chosen")
    gold = record.get("gold_original")
    return {"perm_index": _text(record.get("perm_index")), "permutation": _text(record.get("permutation")),
            "pred": _text(record.get("pred")), "answer": _text(record.get("answer")),
            "chosen_original": chr(ord("A") + chosen) if isinstance(chosen, int) else "—",
            "gold_original": chr(ord("A") + gold) if isinstance(gold, int) else "—",
            "correct": _text(record.get("correct")), "reply": reply}


def flipped(rows: Sequence[Mapping[str, Any]]) -> bool:
    """The question's chosen original option differs between its orders (one answer in every order is stable)."""
    return len({row.get("chosen") for row in rows}) > 1
