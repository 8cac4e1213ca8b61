"""The code sandbox's behaviour: calls, limits, the validated result channel, and what happens without bubblewrap
(the code tools are unavailable, or run unisolated under the explicit opt-in)."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from lmms_agentic.tasks.agentx.tools import isolation, local
from lmms_agentic.tasks.agentx.tools import sandbox as sandbox_module
from lmms_agentic.tasks.agentx.tools.local import SANDBOXED_TOOLS, ToolError, ToolUnavailable
from lmms_agentic.tasks.agentx.tools.sandbox import ENV_UNSAFE, Limits, Sandbox, parse_result

LIMITS = Limits(wall_s=8, cpu_s=2, mem_mb=1024)
SLACK_S = 60  # generous: worker start-up on a loaded 2-core machine


def _png(width: int, height: int) -> bytes:
    """A PNG whose header claims `width` x `height` (its pixel data is not needed to read the size)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0")) + chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    if isolation.probe() is not None:
        pytest.skip(f"no bubblewrap sandbox here: {isolation.probe()}")
    box = Sandbox(warm=2)
    yield box
    box.close()


def test_calls_and_the_writable_private_folder(sandbox: Sandbox) -> None:
    result = sandbox.run("solver", "open('note.txt', 'w').write('hi')\nprint(open('note.txt').read())", LIMITS)
    assert result.ok and result.output == "hi"
    assert sandbox.run("solver", "import os\nprint(os.listdir('.'))", LIMITS).output == "[]"  # fresh per call
    assert sandbox.run("calculator", "2**10", LIMITS).output == "1024"
    described = sandbox.describe()
    assert described["mechanism"] == "bubblewrap" and described["isolated"] and not described["unsafe_opt_in"]
    assert described["audit_hook"] == "extra layer" and "/work" in described["writable"]


def test_plot_is_a_validated_png(sandbox: Sandbox) -> None:
    result = sandbox.run("plotter", "plt.figure(figsize=(2, 1))\nplt.plot([0, 1])", LIMITS)
    assert result.ok and result.plot_png is not None
    assert Image.open(io.BytesIO(result.plot_png)).size == (200, 100)
    huge = sandbox.run("plotter", "plt.figure(figsize=(130, 130))\nplt.plot([0, 1])", LIMITS)
    assert not huge.ok and "limit is 4000 px a side" in (huge.error or "") and huge.plot_png is None


@pytest.mark.parametrize(("code", "message"), [
    ("while True:\n    pass", "time limit"),  # CPU limit, or the wall limit under load
    ("import time\ntime.sleep(60)", "time limit of 8 s"),
    ("x = bytearray(10 * 1024 ** 3)", "out of memory"),
])
def test_limits_end_the_call(sandbox: Sandbox, code: str, message: str) -> None:
    started = time.monotonic()
    result = sandbox.run("solver", code, LIMITS)
    assert not result.ok and message in (result.error or ""), result
    assert time.monotonic() - started < LIMITS.wall_s + SLACK_S


def test_result_line_is_validated() -> None:
    good = {"ok": True, "output": "x" * 10_000, "error": None, "plot_png_b64": None}
    assert parse_result(json.dumps(good).encode()).output == "x" * sandbox_module.MAX_OUTPUT
    forged = {**good, "plot": "/etc/shadow", "output": "forged"}  # the old path field means nothing now
    assert parse_result(json.dumps(forged).encode()) == sandbox_module.SandboxResult(True, "forged", None, None)
    for bad in (b"[1]", b"not json", b'{"ok": "yes"}', b'{"ok": true, "output": 5}', b"\xff\xfe"):
        assert "malformed" in (parse_result(bad).error or "")
    bomb = {**good, "plot_png_b64": base64.b64encode(_png(13000, 13000)).decode()}
    assert "13000x13000 px; the limit is 4096" in (parse_result(json.dumps(bomb).encode()).error or "")
    assert "not a PNG" in (parse_result(json.dumps({**good, "plot_png_b64": "AAAA"}).encode()).error or "")
    assert "base64" in (parse_result(json.dumps({**good, "plot_png_b64": "!!"}).encode()).error or "")


