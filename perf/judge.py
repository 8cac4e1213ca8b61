"""Judge client throughput against the loopback scripted server (``judges/testing.py``), and a fully cached rerun.

The server answers every request after ``LATENCY_S`` (20 ms, a fast local vLLM judge) and runs in a child process
(in the client's process its threads would compete with the client's for one GIL, which a real judge server never
does). The client sends ``N`` distinct requests through ``judge_many`` at concurrency 1, 8, 16 and 32 with the cache
off. The ideal at concurrency c is c / latency requests per second; the figure is the share of it reached (target at
16: >= 80%). The cached rerun writes ``CACHED`` (8,000) verdicts into a fresh cache folder, starts a new client and
server, judges the same requests again and counts what reached the server (target 0) and the wall time (target < 1
s). ``python -m perf.judge --profile``: a pyinstrument profile of the concurrency-16 pass. """

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from perf.common import REPO, Figure, at_least, at_most, info

SECTION = "judge"
LATENCY_S = 0.02
CACHED = 8000
_USER = "Rate the response from 1 to 5 and reply 'Score: N'.\n{{response}}"


def _template() -> Any:
    from lmms_agentic.judges import PromptTemplate, ScoreParser

    return PromptTemplate(id="bench/score", version="1", user=_USER, parser=ScoreParser(1, 5))


def _requests(n: int, tag: str) -> list[Any]:
    from lmms_agentic.judges import JudgeRequest

    template = _template()
    return [JudgeRequest(template, {"response": f"bench item {tag}-{i}"}, str(i)) for i in range(n)]


class ServerProcess:
    """``ScriptedJudgeServer`` in a child process, so that its threads do not share the client's GIL (a real judge
    runs elsewhere); ``request_count`` asks it over a pipe."""

    def __init__(self, latency: float, content: str = "Score: 3") -> None:
        self.latency, self.content = latency, content

    def __enter__(self) -> ServerProcess:
        code = ("import sys\nfrom lmms_agentic.judges.testing import ScriptedJudgeServer, fixed\n"
                f"server = ScriptedJudgeServer(fixed({self.content!r}), latency={self.latency!r}).start()\n"
                "print(server.base_url, flush=True)\n"
                "for line in sys.stdin:\n"
                "    print(server.request_count if line.strip() == 'count' else server.max_in_flight, flush=True)\n")
        self._process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert self._process.stdout is not None
        self.base_url = self._process.stdout.readline().strip()
        return self

    def _ask(self, what: str) -> int:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(what + "\n")
        self._process.stdin.flush()
        return int(self._process.stdout.readline())

    @property
    def request_count(self) -> int:
        return self._ask("count")

    @property
    def max_in_flight(self) -> int:
        return self._ask("peak")

    def __exit__(self, *exc: object) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=10)


def throughput(server: Any, n: int, concurrency: int, cache_dir: Path | None = None) -> tuple[float, int, int]:
    """(requests per second, scored, requests the server saw) for ``n`` distinct requests."""
    from lmms_agentic.judges import JudgeClient, JudgeConfig

    config = JudgeConfig(base_url=server.base_url, model="bench-judge", cache_dir=cache_dir, concurrency=concurrency,
                         timeout=30.0, max_retries=0)
    requests = _requests(n, f"c{concurrency}")
    with JudgeClient(config, cache=cache_dir is not None) as client:
        client.judge(_requests(1, f"warm{concurrency}")[0])  # the first connection
        before = server.request_count
        started = time.perf_counter()
        results = client.judge_many(requests, progress=False)
        elapsed = time.perf_counter() - started
    return n / elapsed, sum(r.scored for r in results), server.request_count - before


def cached_rerun(n: int) -> tuple[float, int, int]:
    """(seconds, scored, requests sent) of a rerun of ``n`` requests whose verdicts are all in the cache."""
    from lmms_agentic.judges import JudgeClient, JudgeConfig

    folder = Path(tempfile.mkdtemp(prefix="bench-judge-cache-"))
    try:
        with ServerProcess(0.0, "Score: 4") as server:
            config = JudgeConfig(base_url=server.base_url, model="bench-judge", cache_dir=folder, concurrency=32,
                                 timeout=30.0, max_retries=0)
            with JudgeClient(config) as client:
                client.judge_many(_requests(n, "cached"), progress=False)
        with ServerProcess(LATENCY_S, "Score: 4") as server:
            config = JudgeConfig(base_url=server.base_url, model="bench-judge", cache_dir=folder, concurrency=16,
                                 timeout=30.0, max_retries=0)
            requests = _requests(n, "cached")  # built before the clock starts, as a task's requests are
            started = time.perf_counter()
            with JudgeClient(config) as client:
                results = client.judge_many(requests, progress=False)
            elapsed = time.perf_counter() - started
            return elapsed, sum(r.scored for r in results), server.request_count
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def profile(n: int = 400, concurrency: int = 16) -> str:
    """A pyinstrument profile (text) of one pass, or a note when pyinstrument is missing."""
    try:
        from pyinstrument import Profiler
    except ImportError:
        return "pyinstrument is not installed"
    with ServerProcess(LATENCY_S) as server:
        profiler = Profiler(interval=0.0005)
        profiler.start()
        throughput(server, n, concurrency)
        profiler.stop()
    text: str = profiler.output_text(unicode=False, color=False, show_all=False)
    return text


def run(quick: bool = False) -> list[Figure]:
    figures: list[Figure] = []
    n_serial = 60 if quick else 150
    for concurrency in (1, 8, 16, 32):
        with ServerProcess(LATENCY_S) as server:
            n = n_serial if concurrency == 1 else (200 if quick else 40 * concurrency)
            rps, scored, sent = throughput(server, n, concurrency)
            share = 100 * rps * LATENCY_S / concurrency
            detail = (f"{n} requests, {rps:.0f} req/s of an ideal {concurrency / LATENCY_S:.0f}; scored {scored}; "
                      f"server saw {sent}; peak in flight {server.max_in_flight}")
            name = f"concurrency {concurrency}: share of the ideal c/latency"
            if concurrency == 16:
                figures.append(at_least(SECTION, name, share, 80, "%", detail, requests_per_s=rps))
            else:
                figures.append(info(SECTION, name, share, "%", detail, requests_per_s=rps))
    n_cached = 1000 if quick else CACHED
    seconds, scored, sent = cached_rerun(n_cached)
    detail = f"{n_cached} cached verdicts, {scored} scored, {seconds * 1000 / n_cached:.3f} ms per verdict"
    figures.append(at_most(SECTION, f"cached rerun of {n_cached} verdicts: requests sent", sent, 0, "requests",
                           detail))
    figures.append(at_most(SECTION, f"cached rerun of {n_cached} verdicts: wall time", seconds, 1.0, "s", detail))
    return figures


if __name__ == "__main__":
    if "--profile" in sys.argv:
        print(profile())
    for figure in run(quick="--quick" in sys.argv):
        print(f"{figure.name:55s} {figure.shown():>12s}  {figure.target:10s} {figure.detail}", flush=True)
