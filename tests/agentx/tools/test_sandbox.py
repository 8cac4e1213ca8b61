"""Escapes from the code sandbox are contained, each ending in a clear observation within its time limit."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from lmms_agentic.tasks.agentx.tools.sandbox import Limits, Sandbox

LIMITS = Limits(wall_s=6, cpu_s=2, mem_mb=1024)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    box = Sandbox(warm=2)
    yield box
    box.close()


@pytest.fixture
def listener() -> int:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


def _escape(tmp_path: Path, port: int) -> dict[str, tuple[str, str]]:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    return {
        "network": (f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)", "socket"),
        "read outside": (f"print(open({str(secret)!r}).read())", "outside the sandbox folder"),
        "write outside": (f"open({str(tmp_path / 'x')!r}, 'w').write('x')", "outside the sandbox folder"),
        "fork bomb": ("import os\nwhile True:\n    os.fork()", "os.fork is not allowed"),
        "subprocess": ("import subprocess\nsubprocess.run(['cat', '/etc/passwd'])", "not allowed"),
        "infinite loop": ("while True:\n    pass", "time limit"),  # CPU limit, or the wall limit under load
        "sleep": ("import time\ntime.sleep(60)", "time limit of 6 s"),
        "10 GB allocation": ("x = bytearray(10 * 1024 ** 3)", "out of memory"),
    }


@pytest.mark.parametrize("name", ["network", "read outside", "write outside", "fork bomb", "subprocess",
                                  "infinite loop", "sleep", "10 GB allocation"])
def test_escape_is_contained(sandbox: Sandbox, tmp_path: Path, listener: int, name: str) -> None:
    code, message = _escape(tmp_path, listener)[name]
    started = time.monotonic()
    result = sandbox.run("solver", code, LIMITS)
    assert not result.ok and message in (result.error or ""), result
    assert time.monotonic() - started < LIMITS.wall_s + 60  # generous: worker start-up on a loaded machine
    assert not (tmp_path / "x").exists()


def test_sandbox_folder_is_writable_and_private(sandbox: Sandbox) -> None:
    result = sandbox.run("solver", "open('note.txt', 'w').write('hi')\nprint(open('note.txt').read())", LIMITS)
    assert result.ok and result.output == "hi"
    assert sandbox.describe()["audit_hook"] is True
