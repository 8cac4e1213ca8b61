"""`reproduce --emit-slurm`: a sweep script that bash parses, submits one job array per resource group through a
stand-in `sbatch` (each job sized by its preset: API and baseline presets without GPUs and with their own time
limit), resumes only unfinished jobs when run again, activates the environment, sets the offline settings, and
never turns an option value into a shell line (issue 25: newlines refused with one line, everything quoted)."""

from __future__ import annotations

import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic import cli, presets
from lmms_agentic.presets import served
from lmms_agentic.reproduce import slurm

PRESETS = ["qwen2_5_vl_7b", "qwen2_5_vl_72b", "qwen3_vl_235b_a22b", "gpt_4o", "always_a"]
BENCHMARKS = ["robovista", "agentvqa", "agentx"]
VENV = str(Path(sys.executable).parent.parent)

SBATCH = """#!/bin/bash
# stand-in sbatch: records its arguments, then runs the script once per array id (as Slurm would, in order)
echo "$*" >> "$SBATCH_LOG"
script="${@: -1}"
ids=""
for arg in "$@"; do case "$arg" in --array=*) ids="${arg#--array=}" ;; esac; done
for id in ${ids//,/ }; do
  SLURM_JOB_ID=1 SLURM_ARRAY_JOB_ID=1 SLURM_ARRAY_TASK_ID="$id" bash "$script" || echo "job $id failed: $?"
done
"""


def _stand_ins(folder: Path) -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "sbatch"
    target.write_text(SBATCH)
    target.chmod(target.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{folder}:{Path(sys.executable).parent}:/usr/bin:/bin", "SBATCH_LOG": str(folder / "log"),
            "HOME": str(folder)}


def _emit(tmp_path: Path, *extra: str, presets_: list[str] = PRESETS) -> tuple[Path, str]:
    target = tmp_path / "sweep.sbatch"
    assert cli.main(["reproduce", "--emit-slurm", str(target), "--preset", ",".join(presets_), "--benchmark",
                     ",".join(BENCHMARKS), "--output", "runs", "--venv", VENV, *extra]) == 0
    subprocess.run(["bash", "-n", str(target)], check=True)
    return target, target.read_text()


