"""Throughput benchmark of the judge client against the loopback scripted server (``testing.py``).

Owns: ``python -m lmms_agentic.judges.bench``: starts ``ScriptedJudgeServer`` on 127.0.0.1 with a fixed
per-request latency (default 20 ms), sends N distinct requests with the cache disabled at concurrency 1 and 16,
and prints requests/second for each.  Bounded: N <= 2000, latency <= 0.5 s, and the concurrency-1 pass is cut
so it lasts at most ~30 s.  Loopback only; no network, no key.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from .client import JudgeClient
from .config import JudgeConfig
from .parsers import ScoreParser
from .templates import JudgeRequest, PromptTemplate
from .testing import ScriptedJudgeServer, fixed

__all__ = ["main", "measure"]

_TEMPLATE_USER = "Rate the response from 1 to 5 and reply 'Score: N'.\n{{response}}"


def measure(server: ScriptedJudgeServer, n: int, concurrency: int) -> tuple[float, int, int]:
    """(requests/second, scored, unscored) for ``n`` distinct requests at ``concurrency``."""
    template = PromptTemplate(id="bench/score", version="1", user=_TEMPLATE_USER, parser=ScoreParser(1, 5))
    config = JudgeConfig(base_url=server.base_url, model="bench-judge", cache_dir=None, concurrency=concurrency,
                         timeout=10.0, max_retries=0)
    requests = [JudgeRequest(template, {"response": f"bench item {concurrency}-{i}"}, str(i)) for i in range(n)]
    with JudgeClient(config, cache=False) as client:
        client.judge(JudgeRequest(template, {"response": "warm-up"}))  # open the connection first
        start = time.perf_counter()
        results = client.judge_many(requests, progress=False)
        elapsed = time.perf_counter() - start
    scored = sum(r.scored for r in results)
    return n / elapsed, scored, n - scored


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmms_agentic.judges.bench", description=__doc__)
    parser.add_argument("-n", "--requests", type=int, default=200, help="requests per pass (max 2000)")
    parser.add_argument("--latency", type=float, default=0.02, help="server latency per request, s (max 0.5)")
    args = parser.parse_args(argv)
    n = max(1, min(args.requests, 2000))
    latency = max(0.0, min(args.latency, 0.5))
    n_serial = max(1, min(n, int(30 / latency) if latency > 0 else n))
    print(f"loopback scripted judge, latency {latency * 1000:.0f} ms/request, cache disabled")
    with ScriptedJudgeServer(fixed("Score: 3"), latency=latency) as server:
        for concurrency, count in ((1, n_serial), (16, n)):
            rps, scored, unscored = measure(server, count, concurrency)
            ideal = concurrency / latency if latency > 0 else float("inf")
            print(f"concurrency {concurrency:>2}: {count:>4} requests, {rps:8.1f} requests/s "
                  f"(ideal {ideal:.0f}/s), scored {scored}, unscored {unscored}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
