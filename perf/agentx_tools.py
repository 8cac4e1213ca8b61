"""``agentx_tools`` round loop: lmms-eval's sequential `_run_generate_until_agentic` vs the batched loop
(`tasks/agentx/tools/batched.py`) on the same 64 episodes.

64 tasks are built from the Agent-X mini split (each of its 10 tasks repeated with a distinct id and query suffix);
the model is a loopback OpenAI-compatible server (`judges/testing.py`) that adds ``LATENCY_S`` (100 ms) to every
request and is driven by a client that keeps at most ``CONCURRENCY`` (16) requests in flight; its replies play the
task's gold trace as tool calls (local tools real: OCR, Calculator, DrawBoundingBox, OverlayText; replay for the
rest), then the gold answer.  The OCR model is loaded and the sandbox started before timing; the memo of repeated
local calls is cleared before each timed run, so each loop pays its own tool calls.
Figures: the speed-up of the batched loop (target >= 8x), that every response is
identical between the two loops, and the tool phase (the batched run's wall time outside the model batches: tool
calls, run concurrently, plus the protocol's own work) as a share of its wall time (target <= 10%).

Timed: each loop on requests built beforehand.  Building them (one `doc_to_text` per document for the first
context, as lmms-eval's `construct_requests` does before it runs any loop) was once inside the timed region, so its
0.05-0.15 s counted as "tool phase" though no round had started; it is reported apart.  The detail also gives the
critical path of the tool calls (per round, the slowest call's own seconds, summed: the tool phase's floor when
the rounds' calls run concurrently) and the load average, since on a 2-core machine other work moves this figure.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import re
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from perf.common import Figure, at_least, at_most, info, restored_environment

SECTION = "agentx_tools"
LATENCY_S = 0.1
CONCURRENCY = 16
N_TASKS = 64
TASK = "agentx_tools_bench"
CLEARED = ("LMMS_AGENTIC_AGENTX_TOOLS", "LMMS_AGENTIC_AGENTX_TOOL_SERVER", "LMMS_AGENTIC_AGENTIC_WORKERS")
CLEARED_PREFIXES = ("LMMS_AGENTIC_DATA_", "LMMS_AGENTIC_SCHEMA_")


@contextmanager
def bench_environment() -> Iterator[None]:
    """The environment the section measures in, whatever the caller's holds: Agent-X's mini split, the default
    tool backends and concurrency (see the module docstring); restored on exit."""
    with restored_environment():
        for key in [key for key in os.environ if key in CLEARED or key.startswith(CLEARED_PREFIXES)]:
            del os.environ[key]
        os.environ["LMMS_AGENTIC_DATA"] = "mini"
        yield


def _docs() -> list[dict[str, Any]]:
    from lmms_agentic.tasks.agentx import hooks as agentx_hooks

    base = [dict(row) for row in agentx_hooks.all_docs()]
    docs = []
    for i in range(N_TASKS):
        doc = dict(base[i % len(base)])
        doc["id"], doc["query"] = f"{doc['id']}-{i}", f"{doc['query']} (task {i})"
        docs.append(doc)
    return docs


def _script(docs: list[dict[str, Any]]) -> dict[str, list[str]]:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.agentx.tools.scripts import gold_script, mini_records

    gold = gold_script(mini_records())
    return {doc["query"]: gold[doc["id"].split("-")[0]] for doc in docs}


class LoopbackModel:
    """A simple lmms-eval model: each request's text goes to the loopback server; 16 in flight at most."""

    is_simple = True

    def __init__(self, base_url: str, docs: list[dict[str, Any]]) -> None:
        self.url = base_url + "/chat/completions"
        self.task_dict = {TASK: {"test": docs}}
        self.requests = 0
        self.model_s = 0.0
        self._pool = concurrent.futures.ThreadPoolExecutor(CONCURRENCY)

    def _one(self, context: str) -> str:
        body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": context}]}).encode()
        request = urllib.request.Request(self.url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return str(json.loads(response.read())["choices"][0]["message"]["content"])

    def generate_until(self, requests: list[Any]) -> list[str]:
        self.requests += len(requests)
        started = time.perf_counter()
        replies = list(self._pool.map(lambda r: self._one(r.args[0]), requests))
        self.model_s += time.perf_counter() - started
        return replies


def _requests(docs: list[dict[str, Any]]) -> list[Any]:
    from lmms_eval.api.instance import Instance

    from lmms_agentic.tasks.agentx.tools import hooks

    kwargs = {"max_steps": 8, "video_mode": "frames", "n_frames": 8}
    to_text = functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=kwargs)
    to_visual = functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=kwargs)
    out = []
    for index, doc in enumerate(docs):
        context = hooks.doc_to_text(doc, kwargs)
        arguments = (context, {"max_new_tokens": 64, "until": [], "max_agentic_steps": 8}, to_visual, to_text, index,
                     TASK, "test")
        out.append(Instance(request_type="generate_until_agentic", arguments=arguments, idx=0,
                            metadata={"task": TASK, "doc_id": index, "repeats": 1}))
    return out


