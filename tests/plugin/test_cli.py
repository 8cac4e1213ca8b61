"""Our commands fail with exit status 1 and one line naming the problem (no traceback) on user errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(("args", "message"), [
    (["baselines", "nosuch"], "no benchmark named 'nosuch'; known: agentvqa, agentx, robovista"),
    (["baselines", "agentx"], "agentx is not a multiple-choice benchmark"),
    (["report", "/nonexistent/run"], "/nonexistent/run"),
    (["compare", "/nonexistent/a", "/nonexistent/b"], "/nonexistent/a"),
    (["new-benchmark", "Bad-Name"], "must be 2-31 lower-case letters"),
    (["run", "--", "--model", "dummy", "--tasks", "robovista"], "pass --output_path"),
], ids=["unknown-benchmark", "not-mcq", "report-missing", "compare-missing", "bad-name", "run-no-output"])
def test_user_errors_end_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert message in done.stderr.strip().splitlines()[-1]
