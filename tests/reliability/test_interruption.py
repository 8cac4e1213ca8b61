"""Interrupted judged runs resume without repeating judge requests and end with the metrics of an uninterrupted run;
cache writes are atomic (a writer killed at any moment never leaves a partial entry that is served).

Fast: processes writing the judge cache are SIGKILLed at random moments, over and over; every entry left on disk
is complete and verified.  Slow (marker ``reliability_slow``): the real lmms-eval CLI judging Agent-X against the
loopback judge is killed mid-way with SIGKILL, with SIGINT, and inside a cache write; the rerun sends no request
whose answer was stored, and its results equal an uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lmms_agentic.judges import JudgeCache
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply

from ..conftest import CliRun

# ------------------------------------------------------------------ fast: killed writers

WRITER = textwrap.dedent("""
    import importlib.util, random, sys
    spec = importlib.util.spec_from_file_location("judge_cache", sys.argv[3])  # stdlib only: starts in ms
    module = sys.modules["judge_cache"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cache, rng = module.JudgeCache(sys.argv[1]), random.Random(int(sys.argv[2]))
    print("ready", flush=True)
    while True:
        k = rng.randrange(40)
        cache.put(f"{k:02x}" * 32, {"raw_reply": f"Score: {k % 5 + 1}", "pad": "x" * rng.randrange(1, 400_000)})
""")


def test_writers_killed_at_random_moments_never_leave_a_served_partial_entry(tmp_path: Path) -> None:
    import random

    from lmms_agentic.judges import cache as cache_module

    root = tmp_path / "cache"
    rng = random.Random(11)
    for round_ in range(12):
        with subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(round_), cache_module.__file__],
                              stdout=subprocess.PIPE, text=True) as writer:
            assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.02, 0.15))
            writer.send_signal(signal.SIGKILL)
            writer.wait(timeout=30)
    cache = JudgeCache(root)
    keys = list(cache.keys())
    assert len(keys) > 5
    for key in keys:
        entry = cache.get(key)
        assert entry is not None and entry["raw_reply"] == f"Score: {int(key[:2], 16) % 5 + 1}"
    assert cache.stats.corrupt == 0
    leftovers = list(root.rglob(".tmp-*"))  # the killed writes: ignored, never read as entries
    print(f"{len(leftovers)} interrupted writes left temporary files; {len(keys)} complete entries")
    assert {cache.path(k) for k in keys}.isdisjoint(leftovers)
    entries = [p for p in root.glob("??/*.json") if not p.name.startswith(".")]
    assert len(keys) == len(entries)  # every entry file on disk is complete and verified


# ------------------------------------------------------------------ slow: the real CLI, interrupted

class Judge:
    """A loopback judge that answers from a hash of the prompt, remembers what it answered, and can hold every
    request after the first ``hold_after`` answers (so a run can be interrupted while nothing is in transit)."""

    def __init__(self) -> None:
        self.answered: set[str] = set()
        self.hold_after: int | None = None
        self.held = 0
        self.release = threading.Event()
        self._lock = threading.Lock()
        self.server = ScriptedJudgeServer(self.script)

    @staticmethod
    def body(call: ScriptedCall) -> str:
        return json.dumps(call.body, sort_keys=True)

    def script(self, call: ScriptedCall) -> ScriptedReply:
        import hashlib

        with self._lock:
            hold = self.hold_after is not None and len(self.answered) >= self.hold_after
            if hold:
                self.held += 1
        if hold:
            self.release.wait(120)
        with self._lock:
            self.answered.add(self.body(call))
        digest = hashlib.sha256(call.prompt.encode()).digest()
        return ScriptedReply(f"{{'Score': {digest[0] % 11 / 10}}}")

    def hold(self, after: int) -> None:
        self.release.clear()
        self.hold_after, self.held = after, 0

    def open(self) -> None:
        self.hold_after = None
        self.release.set()


@pytest.fixture
def judge() -> Iterator[Judge]:
    j = Judge()
    j.server.start()
    yield j
    j.open()
    j.server.stop()


def _command(output: Path) -> list[str]:
    return [str(Path(sys.executable).parent / "lmms-eval"), "--model", "agentic_scripted", "--tasks", "agentx",
            "--output_path", str(output), "--log_samples"]


def _env(judge: Judge, cache: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
            "LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": judge.server.base_url,
            "LMMS_AGENTIC_JUDGE_MODEL": "judge-resume-2025-01-01", "LMMS_AGENTIC_JUDGE_CACHE": str(cache),
            **(extra or {})}


def _run(judge: Judge, cache: Path, output: Path, extra: dict[str, str] | None = None) -> CliRun:
    done = subprocess.run(_command(output), env=_env(judge, cache, extra), capture_output=True, text=True,
                          timeout=900, check=False)
    run = CliRun(done.returncode, done.stdout + done.stderr, output)
    run.assert_ok()
    return run


def _results(run: CliRun) -> str:
    return json.dumps(run.results["results"], sort_keys=True)


@pytest.fixture
def reference(judge: Judge, tmp_path: Path) -> str:
    return _results(_run(judge, tmp_path / "reference-cache", tmp_path / "reference"))


def _interrupt(judge: Judge, cache: Path, output: Path, sig: signal.Signals, after: int) -> subprocess.Popen[str]:
    """Start a run, let ``after`` judge requests be answered, hold the rest, and send ``sig`` once every answer has
    had time to be stored."""
    judge.hold(after)
    output.mkdir(parents=True, exist_ok=True)
    with (output.parent / f"{output.name}.log").open("w") as log:  # a pipe nobody reads could fill and block it
        process = subprocess.Popen(_command(output), env=_env(judge, cache), stdout=log, stderr=subprocess.STDOUT,
                                   text=True)
    deadline = time.monotonic() + 600
    while judge.held == 0:
        assert process.poll() is None, "the run ended before it was interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)  # answers received before the hold are written to the cache by now
    process.send_signal(sig)
    return process


def _resume(judge: Judge, cache: Path, output: Path, answered_before: set[str]) -> tuple[CliRun, list[str]]:
    judge.open()
    start = judge.server.request_count
    run = _run(judge, cache, output)
    resent = [b for b in (Judge.body(c) for c in judge.server.calls[start:]) if b in answered_before]
    return run, resent


@pytest.mark.reliability_slow
@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_an_interrupted_judged_run_resumes_without_repeating_a_request(judge: Judge, reference: str, tmp_path: Path,
                                                                        sig: signal.Signals) -> None:
    cache = tmp_path / "cache"
    judge.answered.clear()
    process = _interrupt(judge, cache, tmp_path / "interrupted", sig, after=30)
    if sig == signal.SIGINT:  # Ctrl-C: requests in flight finish (and are stored), the queue is dropped
        time.sleep(1.0)
        judge.open()
    process.wait(timeout=120)
    assert process.returncode != 0
    answered_before = set(judge.answered)
    assert 30 <= len(answered_before) < 87 and len(JudgeCache(cache)) == len(answered_before)
    run, resent = _resume(judge, cache, tmp_path / "resumed", answered_before)
    assert resent == []  # no stored answer was asked for again
    assert _results(run) == reference


KILL_IN_WRITE = textwrap.dedent("""
    # test hook: SIGKILL this process inside its N-th judge-cache write, after half of the entry is on disk
    # (the judge client writes from several threads: the lock makes "N-th" exact and stops the others meanwhile)
    import os, signal, threading
    _root, _at = os.environ.get("LMMS_AGENTIC_JUDGE_CACHE", ""), int(os.environ.get("KILL_AT_CACHE_WRITE", "0"))
    if _root and _at:
        _replace, _seen, _lock = os.replace, [0], threading.Lock()

        def replace(src, dst, *args, **kwargs):
            if not (str(dst).startswith(_root) and str(dst).endswith(".json")):
                return _replace(src, dst, *args, **kwargs)
            with _lock:
                _seen[0] += 1
                if _seen[0] == _at:
                    with open(src, "r+b") as handle:
                        handle.truncate(os.path.getsize(src) // 2)
                    os.kill(os.getpid(), signal.SIGKILL)
                return _replace(src, dst, *args, **kwargs)

        os.replace = replace
""")


@pytest.mark.reliability_slow
@pytest.mark.e2e
def test_a_run_killed_inside_a_cache_write_leaves_no_partial_entry(judge: Judge, reference: str,
                                                                   tmp_path: Path) -> None:
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILL_IN_WRITE)
    cache = tmp_path / "cache"
    judge.answered.clear()
    pythonpath = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(_command(tmp_path / "killed"), env=_env(judge, cache, {
        "PYTHONPATH": pythonpath, "KILL_AT_CACHE_WRITE": "25"}), capture_output=True, text=True, timeout=900,
        check=False)
    assert done.returncode == -signal.SIGKILL, done.stdout[-2000:] + done.stderr[-2000:]
    stored = JudgeCache(cache)
    keys = list(stored.keys())
    assert len(keys) == 24 and all(stored.get(k) is not None for k in keys) and stored.stats.corrupt == 0
    partial = list(cache.rglob(".tmp-*"))
    # the interrupted write, never renamed into place (other judge threads may have had a write of their own open)
    assert partial and any(p.stat().st_size > 0 for p in partial), partial
    answered_before = set(judge.answered)
    run, resent = _resume(judge, cache, tmp_path / "resumed", answered_before)
    # only answers that were never stored are asked for again: the one whose write was interrupted, and any other
    # answer still on its way to the cache when the process died (the client judges an item's requests concurrently)
    lost = len(answered_before) - 24
    assert 1 <= len(set(resent)) <= lost, f"{len(resent)} resent ({len(set(resent))} distinct), {lost} never stored"
    assert _results(run) == reference
    assert "corrupt entry" not in run.log


