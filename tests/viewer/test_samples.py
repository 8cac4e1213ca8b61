"""What the viewer reads from one logged line: status and why, error modes, flags, the page's tables, permutation
orders mapped back, and the disagreements of two runs."""

from __future__ import annotations

from typing import Any

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.viewer import build, samples

AGENTVQA = benchmarks.get("agentvqa")
AGENTX = benchmarks.get("agentx")


def mcq_line(pred: str | None, answer: str = "B", reason: str | None = None, **extra: Any) -> dict[str, Any]:
    record = {"benchmark": "agentvqa", "id": "q1", "domain": "robotics", "source": "erqa", "answer": answer,
              "pred": pred, "correct": pred == answer, "rule": "bare_label" if pred else "none",
              "no_answer_reason": reason, "extraction_path": "rules", "judge": None, "request_failed": False,
              "loop": {"loop": False, "truncated": False}, **extra}
    if "group_id" not in extra:
        record["score"] = 100.0 if pred == answer else 0.0
    return {"doc_id": 0, "target": answer, "filtered_resps": pred or "no idea", "accuracy": record,
            "no_answer_rate": {"score": 100.0 if pred is None else 0.0}, "src_erqa": {"score": record.get("score")},
            "src_roborefit": None, "input": "Where is the cup?\nA. left\nB. right"}


def judged_line(scores: dict[str, float | None], reason: str = "not_configured") -> dict[str, Any]:
    judge = {metric: {"score": score, "scored": score is not None,
                      "unscored_reason": None if score is not None else reason, "dimensions": {"Score": score},
                      "raw_reply": f"{{'Score': {score}}}" if score is not None else None,
                      "detail": None if score is not None else "no judge configured", "judge_model": "j"}
             for metric, score in scores.items()}
    record = {"benchmark": "agentx", "id": "7", "query_type": "objective", "judge": judge, "parse_failure": None,
              "errors": {"invalid_json_format": False, "step_keyword_mismatch": True}, "loop": {"loop": True},
              "prediction": {"reasoning_steps": [{"step": 1, "task": "read", "tool_used": "OCR",
                                                  "tool_input": {"image": "image_1"}, "tool_output": "x=2",
                                                  "thought": "look"}],
                             "final_answer": {"value": "46", "justification": "sum"}}}
    first, *rest = scores
    line: dict[str, Any] = {"doc_id": 3, "target": "46", "filtered_resps": "{}", first: record}
    for metric in rest:
        line[metric] = {"score": scores[metric]} if scores[metric] is not None else {"unscored_reason": reason}
    return line


@pytest.mark.parametrize(("line", "status", "why"), [
    (mcq_line("B"), "correct", ""),
    (mcq_line("A"), "wrong", ""),
    (mcq_line(None, reason="ambiguous"), "wrong", "no answer (ambiguous)"),
    (mcq_line("A", request_failed=True), "wrong", "request failed"),
])
def test_mcq_status_and_why(line: dict[str, Any], status: str, why: str) -> None:
    found = samples.outcome(line, AGENTVQA)
    assert (found.status, found.why, found.metric) == (status, why, "accuracy")


def test_a_permutation_row_without_a_score_counts_its_correct() -> None:
    line = mcq_line("B", group_id="q1", perm_index=2, permutation=[1, 0], chosen=0, gold_original=0)
    line["perm_mean_acc"] = line.pop("accuracy")
    found = samples.outcome(line, benchmarks.get("robovista"))
    assert (found.status, found.score) == ("correct", 100.0)


def test_judged_metrics_give_partial_or_unscored_with_the_judges_reason() -> None:
    scored = samples.outcome(judged_line({"ground_s": 0.4, "goal_acc": 0.5}), AGENTX)
    assert (scored.status, scored.score, scored.metric) == ("partial", 0.5, "goal_acc")
    unscored = samples.outcome(judged_line({"ground_s": None, "goal_acc": None}), AGENTX)
    assert unscored.status == "unscored" and unscored.why == "not_configured"
    full = samples.outcome(judged_line({"ground_s": None, "goal_acc": 1.0}), AGENTX)
    assert full.status == "correct"


def test_error_modes_and_flags() -> None:
    line = judged_line({"ground_s": 0.4})
    line["ground_s"]["rounds"] = [
        {"round": 1, "kind": "call", "tool": "Calculator", "arguments": {"expression": "1/0"}, "status": "error",
         "backend": "local", "observation": "Error: ZeroDivisionError", "image": None, "reply": "{...}"},
        {"round": 2, "kind": "final", "tool": None, "status": None, "observation": "(final answer received)"}]
    line["ground_s"]["execution"] = {"stopped": "step_limit"}
    row = samples.summary(line, "agentx_tools_text_answer", AGENTX)
    assert row["errors"] == ["step_keyword_mismatch", "stopped: step_limit"]
    assert row["loop"] and row["tool_error"] and not row["flipped"]
    no_answer = samples.summary(mcq_line(None, reason="no_match"), "agentvqa_robotics", AGENTVQA)
    assert no_answer["errors"] == ["no answer: no_match"] and not no_answer["tool_error"]
    assert "where is the cup" in no_answer["text"] and "q1" in no_answer["text"]