def _untimed(responses: list[str]) -> list[Any]:
    """The responses without the measured seconds and memo flags of each round (timing, not results)."""
    out = []
    for response in responses:
        data = json.loads(response)
        for entry in data["state"]["rounds"]:
            entry.pop("seconds", None)
            entry.pop("cached", None)
        out.append(data)
    return out


def _tool_seconds(responses: list[str]) -> float:
    total = 0.0
    for response in responses:
        for entry in json.loads(response)["state"]["rounds"]:
            total += float(entry.get("seconds") or 0.0)
    return total


def _critical_tool_seconds(responses: list[str]) -> float:
    slowest: dict[int, float] = {}
    for response in responses:
        for entry in json.loads(response)["state"]["rounds"]:
            number = int(entry["round"])
            slowest[number] = max(slowest.get(number, 0.0), float(entry.get("seconds") or 0.0))
    return sum(slowest.values())


def measure() -> dict[str, Any]:
    """Both loops on the same 64 episodes (call inside `bench_environment`)."""
    from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply
    from lmms_agentic.tasks.agentx.tools.batched import lmms_eval_loop, run_generate_until_agentic
    from lmms_agentic.tasks.agentx.tools.runtime import default_runtime, reset_default_runtime

    reset_default_runtime()  # configured from this environment
    _run_generate_until_agentic = lmms_eval_loop()  # lmms-eval's own, even if the batched loop is installed
    docs = _docs()
    script = _script(docs)

    def reply(call: Any) -> ScriptedReply:
        prompt = call.prompt
        query = prompt.split("\nQuery: ", 1)[1].split("\n", 1)[0]
        turn = len(re.findall(r"\n\nReply \d+:\n", prompt))
        replies = script[query]
        return ScriptedReply(replies[min(turn, len(replies) - 1)])

    with ScriptedJudgeServer(reply, latency=LATENCY_S) as server:
        warm = LoopbackModel(server.base_url, docs[:10])
        run_generate_until_agentic(warm, _requests(docs[:10]))  # loads OCR and the sandbox once, for both runs
        runtime = default_runtime()
        runtime.clear_memo()  # each timed run pays its own tool calls
        model = LoopbackModel(server.base_url, docs)
        requests = _requests(docs)
        started = time.perf_counter()
        sequential = _run_generate_until_agentic(model, requests)
        sequential_s = time.perf_counter() - started
        runtime.clear_memo()
        model = LoopbackModel(server.base_url, docs)
        started = time.perf_counter()
        requests = _requests(docs)
        build_s = time.perf_counter() - started
        started = time.perf_counter()
        batched = run_generate_until_agentic(model, requests)
        batched_s = time.perf_counter() - started
        peak = server.max_in_flight
    return {"sequential_s": sequential_s, "batched_s": batched_s,
            "identical": _untimed(sequential) == _untimed(batched),
            "tool_s": _tool_seconds(batched), "critical_tool_s": _critical_tool_seconds(batched),
            "requests": model.requests, "peak_in_flight": peak, "build_s": build_s,
            "outside_model_s": batched_s - model.model_s, "load": os.getloadavg()[0]}


def run(quick: bool = False) -> list[Figure]:
    with bench_environment():
        found = measure()
    speedup = found["sequential_s"] / found["batched_s"]
    share = 100.0 * found["outside_model_s"] / found["batched_s"]
    detail = (f"{N_TASKS} tasks, {found['requests']} model requests, {LATENCY_S * 1000:.0f} ms each, "
              f"{CONCURRENCY} in flight (peak {found['peak_in_flight']}): sequential {found['sequential_s']:.1f} s, "
              f"batched {found['batched_s']:.2f} s")
    return [at_least(SECTION, "batched round loop vs lmms-eval's sequential loop", speedup, 8.0, "x", detail),
            info(SECTION, "responses identical to the sequential loop", 1.0 if found["identical"] else 0.0, "bool",
                 "every per-sample response compared"),
            at_most(SECTION, "tool phase (wall outside model batches) / batched wall", share, 10.0, "%",
                    f"{found['outside_model_s']:.2f} s outside model batches; the calls' own seconds sum to "
                    f"{found['tool_s']:.2f} s (concurrent), {found['critical_tool_s']:.2f} s on the critical path "
                    f"(slowest call per round); requests built in {found['build_s']:.2f} s (untimed); "
                    f"load average {found['load']:.1f}")]


if __name__ == "__main__":
    for figure in run():
        print(figure.as_dict())
