"""What a new user trips on, without a model run: the rescore judge choice, `reproduce --from`'s reasons and model
check, the Slurm script outside its folder."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from lmms_agentic import cli
from lmms_agentic.report.runs import load_run
from lmms_agentic.reproduce import judging
from tests.reproduce.agentx_runs import write_agentx_run

JUDGE = {"preset": None, "base_url": "http://judge.internal:8000/v1", "model": "gpt-4o-2024-08-06",
         "decoding": "pinned", "temperature": 0.0, "api_version": None}


def _judged_run(folder: Path, record: dict[str, object] | None) -> Path:
    results_file = write_agentx_run(folder, [0.75, 0.5, None, 1.0])
    if record is not None:
        results = json.loads(results_file.read_text())
        results["lmms_agentic"] = {"version": "0.1.0", "data": {}, "judge": record}
        results_file.write_text(json.dumps(results))
    return folder


@pytest.fixture
def no_judge_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*judging.ENDPOINT_VARIABLES, "LMMS_AGENTIC_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_a_judged_run_without_its_judge_stops_instead_of_turning_nan(tmp_path: Path, no_judge_env: None,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = _judged_run(tmp_path / "old", None)
    with pytest.raises(judging.JudgeChoiceError, match=r"gpt-4o-2024-08-06.*--judge none"):
        judging.choose(load_run(folder))
    assert cli.main(["rescore", str(folder)]) == 1
    assert "do not record the judge's endpoint" in capsys.readouterr().err
    assert judging.choose(load_run(folder), "none").settings == dict.fromkeys(judging.ENDPOINT_VARIABLES, "")


def test_the_runs_recorded_judge_is_reused_and_the_environment_wins(tmp_path: Path, no_judge_env: None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    run = load_run(_judged_run(tmp_path / "new", JUDGE))
    choice = judging.choose(run)
    assert choice.source == "run" and choice.record == JUDGE
    assert choice.settings["LMMS_AGENTIC_JUDGE_BASE_URL"] == JUDGE["base_url"]
    assert choice.settings["LMMS_AGENTIC_JUDGE_MODEL"] == JUDGE["model"]
    assert choice.settings["LMMS_AGENTIC_JUDGE_PRESET"] == ""  # removed for the replay
    environ = {"LMMS_AGENTIC_JUDGE_PRESET": "gpt-4o"}
    previous = judging.apply(choice, environ)
    assert environ == {"LMMS_AGENTIC_JUDGE_BASE_URL": JUDGE["base_url"], "LMMS_AGENTIC_JUDGE_MODEL": JUDGE["model"]}
    judging.restore(previous, environ)
    assert environ == {"LMMS_AGENTIC_JUDGE_PRESET": "gpt-4o"}
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_BASE_URL", "http://other:9/v1")
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_MODEL", "qwen3-14b")
    mine = judging.choose(run)
    assert mine.source == "environment" and mine.record is not None and mine.record["model"] == "qwen3-14b"
    assert mine.settings == {}


@pytest.mark.parametrize("env", [
    {"LMMS_AGENTIC_JUDGE_BASE_URL": "http://judge.internal:8000/v1", "LMMS_AGENTIC_JUDGE_MODEL": "m-2024",
     "LMMS_AGENTIC_JUDGE_API_VERSION": "2024-06", "LMMS_AGENTIC_JUDGE_API_KEY": "sk-not-recorded-123"},
    {"LMMS_AGENTIC_JUDGE_PRESET": "gpt-4o", "LMMS_AGENTIC_JUDGE_DECODING": "as_released"},
], ids=["endpoint", "preset"])
def test_the_recorded_judge_is_the_judge_rescore_sets_again(env: dict[str, str], tmp_path: Path,
                                                             no_judge_env: None) -> None:
    """The builder's record, stored in a run, gives back the same judge through ``choose`` (field names agree)."""
    from lmms_agentic.judges.config import judge_record

    record = judge_record(env)
    assert record is not None and "sk-not-recorded-123" not in json.dumps(record)
    choice = judging.choose(load_run(_judged_run(tmp_path / "run", record)))
    assert choice.source == "run" and choice.record == record
    replay: dict[str, str] = {}
    judging.apply(choice, replay)
    assert judge_record(replay) == record


