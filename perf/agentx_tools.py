"""``agentx_tools`` round loop: lmms-eval's sequential `_run_generate_until_agentic` vs the batched loop
(`adapters/agentic/loop.py`, in cohorts: `cohorts.py`) on the same 64 episodes, and the batched loop vs
itself with every tool answered instantly.

64 tasks are built from the Agent-X mini split (each of its 10 tasks repeated with a distinct id and query suffix);
the model is a loopback OpenAI-compatible server (`judges/testing.py`) that adds ``LATENCY_S`` (100 ms) to every
request and is driven by a client that keeps at most ``CONCURRENCY`` (16) requests in flight (an API client: it
declares `agentic_tool_overlap` and `num_concurrent`, so the batched loop serves it in two cohorts of whole waves);
its replies play the task's gold trace as tool calls (local tools real: OCR, Calculator, DrawBoundingBox,
OverlayText; replay for the rest), then the gold answer. The OCR model is loaded and the sandbox started before
timing; the memo of repeated local calls is cleared before each timed run, so each run pays its own tool calls.
Figures: the speed-up of the batched loop over the sequential one (target >= 8x); that every response is identical
between the two loops; the tool overhead, the batched run's wall time over the same run with instant tools
(``InstantTools``: the same requests to the same server, each tool call answered at once with the observation the
sequential run recorded for it; target <= 1.10); the batched run's wall time outside model calls (info). The batched
and instant runs alternate ``REPEATS`` (5) times (once with ``--quick``; each figure their median, both sides
treated alike), since on a 2-core machine other work moves them; the load average is reported before and after the
runs, and the overhead is split into the model calls' own slow-down (tool work competing with the client and the
loopback server for the cores) and the wall time outside model calls (late tool steps). For reference, the same
two runs with one cohort (`LMMS_AGENTIC_AGENTIC_COHORTS=1`: every unfinished episode in each call, the tools
between calls, the loop in-process backends get): with instant tools, the fastest this server allows one call at a
time. Requests are built before each timed run (lmms-eval's `construct_requests` does so before any loop runs).
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import re
import statistics
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from perf.common import Figure, at_least, at_most, info, restored_environment

SECTION = "agentx_tools"
LATENCY_S = 0.1
CONCURRENCY = 16
N_TASKS = 64
TASK = "agentx_tools_bench"
REPEATS = 5
ENV_COHORTS = "LMMS_AGENTIC_AGENTIC_COHORTS"
CLEARED = ("LMMS_AGENTIC_AGENTX_TOOLS", "LMMS_AGENTIC_AGENTX_TOOL_SERVER", "LMMS_AGENTIC_AGENTIC_WORKERS",
           ENV_COHORTS)
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
    agentic_tool_overlap = True  # its calls wait on a server: tool steps may run meanwhile

    def __init__(self, base_url: str, docs: list[dict[str, Any]]) -> None:
        self.url = base_url + "/chat/completions"
        self.num_concurrent = CONCURRENCY  # as lmms-eval's OpenAI client names it
        self.task_dict = {TASK: {"test": docs}}
        self.requests = 0
        self.calls = 0
        self.model_s = 0.0
        self._pool = concurrent.futures.ThreadPoolExecutor(CONCURRENCY)

    def _one(self, context: str) -> str:
        body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": context}]}).encode()
        request = urllib.request.Request(self.url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return str(json.loads(response.read())["choices"][0]["message"]["content"])

    def generate_until(self, requests: list[Any]) -> list[str]:
        self.requests += len(requests)
        self.calls += 1
        started = time.perf_counter()
        replies = list(self._pool.map(lambda r: self._one(r.args[0]), requests))
        self.model_s += time.perf_counter() - started
        return replies


class RecordedTools:
    """A tool runtime that passes each call to `runtime` and keeps its observation by (document, n-th call)."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.seen: dict[tuple[str, int], tuple[str, Any]] = {}
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def execute(self, doc: Any, call: Any, visuals: Any, used_gold_steps: Any = (), n_inputs: Any = None) -> Any:
        observed = self.runtime.execute(doc, call, visuals, used_gold_steps, n_inputs=n_inputs)
        with self._lock:  # one document's calls come one after another
            count = self.counts.get(str(doc["id"]), 0)
            self.counts[str(doc["id"])] = count + 1
            self.seen[(str(doc["id"]), count)] = (call.tool, observed)
        return observed


class InstantTools:
    """A tool runtime that answers each call at once with the observation `recorded` holds for it (0 s)."""

    def __init__(self, recorded: RecordedTools) -> None:
        self.recorded = recorded.seen
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def execute(self, doc: Any, call: Any, visuals: Any, used_gold_steps: Any = (), n_inputs: Any = None) -> Any:
        with self._lock:
            count = self.counts.get(str(doc["id"]), 0)
            self.counts[str(doc["id"])] = count + 1
        tool, observed = self.recorded[(str(doc["id"]), count)]
        if tool != call.tool:
            raise RuntimeError(f"{doc['id']}: call {count} is {call.tool}, the recorded run called {tool}")
        return replace(observed, seconds=0.0)


def _requests(docs: list[dict[str, Any]], runtime: Any = None) -> list[Any]:
    from lmms_eval.api.instance import Instance

    from lmms_agentic.tasks.agentx.tools import hooks

    kwargs = {"max_steps": 8, "video_mode": "frames", "n_frames": 8}
    to_text = functools.partial(hooks.doc_to_text, lmms_eval_specific_kwargs=kwargs,
                                **({"runtime": runtime} if runtime is not None else {}))
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