def test_a_successful_episode_is_no_tool_error() -> None:
    record = {"rounds": [{"kind": "call", "status": "ok"}, {"kind": "final", "status": None}]}
    assert not samples.tool_error(record)


def test_page_tables() -> None:
    page = samples.detail(judged_line({"ground_s": 0.4, "tool_p": None}), "agentx_generative", AGENTX, "model")
    assert [v["metric"] for v in page["verdicts"]] == ["ground_s", "tool_p"]
    assert page["verdicts"][0]["reason"] == "{'Score': 0.4}" and page["verdicts"][1]["verdict"].startswith(
        "unscored: not_configured")
    assert page["steps"] == [{"step": "1", "task": "read", "tool": "OCR", "input": '{"image": "image_1"}',
                              "output": "x=2", "thought": "look"}]
    assert ["tool_p", "not_configured"] in page["metrics"] and ["ground_s", "0.4"] in page["metrics"]
    mcq = samples.detail(mcq_line(None, reason="ambiguous"), "agentvqa_robotics", AGENTVQA, "model")
    assert ["rule", "none"] in mcq["extraction"] and ["no_answer_reason", "ambiguous"] in mcq["extraction"]
    assert mcq["gold"] == "B" and mcq["reply"] == "no idea" and ["src_roborefit", "— (does not count)"] in \
        mcq["metrics"]


def test_the_reply_prefers_the_unfiltered_one() -> None:
    assert samples.reply_text({"resps": [["<think>x</think> B"]], "filtered_resps": ["B"]}) == "<think>x</think> B"
    assert samples.reply_text({"filtered_resps": ["B"]}) == "B"


def test_a_permutation_order_maps_the_chosen_letter_back() -> None:
    record = {"perm_index": 1, "permutation": [2, 0, 1], "pred": "A", "answer": "B", "chosen": 2,
              "gold_original": 0, "correct": False}
    row = samples.permutation_row(record, "A")
    assert (row["chosen_original"], row["gold_original"]) == ("C", "A")
    assert samples.flipped([{"chosen": 2}, {"chosen": 0}]) and not samples.flipped([{"chosen": 1}, {"chosen": 1}])
    assert samples.permutation_row({**record, "chosen": None}, "")["chosen_original"] == "—"


def _viewed(index: int, rows: list[tuple[str, str, str]]) -> build.ViewedRun:
    viewed = build.ViewedRun(index, f"run {index}", run=None)  # type: ignore[arg-type]
    for n, (item, status, pred) in enumerate(rows):
        viewed.samples.append(build.Sample(f"{index}-{n}", {"task": "t", "id": item, "domain": "d",
                                                            "status": status, "pred": pred}, {}, {}))
    return viewed


def test_two_runs_disagree_where_status_or_answer_differ() -> None:
    a = _viewed(0, [("1", "correct", "A"), ("2", "wrong", "B"), ("3", "wrong", "C"), ("4", "wrong", "D")])
    b = _viewed(1, [("1", "correct", "A"), ("2", "correct", "A"), ("3", "wrong", "D"), ("5", "wrong", "D")])
    found = build.disagreements(a, b)
    assert [d["id"] for d in found] == ["2", "3"]
    assert found[0]["a"] == {"key": "0-1", "status": "wrong", "pred": "B"} and found[0]["b"]["key"] == "1-1"
    assert build.shared_items(a, b) == 3


def test_failed_metrics_are_those_below_full_marks_or_unscored() -> None:
    """The list's "failed metric" filter (the overview's value links to it): the score of every metric the line
    counts and did not get full marks on, None when unscored; a metric at full marks is left out."""
    line = judged_line({"ground_s": 1.0, "goal_acc": 0.5, "tool_p": None, "fact_acc": 0.0})
    assert samples.failed_metrics(line, AGENTX) == {"goal_acc": 0.5, "tool_p": None, "fact_acc": 0.0}
    assert samples.summary(line, "agentx_text_answer", AGENTX)["fails"] == samples.failed_metrics(line, AGENTX)
    assert samples.failed_metrics(mcq_line("A"), AGENTVQA)["accuracy"] == 0.0
    assert "accuracy" not in samples.failed_metrics(mcq_line("B"), AGENTVQA)
    wrong_order = mcq_line("A", group_id="q1", perm_index=1, permutation=[1, 0], chosen=1, gold_original=0)
    assert samples.failed_metrics(wrong_order, AGENTVQA)["accuracy"] == 0.0