def test_missing_bubblewrap_makes_the_code_tools_unavailable(monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(isolation, "probe", lambda: "bubblewrap (bwrap) is not installed (simulated)")
    monkeypatch.delenv(ENV_UNSAFE, raising=False)
    monkeypatch.setattr(sandbox_module, "_warned", set())
    with caplog.at_level(logging.WARNING):
        box, again = Sandbox(warm=2), Sandbox(warm=2)
    assert sum("unavailable: no sandbox" in r.getMessage() for r in caplog.records) == 1  # warned once
    described = box.describe()
    assert described["mechanism"] is None and described["isolated"] is False and described["unsafe_opt_in"] is False
    assert not box.available() and box.warm == 0 and again.warm == 0
    assert SANDBOXED_TOOLS == ("Calculator", "Solver", "CodePlotter")
    calls = {"Calculator": {"expression": "1+1"}, "Solver": {"command": "print(1)"}, "CodePlotter": {"command": "x"}}
    for tool in SANDBOXED_TOOLS:
        with pytest.raises(ToolUnavailable) as raised:
            local.run_local(tool, calls[tool], {}, sandbox=box, ocr=local.OcrEngine(), limits=LIMITS)
        text = str(raised.value)
        assert text.startswith("unavailable: no sandbox (bubblewrap (bwrap) is not installed (simulated)")
        assert "apt-get install bubblewrap" in text and isinstance(raised.value, ToolError)


def test_unsafe_opt_in_runs_without_bubblewrap_and_says_so(monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(isolation, "probe", lambda: "bubblewrap (bwrap) is not installed (simulated)")
    monkeypatch.setenv(ENV_UNSAFE, "1")
    with caplog.at_level(logging.WARNING):
        box = Sandbox(warm=1)
    try:
        assert any(ENV_UNSAFE in r.getMessage() and "WITHOUT OS isolation" in r.getMessage() for r in caplog.records)
        described = box.describe()
        assert described["unsafe_opt_in"] is True and described["isolated"] is False
        assert described["mechanism"] is None
        assert box.run("solver", "print(6 * 7)", LIMITS).output == "42"
        assert box.run("calculator", "2**5", LIMITS).output == "32"
        blocked = box.run("solver", "import subprocess\nsubprocess.run(['id'])", LIMITS)
        assert not blocked.ok and "not allowed" in (blocked.error or "")  # the old layers still apply
    finally:
        box.close()


_LEFT_OPEN = """
import os, sys
from lmms_agentic.tasks.agentx.tools.sandbox import Sandbox
box = Sandbox(warm=1)
print(len([name for name in os.listdir(sys.argv[1]) if name.startswith("agentx_tool_")]), flush=True)
if sys.argv[2] == "dropped":
    del box
    print(len([name for name in os.listdir(sys.argv[1]) if name.startswith("agentx_tool_")]), flush=True)
"""


@pytest.mark.parametrize("ending", ["exit", "dropped"])
def test_waiting_workers_and_their_folders_go_with_a_sandbox_never_closed(tmp_path: Path, ending: str) -> None:
    """A run that never calls `close` (or drops the sandbox) leaves no worker folder behind: they are removed when
    the sandbox is collected or the interpreter exits (before, each run left one folder per waiting worker)."""
    env = {**os.environ, "TMPDIR": str(tmp_path), ENV_UNSAFE: "1"}  # unisolated: runs with or without bubblewrap
    done = subprocess.run([sys.executable, "-c", _LEFT_OPEN, str(tmp_path), ending], env=env, capture_output=True,
                          text=True, timeout=SLACK_S * 2, check=True)
    counts = [int(line) for line in done.stdout.split()]
    assert counts[0] == 2  # one waiting worker per kind (code, calculator), each in its own folder
    if ending == "dropped":
        assert counts[1] == 0
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("agentx_tool_")]