def _submit(tmp_path: Path, target: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**env, "LMMS_AGENTIC_DRY_RUN": "1", "LMMS_AGENTIC_SKIP_PREFLIGHT": "1"}  # pre-flight: test_user_paths
    return subprocess.run(["bash", str(target)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_each_job_asks_for_its_presets_resources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _, text = _emit(tmp_path, "--partition", "gpu")
    expected = [(p, b) for p in PRESETS for b in BENCHMARKS if b in presets.get(p).reference]
    ids = {m[1]: (m[2], m[3]) for m in re.finditer(r"^    (\d+)\) PRESET=(\S+); BENCHMARK=(\S+);", text, re.M)}
    assert [ids[str(i)] for i in range(len(ids))] == expected
    assert "#SBATCH --partition=gpu" in text and f"#SBATCH --output={tmp_path}/runs/slurm/%A_%a.out" in text
    assert f"OUTPUT={tmp_path}/runs\n" in text  # absolute: the script can be submitted from any folder
    assert "--gpus-per-node" not in "\n".join(line for line in text.splitlines() if line.startswith("#SBATCH"))
    groups = {}
    for match in re.finditer(r"^  submit '?([\d ]+)'? (.*)$", text, re.M):
        for index in match[1].split():
            groups[ids[index]] = match[2]
    for (preset, _), options in groups.items():
        resources = presets.resources(presets.get(preset))
        assert f"--time={resources.hours}:00:00" in options and f"--mem={resources.mem_gb}G" in options
        gpus = re.search(r"--gpus-per-node=(\d+)", options)
        assert (int(gpus[1]) if gpus else 0) == presets.backend_for(presets.get(preset)).gpus, (preset, options)
    assert "--gpus-per-node" not in groups[("gpt_4o", "agentx")] and "--time=8:00:00" in groups[("gpt_4o", "agentx")]
    assert "--gpus-per-node" not in groups[("always_a", "agentvqa")] and "--time=1:00:00" in groups[("always_a",
                                                                                                   "agentvqa")]
    assert "--gpus-per-node=8" in groups[("qwen3_vl_235b_a22b", "robovista")]
    assert "--gpus-per-node=4" in groups[("qwen2_5_vl_72b", "robovista")]
    assert "# left out (no published row): qwen2_5_vl_7b x agentvqa" in text
    assert "hf download Qwen/Qwen2.5-VL-7B-Instruct" in text


def test_submitting_runs_every_job_and_resubmitting_resumes_only_unfinished(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    target, _ = _emit(tmp_path)
    env = _stand_ins(tmp_path / "bin")
    done = _submit(tmp_path, target, env)
    assert done.returncode == 0, done.stderr
    jobs = {m[1]: m[2] for m in re.finditer(r"^job (\d+): (\S+ x \S+)$", done.stdout, re.M)}
    runs = dict(zip(jobs, re.findall(r"^run: (.*)$", done.stdout, re.M), strict=True))
    serves = re.findall(r"^serve: (.*)$", done.stdout, re.M)
    assert len(jobs) == sum(b in presets.get(p).reference for p in PRESETS for b in BENCHMARKS)
    assert (tmp_path / "runs" / "slurm").is_dir()
    vllm_jobs = [i for i, pair in jobs.items() if presets.backend_for(presets.get(pair.split()[0])).name == "vllm"]
    assert len(serves) == len(vllm_jobs) > 0
    for index, pair in jobs.items():
        command = shlex.split(runs[index])
        preset = pair.split()[0]
        assert command[:4] == ["python", "-m", "lmms_agentic", "reproduce"] and preset in command
        assert command[command.index("--output") + 1] == str(tmp_path / "runs")
        cache = command[command.index("--response-cache") + 1]
        assert cache == f"{tmp_path}/runs/cache/responses/{preset}/{pair.split()[2]}"  # sharded per run
        assert ("--base-url" in command) == (index in vllm_jobs)
    serve = shlex.split(serves[0])
    assert serve[:3] == ["vllm", "serve", "Qwen/Qwen2.5-VL-7B-Instruct"] and "--tensor-parallel-size" in serve
    assert serve[serve.index("--port") + 1] in runs[vllm_jobs[0]]
    first = (Path(env["SBATCH_LOG"])).read_text().splitlines()
    assert len(first) == 5  # one array per resource group: 1, 4 and 8 GPUs, API (no GPU, 8 h), baseline (1 h)
    finished = tmp_path / "runs" / "qwen2_5_vl_7b" / "robovista"
    finished.mkdir(parents=True)
    (finished / "reproduce.json").write_text("{}")
    again = _submit(tmp_path, target, env)
    assert "job 0: qwen2_5_vl_7b x robovista already finished" in again.stdout
    second = Path(env["SBATCH_LOG"]).read_text().splitlines()[len(first):]
    assert "--array=0," not in " ".join(second) and any("--array=1" in line for line in second)
    direct = subprocess.run(["bash", str(target)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={**env, "SLURM_ARRAY_TASK_ID": "0"}, check=False)
    assert direct.returncode == 0 and "already finished" in direct.stdout
    unknown = subprocess.run(["bash", str(target)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             env={**env, "SLURM_ARRAY_TASK_ID": "99"}, check=False)
    assert unknown.returncode == 2 and "no job 99 in this sweep" in unknown.stderr


def test_jobs_activate_the_environment_and_run_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _, text = _emit(tmp_path, presets_=["gpt_4o"])
    assert f"source {shlex.quote(VENV + '/bin/activate')}" in text
    for setting in ('HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"', 'HF_DATASETS_OFFLINE="${HF_DATASETS_OFFLINE:-1}"',
                    'LMMS_AGENTIC_JUDGE_CACHE="${LMMS_AGENTIC_JUDGE_CACHE:-$CACHE/judge}"'):
        assert f"export {setting}" in text
    missing = tmp_path / "nowhere"
    target = tmp_path / "other.sbatch"
    assert cli.main(["reproduce", "--emit-slurm", str(target), "--preset", "gpt_4o", "--benchmark", "agentx",
                     "--output", "runs", "--venv", str(missing)]) == 0
    done = subprocess.run(["bash", str(target)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "SLURM_ARRAY_TASK_ID": "0"}, check=False)
    assert done.returncode == 3 and f"no environment at {missing}/bin/activate" in done.stderr


@pytest.mark.parametrize(("option", "value"), [
    ("--partition", "gpu\ntouch PWNED"), ("--partition", "gpu\rtouch PWNED"), ("--account", "acct\ntouch PWNED"),
    ("--output", "runs\ntouch PWNED"), ("--venv", "env\ntouch PWNED")])
def test_a_newline_in_an_option_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], option: str,
                                                       value: str) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "sweep.sbatch"
    args = {"--output": "runs", "--venv": VENV, option: value}
    assert cli.main(["reproduce", "--emit-slurm", str(target), "--preset", "gpt_4o", "--benchmark", "agentx",
                     *[x for pair in args.items() for x in pair]]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and f"{option} {value!r}: a newline or control character" in error
    assert not target.exists() and not (tmp_path / "runs").exists()


def test_values_with_shell_syntax_stay_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    hostile = "out $(touch PWNED1) `touch PWNED2`; touch PWNED3 'q\""
    target = tmp_path / "sweep.sbatch"
    assert cli.main(["reproduce", "--emit-slurm", str(target), "--preset", "gpt_4o,qwen2_5_vl_7b", "--benchmark",
                     "agentx", "--output", hostile, "--partition", "gpu;touch PWNED4", "--account", "a b",
                     "--venv", VENV]) == 0
    text = target.read_text()
    subprocess.run(["bash", "-n", str(target)], check=True)
    assert f"#SBATCH --output={shlex.quote(f'{tmp_path}/{hostile}/slurm/%A_%a.out')}" in text
    assert f"#SBATCH --partition={shlex.quote('gpu;touch PWNED4')}" in text and "#SBATCH --account='a b'" in text
    env = _stand_ins(tmp_path / "bin")
    done = _submit(tmp_path, target, env)
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("PWNED*")) and (tmp_path / hostile / "slurm").is_dir()
    (run,) = [line for line in done.stdout.splitlines() if line.startswith("run: ") and "gpt_4o" in line]
    command = shlex.split(run.removeprefix("run: "))
    assert command[command.index("--output") + 1] == str(tmp_path / hostile)


def test_node_size_and_nothing_to_run() -> None:
    with pytest.raises(presets.PresetError, match="needs 8 GPUs on one node; the nodes have 4"):
        slurm.script(["qwen3_vl_235b_a22b"], ["robovista"], Path("out"), node_gpus=4)
    with pytest.raises(presets.PresetError, match="nothing to run"):
        slurm.script(["gpt_5"], ["agentx"], Path("out"))
    with pytest.raises(presets.PresetError, match="robovista has no protocol nope"):
        slurm.script(["gpt_5"], ["robovista"], Path("out"), protocols=["nope"])
    hf = slurm.script(["qwen2_5_vl_7b"], ["robovista"], Path("out"), backend="hf", venv="")
    assert "RUN=(accelerate launch --num_processes=8 -m lmms_agentic reproduce" in hf and "SERVE=()" in hf
    assert "--gpus-per-node=8" in hf and "\nsource " not in hf


def test_wait_helper_reports_a_dead_server_in_one_line() -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    problem = slurm.wait_for_server(f"http://127.0.0.1:{slurm.free_port()}/v1", process.pid, 5, poll_s=0.1)
    assert problem.startswith(f"the vLLM server (pid {process.pid}) exited before answering")
    assert slurm.main(["nonsense"]) == 2


def test_chat_settings_travel_with_the_served_requests_or_keep_the_model_in_process() -> None:
    qwen3 = next(p for p in presets.all_presets().values() if "vllm" in p.backends
                 and p.backends["vllm"].args.get("enable_thinking") is False)
    serve, run = slurm.commands(qwen3, next(iter(qwen3.reference)), None, None, ())
    assert serve and not any("thinking" in part for part in serve)
    client = presets.parse_model_args(served.served_model_args(qwen3.backends["vllm"], "http://h/v1"))
    assert client["enable_thinking_kwarg"] == "false"
    no_system = next(p for p in presets.all_presets().values() if "vllm" in p.backends
                     and str(p.backends["vllm"].args.get("system_role")).lower() == "false")
    serve, run = slurm.commands(no_system, next(iter(no_system.reference)), None, None, ())
    assert serve == [] and run[:4] == ["python", "-m", "lmms_agentic", "reproduce"] and "vllm" in run
    with pytest.raises(presets.PresetError, match="system_role: false"):
        served.served_model_args(no_system.backends["vllm"], "http://h/v1")
