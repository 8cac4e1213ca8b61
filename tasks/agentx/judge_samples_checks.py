"""Tests of `judge_samples.py` (Agent-X's judged scoring of logged samples), run here and, from the `# export:` line
on, appended to the exported folder's own test: a loopback fake judge (an OpenAI-compatible `/chat/completions`
answering by the metric's system prompt) and a tiny run's logged samples built from three release records."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def judge_samples() -> Any:
    return importlib.import_module("lmms_agentic.tasks.agentx.judge_samples")


# export:
JUDGE_TOOL = {"OCR": {"name": "OCR", "description": "Reads text.", "inputs": [], "outputs": []}}
JUDGE_STEP = {"step": 1, "task": "Read the sign", "tool": "OCR", "input": "image", "output": "42", "thought": "ok"}
JUDGE_RELEASE = [  # a text-answer item, a generative item (its id is on the release's list), one the judges cannot take
    {"id": "0", "query": "What number is on the sign?", "file_path": "a.jpg", "query_type": "objective",
     "tool_metadata": JUDGE_TOOL, "reasoning_steps": [JUDGE_STEP], "final_answer": {"value": "42"}},
    {"id": "1", "query": "Draw the sign.", "file_path": "b.jpg", "query_type": "generative",
     "tool_metadata": JUDGE_TOOL, "reasoning_steps": [JUDGE_STEP], "final_answer": "an image"},
    {"id": "2", "query": "What colour is it?", "file_path": "c.jpg", "tool_metadata": JUDGE_TOOL,
     "reasoning_steps": [JUDGE_STEP], "final_answer": "red"},
]
JUDGE_KEY = "sk-test-never-printed"
JUDGE_SCORED = "{'Score': '0.5', 'Justification': 'half of it'}"


def judge_environment(url: str) -> dict[str, str]:
    return {"AGENTX_JUDGE_BASE_URL": url, "AGENTX_JUDGE_MODEL": "gpt-4o", "AGENTX_JUDGE_API_KEY": JUDGE_KEY}


@pytest.fixture
def fake_judge(judge_samples: Any) -> Iterator[dict[str, Any]]:
    """A loopback chat endpoint answering (HTTP status, content): the next of `queue`, else `replies[code key]`,
    else 200 with `JUDGE_SCORED`."""
    import http.server
    import threading

    by_system = {text: key for key, text in judge_samples.judging.SYSTEM_PROMPTS.items()}
    state: dict[str, Any] = {"replies": {}, "queue": [], "seen": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            key = by_system.get(body["messages"][0]["content"], "")
            state["seen"].append({"key": key, "model": body["model"], "auth": self.headers.get("Authorization")})
            queued = state["queue"].pop(0) if state["queue"] else None
            status, content = queued or state["replies"].get(key, (200, JUDGE_SCORED))
            data = json.dumps({"choices": [{"message": {"content": content}}]}).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def logged_run(judge_samples: Any, folder: Path, with_docs: bool) -> tuple[Path, Path]:
    """(the samples file of a run whose replies are the ground-truth traces, the release's data.json)."""
    data = folder / "data.json"
    data.write_text(json.dumps({row["id"]: [{k: v for k, v in row.items() if k != "id"}] for row in JUDGE_RELEASE}))
    lines = []
    for index, doc in enumerate(judge_samples.task.documents(JUDGE_RELEASE)):
        trace = {"reasoning_steps": json.loads(doc["gt_steps_json"]), "final_answer": doc["gt_final_answer_json"]}
        record = judge_samples.task.score(doc, json.dumps(trace))
        sample = {"doc_id": index, "toolset_f1_prog": record, "format_error_rate": {"score": 0.0}}
        lines.append(json.dumps({**sample, "doc": doc} if with_docs else sample))
    samples = folder / "samples_agentx.jsonl"
    samples.write_text("\n".join(lines) + "\n")
    return samples, data


def test_judge_samples_scores_what_the_judge_scored_and_says_why_the_rest_is_not(
        judge_samples: Any, fake_judge: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_judge["replies"] = {"grounding_accuracy": (200, "{'Score': '1', 'Justification': 'all'}"),
                             "goal_accuray": (400, "bad request"), "tool_accuray": (200, "Looks fine to me.")}
    samples, data = logged_run(judge_samples, tmp_path, with_docs=False)
    out = tmp_path / "judged.json"
    code = judge_samples.main([str(samples), "--data", str(data), "--output", str(out), "--retries", "0"],
                              judge_environment(fake_judge["url"]))
    result, printed = json.loads(out.read_text()), capsys.readouterr()
    assert code == 0 and result["items"] == 3
    assert len(fake_judge["seen"]) == 9 + 8, "nine calls for the text item, no Goal call for the generative one"
    assert {(s["model"], s["auth"]) for s in fake_judge["seen"]} == {("gpt-4o", f"Bearer {JUDGE_KEY}")}
    assert result["metrics"]["ground_s"] == 1.0 and result["metrics"]["tool_p"] == 0.5
    assert result["coverage"]["ground_s"] == pytest.approx(2 / 3), "the third item's GT cannot be judged"
    for unscored in ("goal_acc", "tool_acc", "goal_imggen"):  # a failed call is no 0
        assert result["metrics"][unscored] is None, unscored
    assert result["coverage"]["goal_acc"] == 0.0 and result["coverage"]["goal_imggen"] == pytest.approx(2 / 3)
    warnings = [line for line in printed.err.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "goal_acc 2/3 (judge_error: 1, gt_not_judgeable: 1)" in warnings[0]
    assert "tool_acc 3/3 (unparseable_reply: 2, gt_not_judgeable: 1)" in warnings[0] and "Ground_s" in printed.out
    assert JUDGE_KEY not in printed.out + printed.err + out.read_text()


def test_judge_samples_reads_the_logged_documents_without_data(
        judge_samples: Any, fake_judge: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    samples, _ = logged_run(judge_samples, tmp_path, with_docs=True)
    (tmp_path / "bare").mkdir()
    bare, _ = logged_run(judge_samples, tmp_path / "bare", with_docs=False)
    out = tmp_path / "judged.json"
    assert judge_samples.main([str(samples), "--output", str(out)], judge_environment(fake_judge["url"])) == 0
    assert json.loads(out.read_text())["metrics"]["sem_acc"] == 0.5
    assert judge_samples.main([str(bare), "--output", str(out)], judge_environment(fake_judge["url"])) == 0
    result = json.loads(out.read_text())
    assert result["metrics"]["sem_acc"] is None and "no_ground_truth: 3" in result["unscored"]


@pytest.mark.parametrize("environment", [{}, {"OPENAI_API_KEY": JUDGE_KEY}, {"AGENTX_JUDGE_API_KEY": JUDGE_KEY}])
def test_judge_samples_needs_its_own_endpoint_and_model(judge_samples: Any, tmp_path: Path, environment: dict[str, str],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    samples, data = logged_run(judge_samples, tmp_path, with_docs=False)
    assert judge_samples.main([str(samples), "--data", str(data)], environment) == 2
    printed = capsys.readouterr()
    assert "AGENTX_JUDGE_BASE_URL" in printed.err and JUDGE_KEY not in printed.out + printed.err


def test_judge_samples_stops_calling_a_judge_that_keeps_failing(
        judge_samples: Any, fake_judge: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake_judge["replies"] = {key: (503, "") for key in judge_samples.judging.SYSTEM_PROMPTS}
    samples, data = logged_run(judge_samples, tmp_path, with_docs=False)
    out = tmp_path / "judged.json"
    args = [str(samples), "--data", str(data), "--output", str(out), "--retries", "0", "--workers", "1"]
    assert judge_samples.main(args, judge_environment(fake_judge["url"])) == 0
    result = json.loads(out.read_text())
    assert len(fake_judge["seen"]) == judge_samples.BREAKER
    assert all(value is None for value in result["metrics"].values()) and "judge_unavailable" in result["unscored"]


def test_judge_samples_retries_a_busy_judge(judge_samples: Any, fake_judge: dict[str, Any]) -> None:
    fake_judge["queue"] = [(503, ""), (200, JUDGE_SCORED)]
    client = judge_samples.ChatJudge(fake_judge["url"], "m", retries=1, backoff=0.0)
    assert client.ask(judge_samples.judging.SYSTEM_PROMPTS["goal_accuray"], "user") == JUDGE_SCORED
    assert len(fake_judge["seen"]) == 2


@pytest.mark.parametrize(("reply", "score"), [
    ("{'Score': '0.75', 'Justification': 'most'}", 0.75), ('{"Score": 1, "Justification": "Score: 1"}', 1.0),
    ("Score: .5", 0.5), ("{'Score': '1.5'}", None), ("{'Score': '0'} or {'Score': '1'}", None), ("no score", None),
])
def test_judge_samples_reads_one_score_in_range(judge_samples: Any, reply: str, score: float | None) -> None:
    assert judge_samples.read_score(reply) == score
