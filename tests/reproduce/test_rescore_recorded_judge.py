"""A plain `lmms-eval` run records its judge in its results (endpoint, model, decoding; never the key), and
`python -m lmms_agentic rescore` reuses it with no judge variable set: the judged metrics are scored again by the
same endpoint, not turned into NaN and not stopped for a missing judge."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply
from tests.conftest import run_lmms_eval

MODEL = "recorded-judge-2025-02-02"
KEY = "sk-judge-key-never-written-0042"
JUDGED = ("ground_s", "tool_p", "goal_acc")


def _score_by_prompt(call: ScriptedCall) -> ScriptedReply:
    """A verdict that depends only on the prompt, so the same question gets the same score on the replay."""
    score = int(hashlib.sha256(call.prompt.encode()).hexdigest(), 16) % 11 / 10
    return ScriptedReply(json.dumps({"Score": score, "Justification": "scripted"}))


def _judged(results_file: Path) -> dict[str, float]:
    row = json.loads(results_file.read_text(encoding="utf-8"))["results"]["agentx"]
    return {k: v for k, v in row.items() if k.split(",")[0] in JUDGED and "stderr" not in k}


@pytest.mark.e2e
def test_a_plain_lmms_eval_run_records_its_judge_and_rescore_reuses_it(tmp_path: Path) -> None:
    user_env = {k: v for k, v in os.environ.items() if not k.startswith(("LMMS_AGENTIC_JUDGE_", "LMMS_AGENTIC_DATA"))}
    with ScriptedJudgeServer(_score_by_prompt, model=MODEL) as judge:
        base_url = judge.base_url
        judge_env = {"LMMS_AGENTIC_JUDGE_BASE_URL": base_url, "LMMS_AGENTIC_JUDGE_MODEL": MODEL,
                     "LMMS_AGENTIC_JUDGE_API_KEY": KEY, "LMMS_AGENTIC_JUDGE_CACHE": "off"}
        with pytest.MonkeyPatch.context() as patch:  # run_lmms_eval starts from os.environ
            for name in set(os.environ) - set(user_env):
                patch.delenv(name)
            run = run_lmms_eval(["--model", "agentic_scripted", "--tasks", "agentx"], tmp_path / "run",
                                env={"LMMS_AGENTIC_DATA": "mini", **judge_env})
        run.assert_ok()
        sent_by_run = judge.request_count
        assert run.results_file is not None and sent_by_run > 0
        assert run.results["lmms_agentic"]["judge"] == {
            "preset": None, "base_url": base_url, "model": MODEL, "decoding": "pinned", "temperature": 0.0,
            "api_version": None}
        assert KEY not in run.results_file.read_text(encoding="utf-8")

        # the user's shell later: no judge variable, no data variable, no cache to answer from
        done = subprocess.run([sys.executable, "-m", "lmms_agentic", "rescore", str(tmp_path / "run"), "--output",
                               str(tmp_path / "again")],
                              env={**user_env, "LMMS_AGENTIC_JUDGE_CACHE": "off", "HF_HUB_OFFLINE": "1",
                                   "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
                              capture_output=True, text=True, timeout=900, check=False)
        sent_by_rescore = judge.request_count - sent_by_run
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert f"judge: {MODEL} at {base_url} (the run's, from its results)" in out
    assert sent_by_rescore > 0
    summary = [line for line in out.splitlines() if line.startswith(f"judge {MODEL}: ")]
    assert summary and re.search(r": [1-9][0-9]* verdicts, 0 cached, [1-9][0-9]* sent", summary[0]), out[-2000:]
    before = _judged(run.results_file)
    (after_file,) = sorted((tmp_path / "again").rglob("*_results.json"))
    after = _judged(after_file)
    assert before and all(not math.isnan(v) for v in after.values())
    assert {k: v for k, v in after.items() if k in before} == before
