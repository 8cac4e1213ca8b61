"""`reproduce --emit-slurm`: a Slurm job-array script, one job per preset x benchmark, for sweeps beyond one node.

Each array job runs ``python -m lmms_agentic reproduce --preset P --benchmark B`` on one node, launched the way
lmms-eval spreads one model over the node's GPUs:

- vLLM: one process per vLLM replica group: ``torchrun --nproc_per_node=G`` when the node holds more than one
  replica (G / tensor_parallel_size data-parallel replicas; `reproduce` passes ``data_parallel_size``), else a
  single process that lets vLLM start its tensor-parallel workers;
- Hugging Face backends: ``accelerate launch --num_processes=N`` (data parallel, one model per GPU) or one process
  over every GPU (``device_map=auto``);
- APIs and the constant-letter baselines: one process (no GPU work).

Every job writes into ``OUTPUT/<preset>/<benchmark>/`` under one output folder, so after the array
``python -m lmms_agentic report OUTPUT/*/*`` compares everything. Setting ``LMMS_AGENTIC_DRY_RUN=1`` makes a job
print its command without running it (used by the tests, and to check a script before submitting it). API keys
come from the submitting shell's environment (``sbatch`` exports it by default); they are never written into the
script.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from pathlib import Path

from lmms_agentic import presets
from lmms_agentic.presets import Preset


def launch(preset: Preset, backend: str | None, gpus: int) -> list[str]:
    """The launcher prefix for one job (ending where ``-m lmms_agentic`` arguments follow)."""
    spec = presets.backend_for(preset, backend)
    if spec.name == "vllm":
        replicas = max(1, gpus // spec.tensor_parallel_size)
        if spec.tensor_parallel_size > gpus:
            raise presets.PresetError(f"{preset.name} needs {spec.tensor_parallel_size} GPUs per replica; "
                                      f"the node has {gpus}")
        if replicas > 1:
            return ["torchrun", "--standalone", f"--nproc_per_node={replicas * spec.tensor_parallel_size}"]
    if spec.name == "hf" and spec.processes > 1:
        return ["accelerate", "launch", f"--num_processes={min(spec.processes, gpus)}"]
    return ["python"]


def job(preset: Preset, benchmark: str, backend: str | None, output: Path, gpus: int, limit: int | None,
        protocols: Sequence[str]) -> list[str]:
    """The full command of one array job."""
    command = [*launch(preset, backend, gpus), "-m", "lmms_agentic", "reproduce", "--preset", preset.name,
               "--benchmark", benchmark, "--backend", presets.backend_for(preset, backend).name,
               "--output", str(output)]
    if limit is not None:
        command += ["--limit", str(limit)]
    if protocols:
        command += ["--protocol", ",".join(protocols)]
    return command


def script(names: Sequence[str], benchmark_names: Sequence[str], output: Path, *, backend: str | None = None,
           gpus: int = 8, limit: int | None = None, protocols: Sequence[str] = (), partition: str | None = None,
           account: str | None = None, hours: int = 24) -> str:
    """The job-array script for every preset in ``names`` x benchmark in ``benchmark_names`` that the preset
    has a published row for (pairs without one are left out and listed in a comment)."""
    chosen = [presets.get(name) for name in names]
    jobs: list[tuple[Preset, str]] = []
    skipped: list[str] = []
    for preset in chosen:
        for benchmark in benchmark_names:
            presets.protocols(benchmark)  # unknown benchmark -> PresetError
            if benchmark in preset.reference:
                jobs.append((preset, benchmark))
            else:
                skipped.append(f"{preset.name} x {benchmark}")
    if not jobs:
        raise presets.PresetError("no preset has a published row for the chosen benchmarks: nothing to run")
    needs_gpu = any(presets.backend_for(p, backend).gpus > 0 for p, _ in jobs)
    out = output.resolve()
    header = [
        "#!/bin/bash",
        f"# Written by `python -m lmms_agentic reproduce --emit-slurm` on {time.strftime('%Y-%m-%d %H:%M')}.",
        f"# {len(jobs)} jobs: one per preset x benchmark; results under {out}/<preset>/<benchmark>/.",
        f"# Afterwards: python -m lmms_agentic report {out}/*/*",
        "# LMMS_AGENTIC_DRY_RUN=1 prints a job's command instead of running it. API keys: exported from the",
        "# submitting shell (sbatch --export=ALL, the default), never stored here.",
        *(f"# left out (no published row): {pair}" for pair in skipped),
        "#SBATCH --job-name=lmms-agentic-reproduce",
        f"#SBATCH --array=0-{len(jobs) - 1}",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        f"#SBATCH --cpus-per-task={16 if needs_gpu else 4}",
        f"#SBATCH --time={hours}:00:00",
        f"#SBATCH --output={out}/slurm/%A_%a.out",
    ]
    if needs_gpu:
        header.append(f"#SBATCH --gpus-per-node={gpus}")
    if partition:
        header.append(f"#SBATCH --partition={partition}")
    if account:
        header.append(f"#SBATCH --account={account}")
    body = ["set -euo pipefail", f"mkdir -p {shlex.quote(str(out))}/slurm",
            'case "${SLURM_ARRAY_TASK_ID:?submit with sbatch, or set SLURM_ARRAY_TASK_ID}" in']
    for index, (preset, benchmark) in enumerate(jobs):
        command = shlex.join(job(preset, benchmark, backend, out, gpus, limit, protocols))
        body.append(f"  {index}) PRESET={preset.name}; BENCHMARK={benchmark}; CMD=({command}) ;;")
    body += ['  *) echo "no job ${SLURM_ARRAY_TASK_ID} in this array" >&2; exit 2 ;;', "esac",
             'echo "job ${SLURM_ARRAY_TASK_ID}: ${PRESET} x ${BENCHMARK}: ${CMD[*]}"',
             'if [ "${LMMS_AGENTIC_DRY_RUN:-0}" = 1 ]; then exit 0; fi', '"${CMD[@]}"']
    return "\n".join([*header, "", *body]) + "\n"


def write(target: Path, text: str, output: Path) -> Path:
    """Write the script (executable) and create the log folder Slurm opens before a job starts."""
    (output.resolve() / "slurm").mkdir(parents=True, exist_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    target.chmod(0o755)
    return target
