"""Subprocess sandbox for the code-running tools (Solver, CodePlotter): parent side.

Mechanism, and why: each call runs in a fresh `python -I` process (`sandbox_worker.py`) so nothing survives between
calls (deterministic) and a crash or kill cannot touch the evaluation.  Containment is layered because no single
portable mechanism covers everything without root or containers:
- **network**: the worker starts inside a new network namespace (`unshare -n`, or `unshare -rn` as an ordinary user)
  where it can be started, so there is no interface to reach; the audit hook refuses every `socket.*` event as well
  (the only layer where namespaces are unavailable; `describe()` says which applied);
- **files**: an audit hook (PEP 578) refuses any open/list/remove/rename outside the call's temporary folder; the
  Python installation stays readable (lazy imports, fonts), never writable; the folder is deleted after the call;
- **processes and native code**: the hook refuses fork/exec/spawn/subprocess/system/ctypes/signals, and
  `RLIMIT_NPROC` is 0 where the kernel enforces it (not for root);
- **CPU, memory, output**: `RLIMIT_CPU` (the call's CPU seconds), `RLIMIT_AS` (address space), `RLIMIT_FSIZE`,
  `RLIMIT_NOFILE`; a wall-clock limit kills the whole process group (sleeping code, a stuck worker);
- **environment**: a scrubbed one (no inherited variables, so no keys or proxies; fixed hash seed, one BLAS thread).
Workers are started ahead of time (`warm`) with sympy and matplotlib imported, so a call pays for its code only.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

WORKER = Path(__file__).with_name("sandbox_worker.py")
READY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Limits:
    """Per-call limits of one sandboxed tool."""

    wall_s: float = 10.0
    cpu_s: int = 5
    mem_mb: int = 1024


@dataclass(frozen=True)
class SandboxResult:
    ok: bool
    output: str
    error: str | None
    plot_png: bytes | None = None


@cache
def _namespace_prefix() -> tuple[str, ...]:
    """The command prefix that gives the worker its own (empty) network namespace, or () where none works."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    for prefix in ((unshare, "-n"), (unshare, "-rn")):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0:
                return prefix
        except (OSError, subprocess.SubprocessError):
            continue
    return ()


def _cache_dir() -> Path:
    folder = Path(tempfile.gettempdir()) / f"lmms_agentic_sandbox_mpl_{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def _read_roots() -> list[str]:
    import matplotlib

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__),
             os.path.dirname(os.path.dirname(matplotlib.__file__)), str(_cache_dir())}
    return sorted(roots)


def _environment() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(_cache_dir()), "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(_cache_dir()),
            "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [*_namespace_prefix(), sys.executable, "-I", str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=_environment(), cwd=str(_cache_dir()), start_new_session=True,
            close_fds=True, text=True)
        self.ready = threading.Event()
        self.failed = False
        threading.Thread(target=self._wait_ready, daemon=True, name="sandbox-ready").start()

    def _wait_ready(self) -> None:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        self.failed = line.strip() != "ready"
        self.ready.set()

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()


def _death_reason(returncode: int, limits: Limits) -> str:
    if returncode == -signal.SIGXCPU:
        return f"CPU time limit of {limits.cpu_s} s exceeded; the code was stopped"
    if returncode == -signal.SIGSEGV:
        return "the code crashed (segmentation fault)"
    return f"the code ended without a result (exit status {returncode})"


class Sandbox:
    """A pool of pre-started sandbox workers; `run` is thread-safe (one worker per call)."""

    def __init__(self, warm: int = 2) -> None:
        self.warm = max(0, warm)
        self._ready: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        for _ in range(self.warm):
            self._ready.put(_Worker())

    def describe(self) -> dict[str, Any]:
        """The containment mechanisms in force on this machine (for the results file)."""
        return {"network_namespace": " ".join(_namespace_prefix()) or None, "audit_hook": True,
                "rlimits": ["RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC"],
                "nproc_enforced": os.geteuid() != 0, "fresh_process_per_call": True, "warm_workers": self.warm}

    def _take(self) -> _Worker:
        try:
            worker = self._ready.get_nowait()
        except queue.Empty:
            worker = _Worker()
        if self.warm and not self._closed:
            self._ready.put(_Worker())
        return worker

    def run(self, mode: str, code: str, limits: Limits) -> SandboxResult:
        """Run `code` ("solver": its output; "plotter": the last figure as PNG) under `limits`."""
        worker = self._take()
        workdir = tempfile.mkdtemp(prefix="agentx_tool_")
        try:
            if not worker.ready.wait(READY_TIMEOUT_S) or worker.failed:
                return SandboxResult(False, "", "the sandbox could not start (worker not ready)")
            job = {"mode": mode, "code": code, "workdir": workdir, "cpu_s": limits.cpu_s,
                   "mem_bytes": limits.mem_mb << 20, "read_roots": _read_roots()}
            return self._exchange(worker, job, limits, workdir)
        finally:
            worker.kill()
            shutil.rmtree(workdir, ignore_errors=True)

    def _exchange(self, worker: _Worker, job: dict[str, Any], limits: Limits, workdir: str) -> SandboxResult:
        process = worker.process
        assert process.stdin is not None and process.stdout is not None
        reply: list[str] = []
        reader = threading.Thread(target=lambda: reply.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        try:
            process.stdin.write(json.dumps(job) + "\n")
            process.stdin.flush()
        except OSError:
            return SandboxResult(False, "", "the sandbox worker died before the call")
        started = time.monotonic()
        reader.start()
        reader.join(limits.wall_s)
        if reader.is_alive():
            worker.kill()
            return SandboxResult(False, "", f"time limit of {limits.wall_s:g} s exceeded; the code was stopped")
        line = reply[0] if reply else ""
        if not line.strip():
            process.wait(max(0.1, limits.wall_s - (time.monotonic() - started)))
            return SandboxResult(False, "", _death_reason(process.returncode or 0, limits))
        result = json.loads(line)
        png = None
        if result.get("plot"):
            png = (Path(workdir) / result["plot"]).read_bytes()
        return SandboxResult(bool(result["ok"]), str(result.get("output") or ""), result.get("error"), png)

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._ready.get_nowait().kill()
            except queue.Empty:
                return
