"""Every metric of every plugin task on the mini splits, pinned: a refactor of the cores or the glue changes none.

Two real lmms-eval CLI runs: the MCQ benchmarks and the one-shot Agent-X tasks answered by `agentic_scripted`'s
prompt hash (letters A-E; Agent-X then gets unparsable replies), and the one-shot Agent-X tasks replaying their gold
traces (one reply left empty) under a loopback judge whose score is picked by a hash of its prompt (0, 0.4, 1 or an
unparsable reply), so judged metrics, coverage and failures all vary. The snapshot (`snapshots/mini_results.json`)
was written from the code before the cores took over the scoring; `--update-snapshots` rewrites it on purpose
(a scoring change, with its `metadata.version` bump).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply

from ..agentx.test_e2e import _replies
from ..conftest import CliRun, run_lmms_eval

pytestmark = pytest.mark.e2e
SNAPSHOT = Path(__file__).parent / "snapshots" / "mini_results.json"
SCRIPTED_TASKS = (
    "agentvqa,agentvqa_circular,agentvqa_coords_norm1000_xy,agentvqa_coords_norm1000_yx_perm5,agentvqa_random5,"
    "robovista,robovista_circular,robovista_icl,robovista_icl_perm5,robovista_random5,robovista_cot,"
    "robovista_confidence,robovista_zeroshot_full,robovista_icl_reasoning,"
    "agentx,agentx_generative,agentx_text_answer,agentx_script_gpt,agentx_script_qwen_generative")
JUDGED_TASKS = "agentx,agentx_script_gpt,agentx_script_qwen_generative"
JUDGE_REPLIES = ("{'Score': '0.0', 'Justification': 'j'}", "{'Score': '0.4', 'Justification': 'j'}",
                 "{'Score': '1.0', 'Justification': 'j'}", "oops")


def _metrics(run: CliRun) -> dict[str, dict[str, Any]]:
    run.assert_ok()
    return {task: {key: value for key, value in values.items() if key != "alias"}
            for task, values in sorted(run.results["results"].items())}


def _scripted(folder: Path) -> dict[str, dict[str, Any]]:
    args = ["--model", "agentic_scripted", "--model_args", "policy=hash,letters=ABCDE", "--tasks", SCRIPTED_TASKS]
    return _metrics(run_lmms_eval(args, folder, env={"LMMS_AGENTIC_DATA": "mini"}))


def _judge_reply(call: ScriptedCall) -> ScriptedReply:
    return ScriptedReply(JUDGE_REPLIES[int(hashlib.sha256(call.prompt.encode()).hexdigest(), 16) % 4])


def _judged(folder: Path) -> dict[str, dict[str, Any]]:
    folder.mkdir(parents=True, exist_ok=True)
    with ScriptedJudgeServer(_judge_reply) as server:
        env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url,
               "LMMS_AGENTIC_JUDGE_MODEL": "judge-test-2025-01-01", "LMMS_AGENTIC_JUDGE_CACHE": "off"}
        args = ["--model", "agentic_scripted", "--model_args", f"policy=replay,replay={_replies(folder)}",
                "--tasks", JUDGED_TASKS]
        return _metrics(run_lmms_eval(args, folder / "out", env=env))


def _same(before: Any, after: Any) -> bool:
    if isinstance(before, float) and isinstance(after, float):
        return (math.isnan(before) and math.isnan(after)) or math.isclose(before, after, rel_tol=1e-12, abs_tol=1e-12)
    return bool(before == after)


def _differences(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    found = [f"task {task}: {'missing now' if task in before else 'new'}" for task in sorted(set(before) ^ set(after))]
    for task in sorted(set(before) & set(after)):
        for key in sorted(set(before[task]) | set(after[task])):
            old, new = before[task].get(key, "<absent>"), after[task].get(key, "<absent>")
            if not _same(old, new):
                found.append(f"{task} {key}: was {old!r}, now {new!r}")
    return found


def test_every_metric_of_every_task_is_unchanged(tmp_path: Path, update_snapshots: bool) -> None:
    now = {"scripted": _scripted(tmp_path / "scripted"), "judged": _judged(tmp_path / "judged")}
    if update_snapshots or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        if not update_snapshots:
            pytest.fail(f"wrote the missing snapshot {SNAPSHOT.name}; check it in and rerun")
    pinned = json.loads(SNAPSHOT.read_text())
    differences = [f"[{run}] {line}" for run in ("scripted", "judged") for line in _differences(pinned[run], now[run])]
    assert not differences, "\n".join(differences[:60])
    # the pin is not vacuous: the runs cover every benchmark, permutation metrics and scored judged metrics
    assert len(now["scripted"]) >= 70 and {"agentvqa", "robovista", "agentx"} <= set(now["scripted"])
    assert 0 < now["judged"]["agentx_text_answer"]["ground_s,none"] < 1
    assert 0 < now["judged"]["agentx_text_answer"]["cov_ground,none"] < 1
