"""Commands that fail on the file system or on a bad name end with one line and leave nothing half-written:
`run` when its log copy cannot be written (full disk) or its output folder cannot be made, `tiny-vlm` into an
unwritable folder, `new-benchmark` with a Python keyword as name, outside the importable task folder, or when building
the mini split fails."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from lmms_agentic import cli
from lmms_agentic.devtools import scaffold
from lmms_agentic.harness import runner

FAKE_LMMS_EVAL = """#!/bin/sh
# stands in for `python -m lmms_eval ...`: 20,000 log lines, then a results file for --tasks in --output_path
out=""; tasks=""
while [ $# -gt 0 ]; do
  case "$1" in --output_path) out="$2"; shift;; --tasks) tasks="$2"; shift;; esac; shift
done
i=0; while [ $i -lt 20000 ]; do echo "log line $i"; i=$((i+1)); done
[ -n "$FAIL" ] && echo "x | Error during evaluation: boom"
echo "{\\"results\\": {\\"$tasks\\": {}}}" > "$out/20990101_000000_results.json"
"""


@pytest.fixture
def fake_harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "fake_python"
    script.write_text(FAKE_LMMS_EVAL)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sys, "executable", str(script))
    return script


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full to simulate a full disk")
@pytest.mark.parametrize("fail", [False, True], ids=["evaluation-ok", "evaluation-failed"])
def test_run_with_a_full_disk_for_its_log_ends_in_one_line(tmp_path: Path, fake_harness: Path, fail: bool,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    if fail:
        monkeypatch.setenv("FAIL", "1")
    out = tmp_path / "out"
    args = ["--tasks", "robovista", "--output_path", str(out)]
    if fail:
        with pytest.raises(runner.RunFailed, match=r"Error during evaluation: boom \(the log copy /dev/full is "
                                                   r"incomplete: No space left on device; free space"):
            runner.run(args, echo=False, log_name="/dev/full")
    else:
        assert runner.run(args, echo=False, log_name="/dev/full").name == "20990101_000000_results.json"
        assert "warning: the log copy /dev/full is incomplete: No space left on device" in capsys.readouterr().err


def test_run_into_an_output_that_cannot_be_made_is_one_line(tmp_path: Path, fake_harness: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    assert runner.main(["--", "--tasks", "robovista", "--output_path", str(blocker / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"lmms-agentic run: FAILED: cannot write the run log {blocker / 'out' / 'lmms_eval.log'}")
    assert err.endswith("pass a writable --output_path") and "\n" not in err


def test_tiny_vlm_into_an_unwritable_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    assert cli.main(["tiny-vlm", str(blocker / "ckpt")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("lmms-agentic tiny-vlm: error: cannot write the checkpoint to ") and "\n" not in err
    assert err.endswith("choose a writable OUT_DIR with free space")


@pytest.mark.parametrize("name", ["import", "class", "match"])
def test_a_python_keyword_is_refused_before_anything_is_written(name: str, capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    tasks = Path(scaffold.benchmarks.tasks_root())
    assert cli.main(["new-benchmark", name, "--tests-dir", str(tmp_path)]) == 1
    assert f"benchmark name {name!r} is a Python keyword" in capsys.readouterr().err
    assert not (tasks / name).exists() and not (tmp_path / name).exists()


def test_a_tasks_dir_python_cannot_import_is_refused_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["new-benchmark", "mybench", "--tasks-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip()
    assert f"{tmp_path.resolve()} is not the task folder Python imports lmms_agentic.tasks from" in err
    assert "\n" not in err and list(tmp_path.iterdir()) == []


def test_a_failed_mini_build_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure after the folders were written (here: the mini split cannot be built) removes both folders."""
    tasks = (tmp_path / "tasks").resolve()
    tasks.mkdir()
    monkeypatch.setattr(scaffold, "_importable_roots", lambda: [tasks])  # stands in for the installed task folder
    name = "zzfailbench"

    def fail(*_args: object) -> None:
        assert (tasks / name / "benchmark.json").is_file()  # the folder was written before the failure
        raise scaffold.ScaffoldError("building the mini split of zzfailbench failed (boom); nothing was left behind")

    monkeypatch.setattr(scaffold, "_build_mini", fail)
    with pytest.raises(scaffold.ScaffoldError, match="nothing was left behind"):
        scaffold.create(name, tasks_root=tasks, tests_root=tmp_path / "tests")
    assert list(tasks.iterdir()) == [] and not (tmp_path / "tests" / name).exists()
