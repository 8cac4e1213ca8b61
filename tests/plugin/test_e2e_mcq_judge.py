"""End-to-end: the MCQ extraction fallback judge through the real lmms-eval CLI, against a loopback judge.

The dummy model answers with prose the rules cannot read, so every item goes to the judge. Two environment
variables point the judge at the local server; a repeated run makes zero judge requests (cache); with the server
failing a third of the items the run completes and every failure is unscored, counted and reasoned.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply

from ..conftest import run_lmms_eval

pytestmark = pytest.mark.e2e
SECRET = "sk-test-NEVER-LOG-ME-1234567890"
ARGS = ["--model", "dummy", "--model_args", "response=Hmm that is hard to say.", "--tasks", "robovista_cot"]


def _env(server: ScriptedJudgeServer, cache: Path) -> dict[str, str]:
    return {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_MCQ_JUDGE": "1",
            "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url, "LMMS_AGENTIC_JUDGE_MODEL": "judge-test",
            "LMMS_AGENTIC_JUDGE_API_KEY": SECRET, "LMMS_AGENTIC_JUDGE_CACHE": str(cache),
            "LMMS_AGENTIC_JUDGE_MAX_RETRIES": "1", "LMMS_AGENTIC_JUDGE_BACKOFF": "0.01"}


def _no_secret_anywhere(run_output: Path, log: str) -> None:
    assert SECRET not in log
    for path in run_output.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="ignore"), path


def test_judge_fallback_is_cached_and_logged(tmp_path: Path) -> None:
    with ScriptedJudgeServer(lambda call: ScriptedReply("B")) as server:
        first = run_lmms_eval(ARGS, tmp_path / "first", env=_env(server, tmp_path / "cache"))
        first.assert_ok()
        sent = server.request_count
        second = run_lmms_eval(ARGS, tmp_path / "second", env=_env(server, tmp_path / "cache"))
        second.assert_ok()
        assert server.request_count == sent, "the rerun must be served from the judge cache"
    samples = first.records("robovista_cot")
    # identical asks (same question, options and response) are sent once and served from the cache after
    assert sent == len({s["judge"]["request_key"] for s in samples}) >= 15
    assert {(s["extraction_path"], s["pred"], s["pred_parity"]) for s in samples} == {("judge", "B", None)}
    assert samples[0]["judge"]["judge_model"] and samples[0]["judge"]["template_id"] == "mcq_fallback"
    gold_b = 100.0 * sum(s["answer"] == "B" for s in samples) / len(samples)
    assert first.results["results"]["robovista_cot"]["strict_acc,none"] == pytest.approx(gold_b)
    assert first.results["results"]["robovista_cot"]["parity_acc,none"] == 0.0  # parity never uses the judge
    _no_secret_anywhere(tmp_path, first.log + second.log)


def test_a_third_of_judge_calls_failing_leaves_them_unscored_and_counted(tmp_path: Path) -> None:
    def flaky(call: ScriptedCall) -> ScriptedReply:
        fails = int(hashlib.sha256(call.prompt.encode()).hexdigest(), 16) % 3 == 0
        return ScriptedReply(status=500) if fails else ScriptedReply("B")

    with ScriptedJudgeServer(flaky) as server:
        run = run_lmms_eval(ARGS, tmp_path / "out", env=_env(server, tmp_path / "cache"))
    run.assert_ok()
    samples = run.records("robovista_cot")
    failed = [s for s in samples if s["no_answer_reason"] == "transport_error"]
    assert 0 < len(failed) < len(samples)
    assert all(s["pred"] is None and s["extraction_path"] == "none" for s in failed)
    assert all(s["pred"] == "B" for s in samples if s not in failed)
    rate = run.results["results"]["robovista_cot"]["no_answer_rate,none"]
    assert rate == pytest.approx(100.0 * len(failed) / len(samples))