def test_a_masked_endpoint_asks_for_the_url(tmp_path: Path, no_judge_env: None) -> None:
    run = load_run(_judged_run(tmp_path / "masked", {**JUDGE, "base_url": "https://u:***@host/v1"}))
    with pytest.raises(judging.JudgeChoiceError, match="LMMS_AGENTIC_JUDGE_BASE_URL"):
        judging.choose(run)


def test_verdict_summary_counts_cached_and_sent(tmp_path: Path) -> None:
    results_file = write_agentx_run(tmp_path / "s", [0.5, None])
    samples = sorted(results_file.parent.glob("*_samples_agentx.jsonl"))[0]
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    for n, line in enumerate(lines):
        for result in line["ground_s"]["judge"].values():
            result.update(judge_model_requested="gpt-4o-2024-08-06", cached=n == 0, attempts=0 if n == 0 else 1)
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert judging.summary(load_run(results_file.parent)) == (
        "judge gpt-4o-2024-08-06: 3 verdicts, 3 cached, 3 sent; unscored: 3 no_judge_configured")


def test_reproduce_from_names_the_task_the_presets_rows_need(tmp_path: Path, no_judge_env: None,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A GPT-4o run of `agentx` gets no Agent-X row: they are measured on `agentx_script_gpt` (the GPT script)."""
    folder = tmp_path / "gpt"
    write_agentx_run(folder, [0.75, 0.5, 1.0, 0.25], model_args="model=gpt-4o-2024-08-06")
    assert cli.main(["reproduce", "--from", str(folder), "--preset", "gpt_4o"]) == 0
    out = capsys.readouterr().out
    assert "on task agentx_script_gpt, which this run does not have (its agentx tasks: agentx)" in out
    assert "`python -m lmms_agentic reproduce --benchmark agentx --preset gpt_4o`" in out
    assert "--tasks agentx_script_gpt" in out
    assert "WARNING" not in out


def test_reproduce_from_warns_when_the_run_is_another_model(tmp_path: Path, no_judge_env: None,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from tests.reproduce.conftest import write_run

    folder = tmp_path / "other"
    write_run(folder, lambda b, d, i: i % 2 == 0, model_args="model=my-org/my-vlm-7b", model="openai")
    assert cli.main(["reproduce", "--from", str(folder), "--preset", "gpt_4o"]) == 0
    out = capsys.readouterr().out
    assert "WARNING: this run's model is 'my-org/my-vlm-7b', preset gpt_4o is 'gpt-4o-2024-08-06'" in out
    qwen = tmp_path / "qwen"
    write_run(qwen, lambda b, d, i: True, model_args="pretrained=Qwen/Qwen2.5-VL-7B-Instruct", model="qwen2_5_vl")
    assert cli.main(["reproduce", "--from", str(qwen), "--preset", "gpt_4o"]) == 0
    assert "WARNING: this run is preset qwen2_5_vl_7b" in capsys.readouterr().out


SBATCH = """#!/bin/bash
# stand-in sbatch: records its arguments, then runs the script once per array id (as Slurm would)
echo "$*" >> "$SBATCH_LOG"
ids=""
for arg in "$@"; do case "$arg" in --array=*) ids="${arg#--array=}" ;; esac; done
for id in ${ids//,/ }; do
  SLURM_JOB_ID=1 SLURM_ARRAY_JOB_ID=1 SLURM_ARRAY_TASK_ID="$id" bash "${@: -1}" || echo "job $id exit $?"
done
"""


def _sweep_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    import stat

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "sbatch").write_text(SBATCH)
    (bin_dir / "sbatch").chmod((bin_dir / "sbatch").stat().st_mode | stat.S_IEXEC)
    keep = {k: v for k, v in os.environ.items()
            if not k.startswith(("SLURM_", "LMMS_AGENTIC_JUDGE_", "LMMS_AGENTIC_DATA", "OPENAI_"))}
    return {**keep, "PATH": f"{bin_dir}:/usr/bin:/bin", "SBATCH_LOG": str(bin_dir / "log"),
            "LMMS_AGENTIC_DRY_RUN": "1",
            **extra}


def _emit_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, presets_: str, benchmarks_: str) -> Path:
    """Emitted in `here/` with a relative --output and a relative --venv (a link to the test venv)."""
    import sys

    here = tmp_path / "here"
    here.mkdir()
    (here / "env").symlink_to(Path(sys.executable).parent.parent)
    monkeypatch.chdir(here)
    assert cli.main(["reproduce", "--emit-slurm", "sweep.sbatch", "--preset", presets_, "--benchmark", benchmarks_,
                     "--output", "runs", "--venv", "env"]) == 0
    return here / "sweep.sbatch"


def _bash(script: Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def test_a_sweep_submitted_from_another_folder_runs_its_jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The venv used to be activated by a relative path: every array task exited 3 after queueing."""
    script = _emit_relative(tmp_path, monkeypatch, "gpt_4o", "robovista")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _bash(script, elsewhere, _sweep_env(tmp_path, OPENAI_API_KEY="sk-test", LMMS_AGENTIC_DATA="mini"))
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "pre-flight: 1 jobs ready" in out and "job 0: gpt_4o x robovista" in out and "exit 3" not in out
    assert f"--output {tmp_path}/here/runs" in out
    assert (tmp_path / "here" / "runs" / "slurm").is_dir() and not (elsewhere / "runs").exists()
    assert "sk-test" not in script.read_text()


def test_the_pre_flight_stops_a_sweep_that_cannot_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lmms_agentic.judges.testing import ScriptedJudgeServer, fixed

    script = _emit_relative(tmp_path, monkeypatch, "gpt_4o", "agentx")
    text = script.read_text()
    assert "#   hf download Tajamul21/Agent-X --repo-type dataset" in text
    assert "LMMS_AGENTIC_JUDGE_PRESET=gpt-4o" in text
    env = _sweep_env(tmp_path, LMMS_AGENTIC_DATA=str(tmp_path / "nowhere"))
    done = _bash(script, tmp_path, env)
    assert done.returncode == 3
    for needle in ("needs an API key in $OPENAI_API_KEY", f"agentx: no data at {tmp_path}/nowhere/agentx",
                   "its judged metrics need a judge and none is configured", "nothing submitted"):
        assert needle in done.stderr, done.stderr
    assert not Path(env["SBATCH_LOG"]).exists()  # nothing reached sbatch
    with ScriptedJudgeServer(fixed("Score: 1")) as judge:
        ready = _sweep_env(tmp_path, OPENAI_API_KEY="sk-test", LMMS_AGENTIC_DATA="mini",
                           LMMS_AGENTIC_JUDGE_BASE_URL=judge.base_url, LMMS_AGENTIC_JUDGE_MODEL="j")
        done = _bash(script, tmp_path, ready)
    assert done.returncode == 0 and "pre-flight: 1 jobs ready" in done.stdout, done.stderr[-2000:]
    unreachable = {**ready, "LMMS_AGENTIC_JUDGE_BASE_URL": "http://127.0.0.1:9/v1"}
    done = _bash(script, tmp_path, unreachable)
    assert done.returncode == 3 and "agentx: the judge at http://127.0.0.1:9/v1/models does not answer" in done.stderr


def test_rescore_names_the_missing_data_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A results file without `lmms_agentic.data` (lm-eval runs before it was recorded) used to fail on the Hub
    without saying why."""
    import datasets

    from tests.reproduce.conftest import write_run

    for name in [k for k in os.environ if k.startswith("LMMS_AGENTIC_DATA")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    write_run(tmp_path / "run", lambda b, d, i: True, items=2)
    assert cli.main(["rescore", str(tmp_path / "run"), "--output", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "does not record where its data came from" in err and "LMMS_AGENTIC_DATA as for the run" in err


def test_reproduce_runs_record_their_judge_for_rescore(tmp_path: Path, no_judge_env: None,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from lmms_agentic.reproduce.command import record_judge

    results_file = write_agentx_run(tmp_path / "run", [0.75, 0.5])
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_BASE_URL", "http://judge.internal:8000/v1")
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_MODEL", "gpt-4o-2024-08-06")
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_API_KEY", "sk-never-stored")
    record_judge(results_file)
    assert "sk-never-stored" not in results_file.read_text()
    for name in ("LMMS_AGENTIC_JUDGE_BASE_URL", "LMMS_AGENTIC_JUDGE_MODEL", "LMMS_AGENTIC_JUDGE_API_KEY"):
        monkeypatch.delenv(name)
    choice = judging.choose(load_run(tmp_path / "run"))
    assert choice.source == "run" and choice.record == JUDGE
