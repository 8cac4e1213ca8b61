"""The MCQ extraction fallback judge and the judge-agreement utility (API and CLI)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from lmms_agentic.judges import JudgeClient
from lmms_agentic.judges.agreement import compare_rankings, compare_runs, main, scores_from_samples
from lmms_agentic.judges.mcq_fallback import (
    extract_many_with_fallback,
    extract_with_fallback,
    mcq_judge_enabled,
    mcq_template,
)
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply, fixed

Serve = Callable[..., ScriptedJudgeServer]
Make = Callable[..., JudgeClient]
OPTIONS = ["Move left", "Move right", "Lift the cup", "Release"]
VAGUE = "Moving towards the cup seems best, then lifting it gently."


def test_rules_first_no_judge_call(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("D"))
    got = extract_with_fallback("The answer is B.", OPTIONS, enabled=True, client=make_client(server))
    assert (got.letter, got.path, got.rule, got.judge) == ("B", "rules", "declaration", None)
    assert server.request_count == 0


def test_off_by_default(monkeypatch: pytest.MonkeyPatch, serve: Serve, make_client: Make) -> None:
    monkeypatch.delenv("LMMS_AGENTIC_MCQ_JUDGE", raising=False)
    server = serve(fixed("C"))
    got = extract_with_fallback(VAGUE, OPTIONS, client=make_client(server))
    assert (got.letter, got.path, got.reason, got.rules_reason) == (None, "none", "no_match", "no_match")
    assert server.request_count == 0 and not mcq_judge_enabled()
    monkeypatch.setenv("LMMS_AGENTIC_MCQ_JUDGE", "1")
    assert mcq_judge_enabled()
    assert extract_with_fallback(VAGUE, OPTIONS, client=make_client(server)).letter == "C"


@pytest.mark.parametrize(("reply", "letter", "path", "reason"), [
    ("C", "C", "judge", None),
    ("**(c)**", "C", "judge", None),
    ("NONE", None, "none", "judge_none"),
    ("E", None, "none", "parse_failure"),
    ("It picked C, I think.", None, "none", "parse_failure"),
    ("I'm sorry, but I can't help with that.", None, "none", "refusal"),
])
def test_judge_path(serve: Serve, make_client: Make, reply: str, letter: str | None, path: str,
                    reason: str | None) -> None:
    server = serve(fixed(reply))
    got = extract_with_fallback(VAGUE, OPTIONS, question="What next?", item_id="q1", enabled=True,
                                client=make_client(server))
    assert (got.letter, got.path, got.reason) == (letter, path, reason)
    assert got.rules_reason == "no_match" and got.judge is not None and got.judge.item_id == "q1"
    logged = got.as_dict()
    assert json.loads(json.dumps(logged)) == logged and logged["judge"]["template_id"] == "mcq_fallback"
    user = server.calls[0].body["messages"][1]["content"]
    assert "C. Lift the cup" in user and "What next?" in user and "<<<DATA response" in user


def test_transport_failure_is_recorded(serve: Serve, make_client: Make) -> None:
    server = serve(lambda call: ScriptedReply(status=503))
    got = extract_with_fallback(VAGUE, OPTIONS, enabled=True, client=make_client(server, max_retries=1))
    assert (got.path, got.reason) == ("none", "transport_error") and server.request_count == 2


def test_nothing_to_judge(serve: Serve, make_client: Make) -> None:
    server = serve(fixed("A"))
    client = make_client(server)
    assert extract_with_fallback("", OPTIONS, enabled=True, client=client).reason == "empty"
    failed = extract_with_fallback("[LMMS_EVAL_REQUEST_FAILED after 5 retries]", 4, enabled=True, client=client)
    assert failed.reason == "request_failed" and server.request_count == 0


def test_batch_sends_only_the_misses(serve: Serve, make_client: Make) -> None:
    def script(call: ScriptedCall) -> ScriptedReply:
        return ScriptedReply("B" if "second" in call.prompt else "NONE")

    server = serve(script)
    got = extract_many_with_fallback(
        ["Answer: A", "I'd say the second one, moving right.", "hmm", None], [OPTIONS, OPTIONS, 4, 4],
        item_ids=["a", "b", "c", "d"], enabled=True, client=make_client(server))
    assert [(g.letter, g.path) for g in got] == [("A", "rules"), ("B", "judge"), (None, "none"), (None, "none")]
    assert [g.reason for g in got] == [None, None, "judge_none", "empty"] and server.request_count == 2
    assert mcq_template("ABCD").parser.spec == "choice:ABCD|NONE"
    with pytest.raises(ValueError):
        extract_many_with_fallback(["A"], [4, 4])


def _payload(item: str, score: float | None, reason: str | None = None, **dims: float) -> dict[str, object]:
    return {"item_id": item, "score": score, "unscored_reason": reason, "dimensions": dims}


RUN_A = [
    {"doc_id": 0, "goal": _payload("i1", 1.0, grounding=1.0), "toolset_f1": 0.5},
    {"doc_id": 1, "goal": _payload("i2", 0.0, grounding=0.5), "toolset_f1": 1.0},
    {"doc_id": 2, "goal": _payload("i3", 0.5, grounding=0.0), "toolset_f1": 0.0},
    {"doc_id": 3, "goal": _payload("i4", None, "parse_failure")},
    {"doc_id": 4, "goal": _payload("i5", 1.0)},
]
RUN_B = [
    {"doc_id": 1, "goal": _payload("i2", 0.25, grounding=0.5), "toolset_f1": 1.0},
    {"doc_id": 0, "goal": _payload("i1", 1.0, grounding=1.0), "toolset_f1": 0.5},
    {"doc_id": 2, "goal": _payload("i3", 0.5, grounding=0.25), "toolset_f1": 0.0},
    {"doc_id": 3, "goal": _payload("i4", 1.0)},
    {"doc_id": 5, "goal": _payload("i6", 0.0)},
]


def test_scores_from_samples() -> None:
    scores = scores_from_samples(RUN_A)
    assert scores["goal"] == {"i1": 1.0, "i2": 0.0, "i3": 0.5, "i4": None, "i5": 1.0}
    assert scores["goal/grounding"]["i2"] == 0.5 and scores["toolset_f1"] == {"0": 0.5, "1": 1.0, "2": 0.0}
    assert "doc_id" not in scores
    assert scores_from_samples({"x": {"m": 0.5}}) == {"m": {"x": 0.5}}


def test_compare_runs() -> None:
    agreement = compare_runs(RUN_A, RUN_B)
    goal = agreement["goal"]
    assert (goal.n_pairs, goal.only_in_a, goal.only_in_b, goal.unscored_in_a, goal.unscored_in_b) == (3, 1, 1, 1, 0)
    assert goal.exact_match == pytest.approx(2 / 3) and goal.spearman_rho == pytest.approx(1.0)
    assert goal.mean_abs_diff == pytest.approx(0.25 / 3)
    assert agreement["toolset_f1"].exact_match == 1.0
    assert agreement["goal/grounding"].n_pairs == 3
    lonely = compare_runs([RUN_A[0]], [RUN_B[1]])["goal"]
    assert lonely.n_pairs == 1 and math.isnan(lonely.spearman_rho)


def test_compare_rankings() -> None:
    same = compare_rankings({"m1": 0.8, "m2": 0.6, "m3": 0.4}, {"m1": 0.7, "m2": 0.5, "m3": 0.1, "m4": 0.9})
    assert not same.changed and same.order_a == ["m1", "m2", "m3"] and same.models_only_in_one == ["m4"]
    assert same.kendall_tau == pytest.approx(1.0)
    flip = compare_rankings({"m1": 0.8, "m2": 0.6, "m3": 0.4}, {"m1": 0.5, "m2": 0.6, "m3": 0.4})
    assert flip.changed and flip.swapped_pairs == [("m1", "m2")] and flip.order_b == ["m2", "m1", "m3"]


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "20250101_samples_t.jsonl", tmp_path / "20250102_samples_t.jsonl"
    a.write_text("\n".join(json.dumps(r) for r in RUN_A) + "\n")
    b.write_text("\n".join(json.dumps(r) for r in RUN_B) + "\n")
    ra, rb = tmp_path / "a.json", tmp_path / "b.json"
    ra.write_text(json.dumps({"m1": 0.8, "m2": 0.6}))
    rb.write_text(json.dumps({"m1": 0.5, "m2": 0.6}))
    assert main([str(a), str(b), "--ranking", str(ra), str(rb)]) == 0
    out = capsys.readouterr().out
    assert "goal " in out and "ranking changed: True" in out
    assert main([str(a), str(b), "--json", "--metric", "goal"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["metrics"]) == ["goal"] and report["metrics"]["goal"]["n_pairs"] == 3
    with pytest.raises(SystemExit):
        main([str(a)])


def test_cli_module_entry(tmp_path: Path) -> None:
    import subprocess
    import sys

    a = tmp_path / "a.jsonl"
    a.write_text("\n".join(json.dumps(r) for r in RUN_A))
    done = subprocess.run([sys.executable, "-m", "lmms_agentic.judges.agreement", str(a), str(a), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["metrics"]["goal"]["exact_match"] == 1.0
