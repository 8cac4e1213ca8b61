"""Subprocess sandbox for the code-running tools (Calculator, Solver, CodePlotter): parent side.

Mechanism: each call runs in a fresh worker process (`sandbox_worker.py`) inside bubblewrap (`isolation.py`): its
own user, pid, network, ipc, uts and cgroup namespaces, no network interface, an empty root filesystem showing only
read-only `/usr`, the interpreter's standard library and the worker's own third-party packages, an empty writable
`/work` and a private `/tmp`; no host process, environment variable, repository file, package data or home folder
is visible.  A root parent starts bwrap as uid 65534 (unprivileged user namespace).  In the worker: `RLIMIT_CPU`,
`RLIMIT_AS`, `RLIMIT_FSIZE`, `RLIMIT_NOFILE`, `RLIMIT_NPROC`, `RLIMIT_CORE`; the parent's wall-clock limit kills
bwrap's process group and with it the whole pid namespace (a daemon the code started dies too).  The audit hook in
the worker is an extra layer only, never relied on.
The result is data: one JSON line read with a byte cap and a deadline, validated (types, text caps, the PNG's
header and pixel count checked before it is decoded); it names no paths.
Where bubblewrap is missing or cannot start, the tools are unavailable (`SandboxResult.unavailable`, a warning
once); `LMMS_AGENTIC_AGENTX_UNSAFE_NO_SANDBOX=1` runs them unisolated instead (audit hook, rlimits and a network
namespace where `unshare` works), loudly.  Workers are started ahead of time with sympy and matplotlib imported;
Calculator's workers are standard-library only (`--light`), so a drained pool refills in tens of milliseconds.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import json
import logging
import os
import queue
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from PIL import Image

from lmms_agentic.adapters.agentic.tool_io import Limits
from lmms_agentic.tasks.agentx.tools import isolation

WORKER = Path(__file__).with_name("sandbox_worker.py")
ENV_UNSAFE = "LMMS_AGENTIC_AGENTX_UNSAFE_NO_SANDBOX"
READY_TIMEOUT_S = 120.0
MAX_RESULT_BYTES = 16 << 20
MAX_OUTPUT = 4096
MAX_PLOT_SIDE = 4096
_PNG = b"\x89PNG\r\n\x1a\n"
log = logging.getLogger(__name__)
_warned: set[str] = set()


@dataclass(frozen=True)
class SandboxResult:
    ok: bool
    output: str
    error: str | None
    plot_png: bytes | None = None
    unavailable: bool = False
    plot: Image.Image | None = None
    """`plot_png` decoded (RGB), once, while it was validated."""


@cache
def _namespace_prefix() -> tuple[str, ...]:
    """Unsafe opt-in only: the prefix giving the worker its own (empty) network namespace, or () where none works."""
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


def _unsafe_roots() -> list[str]:
    import matplotlib

    return sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.__file__),
                   os.path.dirname(os.path.dirname(matplotlib.__file__))})


class _Worker:
    """One started worker process and its own empty working folder."""

    def __init__(self, isolated: bool, light: bool) -> None:
        self.workdir = isolation.make_workdir()
        if isolated:
            self.process = isolation.popen(self.workdir, isolation.worker_argv(light), stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                           env={"PATH": "/usr/bin:/bin"}, cwd=self.workdir)
        else:
            env = {**isolation.ENVIRONMENT, "HOME": self.workdir, "MPLCONFIGDIR": os.path.join(self.workdir, ".mpl")}
            argv = [*_namespace_prefix(), sys.executable, "-I", str(WORKER), *(["--light"] if light else [])]
            self.process = subprocess.Popen(argv, env=env,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                            cwd=self.workdir, start_new_session=True, close_fds=True)

    def kill(self) -> None:
        """Kill the process group (bwrap, and through --die-with-parent its pid namespace); remove the folder."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _read_line(fd: int, deadline: float, cap: int) -> tuple[bytes | None, str]:
    """One line from `fd` (without its newline) before `deadline`, at most `cap` bytes: (line, "") or (None, why)."""
    buffer = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, "timeout"
        readable, _, _ = select.select([fd], [], [], left)
        if not readable:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None, "eof"
        buffer += chunk
        end = buffer.find(b"\n")
        if end >= 0:
            return bytes(buffer[:end]), ""
        if len(buffer) > cap:
            return None, "too large"


