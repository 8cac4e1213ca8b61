"""Child side of the code sandbox (`sandbox.py`): run as a script, never imported by the plugin.

Under bubblewrap it runs as ``python -I -S -B /sandbox/lib/sandbox_worker.py --site /sandbox/site`` (the synthetic
site folder is its only third-party path); with the unsafe opt-in as ``python -I sandbox_worker.py`` on the host.
``--light`` starts a Calculator-only worker (standard library only, no warm-up).
Lifecycle of one worker process (one job, then it exits, so no state leaks between calls):
1. (not ``--light``) import sympy, numpy and matplotlib (Agg) and render a throw-away figure (fonts and caches
   load now); print ``ready``;
2. read one JSON job line from stdin: ``{"mode": "solver"|"plotter"|"calculator", "code", "workdir", "cpu_s",
   "mem_bytes", "read_roots", "audit_hook"}``;
3. lower its own resource limits (CPU seconds, address space, file size, open files, processes, no core file),
   `chdir` into the working folder and install a PEP 578 audit hook (network, processes, native code, signals,
   files outside the working folder).  The hook is an extra layer only: code in this process can tamper with it,
   so the containment is the OS sandbox around the process (`isolation.py`);
4. run the code (fds 1 and 2 point to an unnamed capture file, whose start is prepended to the output) and write
   one JSON line to the private duplicate of the stdout it inherited: ``{"ok", "output", "error", "plot_png_b64"}``
   (data only, no paths; the parent validates it).
"""

from __future__ import annotations

import ast
import base64
import contextlib
import importlib
import importlib.util
import io
import json
import os
import re
import resource
import sys
import tempfile
import textwrap
import traceback
from types import ModuleType
from typing import Any, BinaryIO

LIGHT = "--light" in sys.argv  # a Calculator-only worker: standard library only, starts in tens of milliseconds
if "--site" in sys.argv:
    sys.path.insert(0, sys.argv[sys.argv.index("--site") + 1])

plt: Any = None
sympy: Any = None
Figure: Any = None
if not LIGHT:
    import matplotlib

    matplotlib.use("Agg")
    plt = importlib.import_module("matplotlib.pyplot")
    Figure = importlib.import_module("matplotlib.figure").Figure
    importlib.import_module("numpy")
    sympy = importlib.import_module("sympy")

MAX_OUTPUT = 4096
MAX_SIDE_PX = 4000
DPI = 100
NPROC = 16
_BLOCKED_PREFIXES = ("socket.", "subprocess.", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec",
                     "os.system", "os.kill", "os.killpg", "os.putenv", "os.unsetenv", "ctypes.", "pty.", "signal.",
                     "_posixsubprocess", "sys._getframe", "winreg.", "webbrowser.", "ftplib.", "smtplib.",
                     "http.client.", "urllib.", "os.setuid", "os.setgid", "resource.setrlimit", "sys.addaudithook")
_PATH_EVENTS = {"open", "os.listdir", "os.scandir", "os.chdir", "os.mkdir", "os.remove", "os.rmdir", "os.rename",
                "os.replace", "os.link", "os.symlink", "os.truncate", "os.chmod", "os.chown", "os.utime", "glob.glob",
                "shutil.rmtree", "shutil.copyfile", "shutil.move", "os.walk"}
_WRITE_EVENTS = _PATH_EVENTS - {"open", "os.listdir", "os.scandir", "os.chdir", "glob.glob", "os.walk"}


