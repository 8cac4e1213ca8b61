"""The demo's judged run: Agent-X's one-shot tasks with scripted replies, judged by a scripted loopback judge.

Neither side is a model. `agentic_scripted` (``policy=replay``) answers each mini-split item with a reply written
here from the item's ground truth (``scripted_replies``): the gold trace, the gold steps with a wrong final answer,
or prose that does not parse as a trace. The judge is ``judges.testing.ScriptedJudgeServer`` on 127.0.0.1 for the
length of the run (the plugin reaches it through ``LMMS_AGENTIC_JUDGE_BASE_URL`` and ``LMMS_AGENTIC_JUDGE_MODEL``,
like any OpenAI-compatible judge): its score is picked by a SHA-256 of the judge prompt (0.0, 0.5 or 1.0), and one
prompt in about eight gets a reply without a score, which the judge layer leaves unscored (``judge_reply``). So the
judged metrics (goal_acc ...) are real numbers computed end to end, with coverage below 100% and failing samples
whose verdicts the viewer shows; they say nothing about a model or a judge.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.data import mini_dir
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply

BENCHMARK = "agentx"
JUDGED_LABEL = "scripted replies + scripted judge"
"""The run's label in the viewer."""
JUDGE_MODEL = "scripted-demo-judge"
"""The model name the scripted judge reports (sent as ``LMMS_AGENTIC_JUDGE_MODEL``)."""
UNSCORED_EVERY = 8
"""About one judge prompt in this many gets a reply without a score."""
SCORES = (0.0, 0.5, 1.0)
PROSE = "I would read the image with OCR first and then answer from what it says."
"""The reply of items the model 'fails to format': no JSON trace in it."""
WRONG_ANSWER = {"value": "I cannot tell", "justification": "a scripted wrong answer"}
CLEARED = ("PRESET", "DECODING", "API_KEY", "API_VERSION")
"""Judge settings taken out of the judged run's environment, so the user's own judge (or key) is never used."""

RunCli = Callable[[list[str], Path, str, Mapping[str, str]], Path]


def judge_reply(call: ScriptedCall) -> ScriptedReply:
    """The scripted judge: a score, or (about one prompt in ``UNSCORED_EVERY``) a reply without one."""
    digest = hashlib.sha256(call.prompt.encode("utf-8")).digest()
    if digest[0] % UNSCORED_EVERY == 0:
        return ScriptedReply("The scripted demo judge gives no score for this prompt (a malformed reply).")
    score = SCORES[digest[1] % len(SCORES)]
    return ScriptedReply(json.dumps({"Score": score, "Justification": f"scripted demo judge: {score} picked by a "
                                     "hash of the judge prompt, not a judgement"}))


def _trace(item: Mapping[str, Any], final_answer: Any) -> str:
    steps = [{"step": step.get("step"), "task": step.get("task"), "tool_used": step.get("tool"),
              "tool_output": step.get("output"), "thought": step.get("thought")}
             for step in item.get("reasoning_steps") or [] if isinstance(step, Mapping)]
    trace = {"query": item.get("query"), "reasoning_steps": steps, "final_answer": final_answer}
    return "Here is my plan.\n```json\n" + json.dumps(trace, ensure_ascii=False) + "\n```"


def scripted_replies(data: Mapping[str, Any]) -> dict[str, str]:
    """A reply per item id of Agent-X's ``data.json`` (id -> a list holding the item): ids ending in 2 or 7 get
    prose, other even ids the gold trace, other odd ids the gold steps with a wrong final answer."""
    replies: dict[str, str] = {}
    for item_id, entries in data.items():
        item = entries[0] if isinstance(entries, list) and entries else entries
        if not isinstance(item, Mapping):
            continue
        number = int(item_id) if str(item_id).isdigit() else len(replies)
        if number % 5 == 2:
            replies[str(item_id)] = PROSE
        else:
            replies[str(item_id)] = _trace(item, item.get("final_answer") if number % 2 == 0 else WRONG_ANSWER)
    return replies


def judged_tasks() -> list[str]:
    return list(benchmarks.get(BENCHMARK).demo_tasks)


def run_judged(output: Path, run_cli: RunCli) -> Path:
    """Run the judged Agent-X demo into ``output`` (its replies file and a fresh judge cache inside it) through
    ``run_cli(args, output, log name, extra environment)``; returns the results file."""
    output.mkdir(parents=True, exist_ok=True)
    data = json.loads((mini_dir(BENCHMARK) / "data.json").read_text(encoding="utf-8"))
    replies = output / "scripted_replies.json"
    replies.write_text(json.dumps(scripted_replies(data), indent=1, ensure_ascii=False), encoding="utf-8")
    cache = output / "judge-cache"
    shutil.rmtree(cache, ignore_errors=True)
    with ScriptedJudgeServer(judge_reply, model=JUDGE_MODEL) as judge:
        env = {"LMMS_AGENTIC_JUDGE_BASE_URL": judge.base_url, "LMMS_AGENTIC_JUDGE_MODEL": JUDGE_MODEL,
               "LMMS_AGENTIC_JUDGE_CACHE": str(cache),
               **{f"LMMS_AGENTIC_JUDGE_{name}": "" for name in CLEARED}}
        return run_cli(["--model", "agentic_scripted", "--model_args", f"policy=replay,replay={replies}",
                        "--tasks", ",".join(judged_tasks())], output, "lmms_eval.log", env)
