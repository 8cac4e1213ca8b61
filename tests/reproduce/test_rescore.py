"""`rescore`: replaying a run's logged replies reproduces its metrics exactly, and turning on the MCQ judge
fallback changes only the items the rules could not read (and the metrics that count them)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic import cli
from lmms_agentic.report.runs import Run, load_run
from lmms_agentic.reproduce.rescore import RescoreError, changes, logged_replies, rescore
from tests.conftest import run_lmms_eval
from tests.reproduce.conftest import write_run

TASKS = "robovista,robovista_cot"


def _replies() -> dict[str, str]:
    """Item id -> reply: a letter, a sentence with a declared letter, or text no rule can read."""
    from lmms_agentic.tasks.robovista import hooks

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        ids = sorted(str(doc["id"]) for doc in hooks.all_docs())
    styles = ("B", "Looking at the gripper, the answer is (C).", "I would pick the second block from the left.")
    return {item: styles[k % 3] for k, item in enumerate(ids)}


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    folder = tmp_path_factory.mktemp("original")
    replies = folder / "replies.json"
    replies.write_text(json.dumps(_replies()))
    done = run_lmms_eval(["--model", "agentic_scripted", "--model_args", f"policy=replay,replay={replies}",
                          "--tasks", TASKS], folder / "run", env={"LMMS_AGENTIC_DATA": "mini"})
    done.assert_ok()
    yield load_run(folder / "run")


def _records(run: Run) -> dict[tuple[str, str], dict[str, Any]]:
    from lmms_agentic.adapters.samples import read_record

    found = {}
    for task in run.results["results"]:
        for line in run.lines(task):
            record = read_record(line)
            if record is not None:
                found[(task, str(record["id"]))] = record
    return found


@pytest.mark.e2e
def test_replay_reproduces_every_metric_and_record(original: Run, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    monkeypatch.delenv("LMMS_AGENTIC_MCQ_JUDGE", raising=False)
    rescored, moved = rescore(original.path, tmp_path / "again")
    assert moved == []
    assert _records(rescored) == _records(original)
    assert rescored.config["model"] == "agentic_scripted"  # the original model, for reports
    assert "ReplayReplies" in rescored.config["model_backend"]
    assert rescored.results["lmms_agentic_rescore"]["replies"] == len(logged_replies(original))


@pytest.mark.e2e
def test_judge_fallback_changes_only_unread_items(original: Run, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from lmms_agentic.judges.client import reset_default_client
    from lmms_agentic.judges.testing import ScriptedJudgeServer, fixed

    with ScriptedJudgeServer(fixed("C")) as server:
        for key, value in {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_MCQ_JUDGE": "1",
                           "LMMS_AGENTIC_JUDGE_CACHE": "off", "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url,
                           "LMMS_AGENTIC_JUDGE_MODEL": "loopback-judge"}.items():
            monkeypatch.setenv(key, value)
        reset_default_client()
        try:
            rescored, moved = rescore(original.path, tmp_path / "judged")
        finally:
            reset_default_client()
        judged_calls = server.request_count
    before, after = _records(original), _records(rescored)
    assert before.keys() == after.keys()
    unread = {key for key, record in before.items() if record["pred"] is None}
    assert unread and judged_calls == len(unread)
    for key, record in after.items():
        if key in unread:
            assert (record["pred"], record["extraction_path"]) == ("C", "judge")
        else:
            assert record == before[key]
        assert record["correct_parity"] == before[key]["correct_parity"]  # the runner's parser has no judge
    metrics = {metric for _, metric, _, _ in moved}
    assert metrics and metrics <= {"strict_acc", "no_answer_rate"}, moved
    assert all(not math.isclose(old, new) for _, _, old, new in moved)


def test_replies_are_keyed_by_task_and_item(tmp_path: Path) -> None:
    write_run(tmp_path / "a", lambda b, d, i: i % 2 == 0, items=3)
    run = load_run(tmp_path / "a")
    replies = logged_replies(run)
    assert replies[("robovista_domestic", "rv_domestic_0")] == "B"
    assert replies[("robovista_domestic", "rv_domestic_1")] == "C"
    assert len(replies) == 2 * 3 * 3
    assert changes({"results": {"t": {"m,none": 1.0, "n,none": math.nan}}},
                   {"results": {"t": {"m,none": 2.0, "n,none": math.nan, "o,none": 0.0}}}) == [
        ("t", "m", 1.0, 2.0), ("t", "o", None, 0.0)]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x_results.json").write_text(json.dumps({"results": {"t": {}}}))
    with pytest.raises(RescoreError, match="no sample line carries a record"):
        logged_replies(load_run(tmp_path / "b"))
    assert cli.main(["rescore", str(tmp_path / "nothing")]) == 1
