"""`reproduce --emit-slurm`: a job-array script that bash parses, one job per preset x benchmark with a published
row, each launched the way lmms-eval spreads the preset over a node, all writing under one output folder."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from lmms_agentic import cli, presets
from lmms_agentic.reproduce import slurm

PRESETS = ["qwen2_5_vl_7b", "qwen2_5_vl_72b", "qwen3_vl_235b_a22b", "gpt_4o", "always_a"]
BENCHMARKS = ["robovista", "agentvqa", "agentx"]


def _jobs(script: Path, count: int) -> list[tuple[str, str, list[str]]]:
    found = []
    for index in range(count):
        done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60, check=True,
                              env={"SLURM_ARRAY_TASK_ID": str(index), "LMMS_AGENTIC_DRY_RUN": "1", "PATH": "/bin"})
        match = re.fullmatch(r"job (\d+): (\S+) x (\S+): (.*)", done.stdout.strip())
        assert match and int(match[1]) == index, done.stdout
        found.append((match[2], match[3], shlex.split(match[4])))
    return found


def test_array_script_parses_and_runs_every_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target, output = tmp_path / "sweep.sbatch", tmp_path / "runs"
    assert cli.main(["reproduce", "--emit-slurm", str(target), "--preset", ",".join(PRESETS),
                     "--benchmark", ",".join(BENCHMARKS), "--output", str(output), "--partition", "gpu"]) == 0
    assert "submit with: sbatch" in capsys.readouterr().out
    subprocess.run(["bash", "-n", str(target)], check=True)
    text = target.read_text()
    expected = [(p, b) for p in PRESETS for b in BENCHMARKS if b in presets.get(p).reference]
    (last,) = re.findall(r"^#SBATCH --array=0-(\d+)$", text, re.M)
    assert int(last) == len(expected) - 1
    assert "#SBATCH --gpus-per-node=8" in text and "#SBATCH --partition=gpu" in text
    assert f"#SBATCH --output={output.resolve()}/slurm/%A_%a.out" in text and (output / "slurm").is_dir()
    assert "# left out (no published row): qwen2_5_vl_7b x agentvqa" in text
    jobs = _jobs(target, len(expected))
    assert [(p, b) for p, b, _ in jobs] == expected
    for preset, benchmark, command in jobs:
        tail = command[command.index("-m"):]
        assert tail[:3] == ["-m", "lmms_agentic", "reproduce"]
        assert tail[tail.index("--preset") + 1] == preset and tail[tail.index("--benchmark") + 1] == benchmark
        assert tail[tail.index("--output") + 1] == str(output.resolve())
        backend = presets.backend_for(presets.get(preset))
        if backend.name == "vllm" and backend.tensor_parallel_size < 8:
            assert command[:3] == ["torchrun", "--standalone", "--nproc_per_node=8"], command
        else:
            assert command[0] == "python", command
    bad = subprocess.run(["bash", str(target)], capture_output=True, text=True, timeout=60, check=False,
                         env={"SLURM_ARRAY_TASK_ID": str(len(expected)), "PATH": "/bin"})
    assert bad.returncode == 2 and "no job" in bad.stderr


def test_hf_backend_and_api_only_arrays() -> None:
    text = slurm.script(["qwen2_5_vl_7b"], ["robovista"], Path("/out"), backend="hf", gpus=4)
    assert "CMD=(accelerate launch --num_processes=4 -m lmms_agentic reproduce" in text
    assert "--backend hf" in text and "#SBATCH --gpus-per-node=4" in text
    api = slurm.script(["gpt_4o"], ["agentx"], Path("/out"), limit=5)
    assert "--gpus-per-node" not in api and "--limit 5" in api
    with pytest.raises(presets.PresetError, match="needs 8 GPUs per replica; the node has 4"):
        slurm.script(["qwen3_vl_235b_a22b"], ["robovista"], Path("/out"), gpus=4)
    with pytest.raises(presets.PresetError, match="nothing to run"):
        slurm.script(["gpt_5"], ["agentx"], Path("/out"))