def _decode_png(png: bytes) -> tuple[Image.Image | None, str | None]:
    """(the RGB image, None) for a PNG of at most `MAX_PLOT_SIDE` px a side (size read from its header before any
    pixel is decoded), else (None, why it is refused)."""
    if not png.startswith(_PNG) or png[12:16] != b"IHDR" or len(png) < 24:
        return None, "the plot is not a PNG image"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk, always first
    if width > MAX_PLOT_SIDE or height > MAX_PLOT_SIDE:
        return None, f"the plot is {width}x{height} px; the limit is {MAX_PLOT_SIDE} px a side"
    try:
        with Image.open(io.BytesIO(png), formats=["PNG"]) as image:
            if image.size != (width, height):
                return None, "the plot's PNG header is inconsistent"
            return image.convert("RGB"), None
    except Exception as err:  # any decoder failure: a broken or hostile image is refused, never raised
        return None, f"the plot is not a readable PNG ({err.__class__.__name__})"


def parse_result(line: bytes) -> SandboxResult:
    """The worker's JSON result line, validated; anything else is a failed call with a reason."""
    try:
        data = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return SandboxResult(False, "", "the sandbox returned a malformed result")
    if not isinstance(data, dict) or not isinstance(data.get("ok"), bool) \
            or not isinstance(data.get("output", ""), str) or not isinstance(data.get("error") or "", str) \
            or not isinstance(data.get("plot_png_b64") or "", str):
        return SandboxResult(False, "", "the sandbox returned a malformed result")
    output, error = str(data.get("output") or "")[:MAX_OUTPUT], data.get("error")
    error = None if error is None else str(error)[:MAX_OUTPUT]
    png = plot = None
    if data.get("plot_png_b64"):
        try:
            png = base64.b64decode(data["plot_png_b64"], validate=True)
        except (binascii.Error, ValueError):
            return SandboxResult(False, output, "the plot is not valid base64")
        plot, problem = _decode_png(png)
        if problem is not None:
            return SandboxResult(False, output, problem)
    return SandboxResult(bool(data["ok"]), output, error, png, plot=plot)


def _death_reason(returncode: int, limits: Limits) -> str:
    signum = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else 0
    if signum == signal.SIGXCPU:
        return f"CPU time limit of {limits.cpu_s} s exceeded; the code was stopped"
    if signum == signal.SIGSEGV:
        return "the code crashed (segmentation fault)"
    return f"the code ended without a result (exit status {returncode})"


def unavailable_text(reason: str) -> str:
    return f"unavailable: no sandbox ({reason}; {isolation.INSTALL_HINT})"


def _kill_waiting(ready: Mapping[bool, queue.Queue[_Worker]]) -> None:
    """Kill the pre-started workers no call took; each one's folder is removed with it."""
    for waiting in ready.values():
        while True:
            try:
                waiting.get_nowait().kill()
            except queue.Empty:
                break


