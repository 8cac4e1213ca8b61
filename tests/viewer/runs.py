"""Small real runs for the viewer's tests: the lmms-eval CLI on the mini splits with `agentic_scripted`, a loopback
judge for Agent-X, an executed-tools episode with a tool that returns an image and one with a tool error, and hostile
replies (script tags, an image with an onerror handler, `</script>` inside the logged JSON)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from lmms_agentic.adapters.samples import read_record
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply

from ..conftest import run_lmms_eval

HOSTILE = ('</script><script>window.PWNED = 1</script><img src=x onerror="window.PWNED = 2">'
           '<b onmouseover="window.PWNED = 3">B</b> The answer is B.')
"""A reply that would run script if any page put it into markup; its "B" is still read as the answer."""
HOSTILE_CALL = json.dumps({"thought": "<img src=x onerror=\"window.PWNED = 4\">", "tool": "Calculator",
                           "arguments": {"expression": "1/0"}})
TOOLS_SCRIPT = {
    "3": [json.dumps({"thought": "read", "tool": "OCR", "arguments": {"image": "image_1"}}),
          json.dumps({"thought": "compute", "tool": "Calculator", "arguments": {"expression": "8*2+5*6"}}),
          json.dumps({"thought": "mark", "tool": "DrawBoundingBox",
                      "arguments": {"image": "image_1", "bbox": "(2, 2, 30, 30)"}}),
          json.dumps({"thought": "done", "final_answer": {"value": "46", "justification": "8*2+5*6"}})],
    "4": [HOSTILE_CALL],
    "0": [HOSTILE],
}
"""Task 3 plays the gold trace, then draws a box (a tool that returns an image); task 4 divides by zero until the
step limit (a tool error); task 0 is hostile."""
MCQ_TASKS = "agentvqa,agentvqa_random5,robovista,agentx"


@dataclass(frozen=True)
class ViewerRuns:
    scripted: Path
    """`policy=hash` on AgentVQA (with its random-order permutation task), RoboVista and Agent-X, judged."""
    tools: Path
    """`agentx_tools` with `TOOLS_SCRIPT`, judged."""
    hostile: Path
    """`policy=replay` on AgentVQA and RoboVista: every item gets `HOSTILE` (a second model to compare with)."""


def _judged(args: list[str], output: Path, cache: Path) -> None:
    with ScriptedJudgeServer(lambda call: ScriptedReply("{'Score': 0.5}")) as server:
        env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url,
               "LMMS_AGENTIC_JUDGE_MODEL": "judge-test-2025-01-01", "LMMS_AGENTIC_JUDGE_CACHE": str(cache)}
        run_lmms_eval(["--model", "agentic_scripted", *args], output, env=env).assert_ok()


def make_runs(folder: Path) -> ViewerRuns:
    """Run the three lmms-eval commands (about a minute on two cores)."""
    runs = ViewerRuns(folder / "scripted", folder / "tools", folder / "hostile")
    _judged(["--model_args", "policy=hash,letters=ABCDE", "--tasks", MCQ_TASKS], runs.scripted, folder / "cache")
    script = folder / "script.json"
    script.write_text(json.dumps(TOOLS_SCRIPT), encoding="utf-8")
    _judged(["--model_args", f"policy=script,script={script}", "--tasks", "agentx_tools"], runs.tools,
            folder / "cache")
    replies = folder / "replies.json"
    ids = _item_ids(runs.scripted, ("agentvqa", "robovista"))
    replies.write_text(json.dumps(dict.fromkeys(ids, HOSTILE)), encoding="utf-8")
    run_lmms_eval(["--model", "agentic_scripted", "--model_args", f"policy=replay,replay={replies}", "--tasks",
                   "agentvqa,robovista"], runs.hostile, env={"LMMS_AGENTIC_DATA": "mini"}).assert_ok()
    return runs


def kept_or_made(tmp_path_factory: pytest.TempPathFactory) -> ViewerRuns:
    """The runs, made in the test's tmp folder; $VIEWER_RUNS names a folder that keeps them between sessions (made
    there when it holds none), for iterating on the viewer without rerunning lmms-eval."""
    kept = os.environ.get("VIEWER_RUNS")
    if kept and all((Path(kept) / name).is_dir() for name in ("scripted", "tools", "hostile")):
        return ViewerRuns(Path(kept) / "scripted", Path(kept) / "tools", Path(kept) / "hostile")
    folder = Path(kept) if kept else tmp_path_factory.mktemp("viewer-runs")
    folder.mkdir(parents=True, exist_ok=True)
    return make_runs(folder)


def _item_ids(run: Path, benchmarks: tuple[str, ...]) -> list[str]:
    """The record ids a run logged for ``benchmarks`` (permutation rows left out)."""
    ids = []
    for path in sorted(run.rglob("*_samples_*.jsonl")):
        for text in path.read_text(encoding="utf-8").splitlines():
            record = read_record(json.loads(text))
            if record is not None and record["benchmark"] in benchmarks and "group_id" not in record:
                ids.append(str(record["id"]))
    return sorted(set(ids))