def measure(repeats: int = REPEATS) -> dict[str, Any]:
    """The sequential loop once (recording every tool observation), then the batched loop with real tools and with
    instant tools, alternating `repeats` times, on the same 64 episodes (call inside `bench_environment`)."""
    from lmms_agentic.adapters.agentic.loop import lmms_eval_loop, run_generate_until_agentic
    from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply
    from lmms_agentic.tasks.agentx.tools.toolset import default_runtime, reset_default_runtime

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

    def timed(server: ScriptedJudgeServer, runtime: Any, loop: Any) -> tuple[float, list[str], LoopbackModel]:
        default_runtime().clear_memo()  # each timed run pays its own tool calls
        model = LoopbackModel(server.base_url, docs)
        requests = _requests(docs, runtime)
        started = time.perf_counter()
        responses = loop(model, requests)
        return time.perf_counter() - started, responses, model

    load_before = os.getloadavg()[0]
    with ScriptedJudgeServer(reply, latency=LATENCY_S) as server:
        warm = LoopbackModel(server.base_url, docs[:10])
        run_generate_until_agentic(warm, _requests(docs[:10]))  # loads OCR and the sandbox once, for every run
        recorder = RecordedTools(default_runtime())
        sequential_s, sequential, _ = timed(server, recorder, _run_generate_until_agentic)
        batched_runs, instant_runs, one_cohort, one_cohort_instant = [], [], [], []
        for _ in range(repeats):
            batched_runs.append(timed(server, None, run_generate_until_agentic))
            instant_runs.append(timed(server, InstantTools(recorder), run_generate_until_agentic))
            with restored_environment():
                os.environ[ENV_COHORTS] = "1"
                one_cohort.append(timed(server, None, run_generate_until_agentic)[0])
                one_cohort_instant.append(timed(server, InstantTools(recorder), run_generate_until_agentic)[0])
        peak = server.max_in_flight
    batched_s = statistics.median(seconds for seconds, _, _ in batched_runs)
    _, batched, model = min(batched_runs, key=lambda run: abs(run[0] - batched_s))
    instant_s = statistics.median(seconds for seconds, _, _ in instant_runs)
    instant_model = min(instant_runs, key=lambda run: abs(run[0] - instant_s))[2]
    expected = _untimed(sequential)
    return {"sequential_s": sequential_s, "batched_s": batched_s,
            "batched_all_s": [seconds for seconds, _, _ in batched_runs],
            "instant_s": instant_s, "instant_model_s": instant_model.model_s, "model_s": model.model_s,
            "instant_all_s": [seconds for seconds, _, _ in instant_runs],
            "identical": all(_untimed(responses) == expected for _, responses, _ in batched_runs),
            "one_cohort_s": statistics.median(one_cohort),
            "one_cohort_instant_s": statistics.median(one_cohort_instant),
            "instant_identical": all(_untimed(responses) == expected for _, responses, _ in instant_runs),
            "tool_s": _tool_seconds(batched), "critical_tool_s": _critical_tool_seconds(batched),
            "requests": model.requests, "calls": model.calls, "peak_in_flight": peak,
            "outside_model_s": batched_s - model.model_s, "load": (load_before, os.getloadavg()[0])}


def run(quick: bool = False) -> list[Figure]:
    with bench_environment():
        found = measure(1 if quick else REPEATS)
    speedup = found["sequential_s"] / found["batched_s"]
    overhead = found["batched_s"] / found["instant_s"]
    share = 100.0 * found["outside_model_s"] / found["batched_s"]
    runs = ", ".join(f"{s:.2f}" for s in found["batched_all_s"])
    instant_runs = ", ".join(f"{s:.2f}" for s in found["instant_all_s"])
    detail = (f"{N_TASKS} tasks, {found['requests']} model requests in {found['calls']} calls, {LATENCY_S * 1000:.0f} "
              f"ms each, {CONCURRENCY} in flight (peak {found['peak_in_flight']}): sequential "
              f"{found['sequential_s']:.1f} s, batched {found['batched_s']:.2f} s (median of {runs} s)")
    return [at_least(SECTION, "batched round loop vs lmms-eval's sequential loop", speedup, 8.0, "x", detail),
            info(SECTION, "responses identical to the sequential loop", 1.0 if found["identical"] else 0.0, "bool",
                 f"every per-sample response of each batched run compared; the instant-tools runs' too: "
                 f"{'identical' if found['instant_identical'] else 'DIFFERENT'}"),
            at_most(SECTION, "batched wall / same run with instant tools", overhead, 1.10, "x",
                    f"instant tools {found['instant_s']:.2f} s (median of {instant_runs} s; same requests, same "
                    f"server, each call answered with the sequential run's observation); model calls "
                    f"{found['model_s']:.2f} s vs {found['instant_model_s']:.2f} s with instant tools (the runs "
                    f"nearest the medians); load average {found['load'][0]:.1f} before, {found['load'][1]:.1f} "
                    f"after"),
            info(SECTION, "batched wall outside model calls / batched wall", share, "%",
                 f"{found['outside_model_s']:.2f} s outside model calls (the tools run during the other cohort's "
                 f"call); the calls' own seconds sum to {found['tool_s']:.2f} s, {found['critical_tool_s']:.2f} s "
                 f"on the critical path (slowest call per round)"),
            info(SECTION, "batched wall / one cohort with instant tools", found["batched_s"] / found[
                "one_cohort_instant_s"], "x",
                 f"one cohort ({ENV_COHORTS}=1: every unfinished episode in each call, tools between calls): "
                 f"{found['one_cohort_s']:.2f} s, with instant tools {found['one_cohort_instant_s']:.2f} s (medians)")]


if __name__ == "__main__":
    for figure in run():
        print(figure.as_dict())