def _load_calculator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agentx_calculator",
                                                  os.path.join(os.path.dirname(__file__), "calculator.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


calculator = _load_calculator()


def _warm_up() -> None:
    figure = plt.figure(figsize=(1, 1))
    plt.plot([0, 1], [0, 1])
    plt.title("x")
    figure.canvas.draw()
    plt.close("all")
    sympy.solve(sympy.Symbol("x") - 1)


def _limit(cpu_s: int, mem_bytes: int) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (spent + cpu_s, spent + cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NPROC, (NPROC, NPROC))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _install_hook(workdir: str, read_roots: list[str]) -> None:
    work = os.path.realpath(workdir)
    roots = [os.path.realpath(root) for root in read_roots]

    def inside(path: str, base: str) -> bool:
        return path == base or path.startswith(base.rstrip(os.sep) + os.sep)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith(_BLOCKED_PREFIXES):
            raise PermissionError(f"sandbox: {event} is not allowed")
        if event not in _PATH_EVENTS or not args:
            return
        target = args[0]
        if isinstance(target, int) or target is None:
            return
        if isinstance(target, bytes):
            target = target.decode(errors="replace")
        path = os.path.realpath(os.path.join(work, os.fspath(target)))
        if inside(path, work):
            return
        writing = event in _WRITE_EVENTS or (event == "open" and len(args) > 1 and isinstance(args[1], str)
                                             and any(c in args[1] for c in "wax+"))
        if event == "open" and len(args) > 2 and isinstance(args[2], int) and args[2] & (os.O_WRONLY | os.O_RDWR):
            writing = True
        if not writing and any(inside(path, root) for root in roots):
            return
        raise PermissionError(f"sandbox: {event} of {target!r} is outside the sandbox folder")

    sys.addaudithook(hook)


def _strip_fence(code: str) -> str:
    """The code inside the first markdown fence, as GTA's Solver and Plot take it (also after another language tag,
    e.g. ```py), dedented; the text as given without a fence."""
    if "```python" in code:
        code = code.split("```python", 1)[1].split("```", 1)[0]
    elif "```" in code:
        code = code.split("```", 2)[1]
        tag, newline, rest = code.partition("\n")
        if newline and re.fullmatch(r"[A-Za-z][\w+-]*", tag):
            code = rest
    return textwrap.dedent(code).strip()


def _run(mode: str, code: str) -> tuple[str, Any]:
    """The captured output (with, for Solver, the solution or the last expression's value) and the value of
    `solution()` when the code defines it (GTA's Solver and Plot call it), else of the last expression."""
    tree = ast.parse(_strip_fence(code), mode="exec")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    assert last is None or isinstance(last, ast.Expr)
    namespace: dict[str, Any] = {"__name__": "__main__", "sympy": sympy, "plt": plt}
    if mode == "solver":  # GTA's Solver runs its code after `from sympy import symbols, Eq, solve`
        namespace.update(symbols=sympy.symbols, Eq=sympy.Eq, solve=sympy.solve)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        exec(compile(tree, "<tool code>", "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), "<tool code>", "eval"), namespace) if last else None
        if callable(namespace.get("solution")):
            value = namespace["solution"]()
    output = buffer.getvalue()
    if mode == "solver" and value is not None:
        output = f"{output}{value}" if not output else f"{output.rstrip()}\n{value}"
    return output.strip()[:MAX_OUTPUT], value


def _plot(returned: Any) -> str:
    """The figure `solution()` returned, else the last figure, as base64 PNG at `DPI`; a figure over `MAX_SIDE_PX`
    a side is refused."""
    if isinstance(returned, Figure):
        figure = returned
    elif plt.get_fignums():
        figure = plt.figure(plt.get_fignums()[-1])
    else:
        raise ValueError("the code drew no figure (define solution() returning a matplotlib figure, or draw with "
                         "matplotlib.pyplot)")
    width, height = (float(v) * DPI for v in figure.get_size_inches())
    if not (0 < width <= MAX_SIDE_PX and 0 < height <= MAX_SIDE_PX):
        raise ValueError(f"the figure is {width:.0f}x{height:.0f} px at {DPI} dpi; the limit is {MAX_SIDE_PX} px "
                         f"a side (use a smaller figsize)")
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=DPI, format="png", metadata={"Software": None})
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _execute(job: dict[str, Any], result: dict[str, Any]) -> None:
    mode = str(job["mode"])
    if mode == "calculator":
        try:
            result["output"] = calculator.evaluate(str(job["code"]))[:MAX_OUTPUT]
        except calculator.CalculatorError as err:
            result.update(ok=False, error=str(err)[:MAX_OUTPUT])
        return
    if LIGHT:
        raise ValueError(f"a calculator-only worker cannot run mode {mode!r}")
    result["output"], value = _run(mode, str(job["code"]))
    if mode == "plotter":
        try:
            result["plot_png_b64"] = _plot(value)
        except ValueError as err:
            result.update(ok=False, error=str(err))


def _capture_descriptors(capture: BinaryIO) -> int:
    """Move the result channel off fd 1: its private fd; fds 1 and 2 now write to `capture`, so output of child
    processes or of writes to fd 1 cannot garble the result line."""
    result_fd = os.dup(1)
    os.dup2(capture.fileno(), 1)
    os.dup2(capture.fileno(), 2)
    return result_fd


def _captured(capture: BinaryIO) -> str:
    capture.seek(0)
    return capture.read(MAX_OUTPUT).decode(errors="replace").strip()


def main() -> None:
    out = sys.stdout
    if not LIGHT:
        _warm_up()
    out.write("ready\n")
    out.flush()
    job = json.loads(sys.stdin.readline())
    os.chdir(job["workdir"])
    with tempfile.TemporaryFile(dir=job["workdir"]) as capture:
        _respond(job, _capture_descriptors(capture), capture)


def _respond(job: dict[str, Any], result_fd: int, capture: BinaryIO) -> None:
    _limit(int(job["cpu_s"]), int(job["mem_bytes"]))
    if job.get("audit_hook", True):
        _install_hook(job["workdir"], list(job["read_roots"]))
    result: dict[str, Any] = {"ok": True, "output": "", "error": None, "plot_png_b64": None}
    try:
        _execute(job, result)
    except MemoryError:
        result.update(ok=False, error=f"out of memory (limit {int(job['mem_bytes']) >> 20} MiB)", plot_png_b64=None)
    except PermissionError as err:
        result.update(ok=False, error=f"blocked: {err}"[:MAX_OUTPUT], plot_png_b64=None)
    except BaseException as err:
        frames = traceback.extract_tb(err.__traceback__)
        line = next((f.lineno for f in reversed(frames) if f.filename == "<tool code>"), None)
        where = f" (line {line})" if line else ""
        result.update(ok=False, error=f"{err.__class__.__name__}{where}: {err}"[:MAX_OUTPUT], plot_png_b64=None)
    with contextlib.suppress(OSError, ValueError):
        extra = _captured(capture)
        if extra and job["mode"] != "calculator":
            result["output"] = f"{extra}\n{result['output']}".strip()[:MAX_OUTPUT]
    data = (json.dumps(result) + "\n").encode()
    while data:
        data = data[os.write(result_fd, data):]
    os._exit(0)


if __name__ == "__main__":
    main()
