"""Child side of the code sandbox (`sandbox.py`): run as a script with `python -I`, never imported by the plugin.

Lifecycle of one worker process (one job, then it exits, so no state leaks between calls):
1. import sympy, numpy and matplotlib (Agg) and render a throw-away figure, so fonts and caches are loaded while the
   filesystem is still readable; print ``ready``;
2. read one JSON job line from stdin: ``{"mode": "solver"|"plotter", "code", "workdir", "cpu_s", "mem_bytes",
   "read_roots"}``;
3. lower its own resource limits (address space, CPU seconds, file size, open files, processes), `chdir` into the
   job's temporary folder and install an audit hook (PEP 578) that refuses network, process creation, native code
   loading, signals and any file access outside the temporary folder (the interpreter's own installation stays
   readable, for lazy imports and fonts);
4. run the code and write one JSON result line to the stdout it inherited: ``{"ok", "output", "error", "plot"}``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import resource
import sys
import traceback
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy  # noqa: F401
import sympy

MAX_OUTPUT = 4096
_BLOCKED_PREFIXES = ("socket.", "subprocess.", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec",
                     "os.system", "os.kill", "os.killpg", "os.putenv", "os.unsetenv", "ctypes.", "pty.", "signal.",
                     "_posixsubprocess", "sys._getframe", "winreg.", "webbrowser.", "ftplib.", "smtplib.",
                     "http.client.", "urllib.", "os.setuid", "os.setgid", "resource.setrlimit", "sys.addaudithook")
_PATH_EVENTS = {"open": 0, "os.listdir": 0, "os.scandir": 0, "os.chdir": 0, "os.mkdir": 0, "os.remove": 0,
                "os.rmdir": 0, "os.rename": 0, "os.replace": 0, "os.link": 0, "os.symlink": 0, "os.truncate": 0,
                "os.chmod": 0, "os.chown": 0, "os.utime": 0, "glob.glob": 0, "shutil.rmtree": 0, "shutil.copyfile": 0,
                "shutil.move": 0, "os.walk": 0}
_WRITE_EVENTS = frozenset(_PATH_EVENTS) - {"open", "os.listdir", "os.scandir", "os.chdir", "glob.glob", "os.walk"}


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
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
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
    text = code.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text


def _run(mode: str, code: str) -> tuple[str, str | None]:
    """(captured output, or the solution, or the last expression's value; an error line or None)."""
    tree = ast.parse(_strip_fence(code), mode="exec")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    assert last is None or isinstance(last, ast.Expr)
    namespace: dict[str, Any] = {"__name__": "__main__", "sympy": sympy, "plt": plt}
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        exec(compile(tree, "<tool code>", "exec"), namespace)
        value = eval(compile(ast.Expression(last.value), "<tool code>", "eval"), namespace) if last else None
        if mode == "solver" and callable(namespace.get("solution")):
            value = namespace["solution"]()
    output = buffer.getvalue()
    if mode == "solver" and value is not None:
        output = f"{output}{value}" if not output else f"{output.rstrip()}\n{value}"
    return output.strip()[:MAX_OUTPUT], None


def main() -> None:
    out = sys.stdout
    _warm_up()
    out.write("ready\n")
    out.flush()
    job = json.loads(sys.stdin.readline())
    os.chdir(job["workdir"])
    _limit(int(job["cpu_s"]), int(job["mem_bytes"]))
    _install_hook(job["workdir"], list(job["read_roots"]))
    result: dict[str, Any] = {"ok": True, "output": "", "error": None, "plot": None}
    try:
        result["output"], _ = _run(job["mode"], job["code"])
        if job["mode"] == "plotter":
            if not plt.get_fignums():
                result.update(ok=False, error="the code drew no figure (use matplotlib.pyplot)")
            else:
                plt.figure(plt.get_fignums()[-1]).savefig("plot.png", dpi=100, format="png",
                                                          metadata={"Software": None})
                result["plot"] = "plot.png"
    except MemoryError:
        result.update(ok=False, error=f"out of memory (limit {int(job['mem_bytes']) >> 20} MiB)")
    except PermissionError as err:
        result.update(ok=False, error=f"blocked: {err}")
    except BaseException as err:
        frames = traceback.extract_tb(err.__traceback__)
        line = next((f.lineno for f in reversed(frames) if f.filename == "<tool code>"), None)
        where = f" (line {line})" if line else ""
        result.update(ok=False, error=f"{err.__class__.__name__}{where}: {err}"[:MAX_OUTPUT])
    out.write(json.dumps(result) + "\n")
    out.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