class Sandbox:
    """A pool of pre-started sandbox workers; `run` is thread-safe (one worker per call).  `audit_hook=False` is for
    tests that check the OS layer alone."""

    def __init__(self, warm: int = 2, audit_hook: bool = True) -> None:
        self.audit_hook = audit_hook
        self.unsafe = os.environ.get(ENV_UNSAFE, "").strip() == "1"
        self.reason = None if self.unsafe else isolation.probe()
        self.isolated = not self.unsafe and self.reason is None
        if self.unsafe:
            log.warning("%s=1: Solver, CodePlotter and Calculator run model-written code WITHOUT OS isolation "
                        "(audit hook and rlimits only); do not use this with untrusted models", ENV_UNSAFE)
        elif self.reason is not None and self.reason not in _warned:
            _warned.add(self.reason)
            log.warning("the code tools are unavailable: %s", unavailable_text(self.reason))
        self.warm = max(0, warm) if self.isolated or self.unsafe else 0
        self._ready: dict[bool, queue.Queue[_Worker]] = {False: queue.Queue(), True: queue.Queue()}
        self._closed = False
        # the waiting workers go when the sandbox does, closed or not (a run that never calls close, or exits):
        # their processes and working folders must not outlive it
        self._release = weakref.finalize(self, _kill_waiting, self._ready)
        for light in (False, True):
            for _ in range(self.warm):
                self._ready[light].put(_Worker(self.isolated, light))

    def available(self) -> bool:
        return self.isolated or self.unsafe

    def describe(self) -> dict[str, Any]:
        """The containment in force on this machine (for the results file)."""
        out: dict[str, Any] = {"mechanism": "bubblewrap" if self.isolated else None, "isolated": self.isolated,
                               "unsafe_opt_in": self.unsafe, "reason": self.reason,
                               "rlimits": ["RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC",
                                           "RLIMIT_CORE"],
                               "audit_hook": "extra layer" if self.audit_hook else False,
                               "fresh_process_per_call": True, "warm_workers": self.warm}
        if self.isolated:
            view = isolation.layout()
            out.update(uid=view.uid, namespaces=["user", "pid", "net", "ipc", "uts", "cgroup", "mount"],
                       visible_read_only=sorted({dest for _, dest in view.binds if not dest.startswith(
                           isolation.SANDBOX_SITE + "/")} | {isolation.SANDBOX_SITE}),
                       writable=[isolation.WORK, "/tmp (private tmpfs)"], hidden=list(view.hidden))
        elif self.unsafe:
            out.update(network_namespace=" ".join(_namespace_prefix()) or None, nproc_enforced=os.geteuid() != 0)
        return out

    def _take(self, light: bool) -> _Worker:
        try:
            worker = self._ready[light].get_nowait()
        except queue.Empty:
            worker = _Worker(self.isolated, light)
        if self.warm and not self._closed:
            self._ready[light].put(_Worker(self.isolated, light))
        return worker

    def run(self, mode: str, code: str, limits: Limits) -> SandboxResult:
        """Run `code` ("solver": its output; "plotter": the last figure as PNG; "calculator": the expression's
        value) under `limits`."""
        if not self.available():
            return SandboxResult(False, "", unavailable_text(self.reason or "unknown"), unavailable=True)
        worker = self._take(light=mode == "calculator")
        try:
            return self._exchange(worker, mode, code, limits)
        finally:
            worker.kill()

    def _exchange(self, worker: _Worker, mode: str, code: str, limits: Limits) -> SandboxResult:
        process = worker.process
        assert process.stdin is not None and process.stdout is not None
        fd = process.stdout.fileno()
        ready, _ = _read_line(fd, time.monotonic() + READY_TIMEOUT_S, 64)
        if ready != b"ready":
            return SandboxResult(False, "", "the sandbox could not start (worker not ready)")
        workdir = isolation.WORK if self.isolated else worker.workdir
        roots = ["/usr", "/sandbox", "/tmp", *(dest for _, dest in isolation.layout().binds)] if self.isolated \
            else _unsafe_roots()
        job = {"mode": mode, "code": code, "workdir": workdir, "cpu_s": limits.cpu_s, "mem_bytes": limits.mem_mb << 20,
               "read_roots": roots, "audit_hook": self.audit_hook}
        try:
            process.stdin.write(json.dumps(job).encode() + b"\n")
            process.stdin.flush()
        except OSError:
            return SandboxResult(False, "", "the sandbox worker died before the call")
        deadline = time.monotonic() + limits.wall_s
        line, why = _read_line(fd, deadline, MAX_RESULT_BYTES)
        if line is not None:
            return parse_result(line)
        if why == "timeout":
            return SandboxResult(False, "", f"time limit of {limits.wall_s:g} s exceeded; the code was stopped")
        if why == "too large":
            return SandboxResult(False, "", f"the result exceeded {MAX_RESULT_BYTES >> 20} MiB; the code was stopped")
        try:
            returncode = process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return SandboxResult(False, "", "the code closed its output without a result; it was stopped")
        return SandboxResult(False, "", _death_reason(returncode, limits))

    def close(self) -> None:
        self._closed = True
        self._release()
