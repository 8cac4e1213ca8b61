"""Run the lmms-eval CLI so that a failed evaluation fails: `python -m lmms_agentic run -- <lmms-eval arguments>`.

lmms-eval exits 0 when an evaluation fails (it logs "Error during evaluation" and writes no results file). This
wrapper runs the same command, shows its output as it comes and keeps a copy in `<output_path>/lmms_eval.log`, then
checks what a script should check — the exit code, the error line in the log, a results file written by this run,
and every requested task (or group) in it — and exits 1 with one line naming what went wrong. The demo uses it too.
A log copy that cannot be written (read-only folder, full disk) is one line too; the error lines are also kept in
memory, so a log cut short does not hide an evaluation error.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

ERROR_MARK = "Error during evaluation"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class RunFailed(RuntimeError):
    """The evaluation did not produce the results it was asked for; the message says why, in one line."""


def _option(args: Sequence[str], name: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(f"{name}="):
            return arg.split("=", 1)[1]
    return None


def newest_results(folder: Path, since: float = 0.0) -> Path | None:
    found = [p for p in folder.rglob("*_results.json") if p.stat().st_mtime >= since]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def check(output: Path, log_text: str, returncode: int, tasks: Sequence[str], started: float) -> Path:
    """The results file of a finished run, or `RunFailed` with the first problem found."""
    if returncode != 0:
        raise RunFailed(f"lmms-eval exited with status {returncode}; see {output / 'lmms_eval.log'}")
    errors = [_ANSI.sub("", line) for line in log_text.splitlines() if ERROR_MARK in line]
    if errors:
        raise RunFailed(errors[-1][errors[-1].index(ERROR_MARK):][:800].strip())
    results = newest_results(output, since=started)
    if results is None:
        raise RunFailed(f"lmms-eval wrote no *_results.json under {output}; see {output / 'lmms_eval.log'}")
    try:
        reported = json.loads(results.read_text(encoding="utf-8")).get("results", {})
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunFailed(f"{results}: unreadable results file ({exc}); the run was cut short (full disk?)") from exc
    missing = [task for task in tasks if "*" not in task and task not in reported]
    if missing:
        raise RunFailed(f"{results} has no results for {', '.join(missing)}")
    return results


def run(args: Sequence[str], *, env: Mapping[str, str] | None = None, echo: bool = True,
        log_name: str = "lmms_eval.log") -> Path:
    """Run `lmms-eval ARGS` (which must include --output_path) and return its checked results file."""
    output_arg = _option(args, "--output_path")
    if output_arg is None:
        raise RunFailed("pass --output_path: the results file is how a run is checked")
    output = Path(output_arg)
    tasks = [t for t in (_option(args, "--tasks") or "").split(",") if t]
    command = [sys.executable, "-m", "lmms_eval", *args]
    started = time.time() - 1
    log_file = output / log_name
    try:
        output.mkdir(parents=True, exist_ok=True)
        log = log_file.open("w", encoding="utf-8")
    except OSError as exc:
        raise RunFailed(f"cannot write the run log {log_file} ({exc.strerror or exc}); pass a writable "
                        "--output_path") from exc
    marked: list[str] = []  # the error lines, kept here too: the log copy may be cut short (disk full)
    log_error: OSError | None = None
    with subprocess.Popen(command, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace") as process:
        assert process.stdout is not None
        for line in process.stdout:
            if ERROR_MARK in line:
                marked.append(line)
            if log_error is None:
                try:
                    log.write(line)
                except OSError as exc:
                    log_error = exc
            if echo:
                sys.stdout.write(line)
        returncode = process.wait()
    try:
        log.close()
    except OSError as exc:  # the buffered tail could not be written
        log_error = log_error or exc
    cut = (f" (the log copy {log_file} is incomplete: {log_error.strerror or log_error}; free space on that "
           "disk)") if log_error is not None else ""
    try:
        results = check(output, "".join(marked), returncode, tasks, started)
    except RunFailed as exc:
        raise RunFailed(f"{exc}{cut}") from exc
    if cut:
        print(f"lmms-agentic run: warning: {cut.strip(' ()')}", file=sys.stderr)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--":
        args = args[1:]
    try:
        results = run(args)
    except RunFailed as exc:
        print(f"lmms-agentic run: FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"lmms-agentic run: results in {results}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
