"""`reproduce --emit-slurm`: a Slurm sweep script, one array task per preset x benchmark, each sized by its preset.

The written script has two roles. Run on the login node (``bash sweep.sbatch``), it submits one job array per
resource group (GPUs, time, CPUs and memory from ``presets.resources``: API and baseline presets ask for no GPU and
their own time limit) with ``sbatch --array=<ids> ...``, leaving out every job whose run folder already holds its
``reproduce.json`` (written when a run finishes), so running it again resumes only the unfinished jobs. Run by
Slurm (``SLURM_ARRAY_TASK_ID`` set), it is one job:

- it activates the environment (``--venv``, default: the virtual environment `reproduce` runs in) and sets the
  settings of a compute node without internet: ``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE`` /
  ``TRANSFORMERS_OFFLINE`` (weights and data must be downloaded beforehand; the header lists the weights), no usage
  statistics, the judge cache shared by every job (``OUTPUT/cache/judge``, one file per answer, safe for many
  writers) and lmms-eval's response cache sharded per run (``OUTPUT/cache/responses/<preset>/<benchmark>``);
  a variable already set in the submitting shell wins (``sbatch`` exports the environment);
- open-weight presets on vLLM follow serve-then-evaluate: one ``vllm serve`` per array task on a free local port,
  tensor parallel over the job's GPUs (the preset's ``tensor_parallel_size``), then the benchmark as an API client
  run against it (``reproduce --backend vllm --base-url http://127.0.0.1:PORT/v1``; ``enable_thinking`` travels
  with each request), and the server is stopped when the job ends; a preset the OpenAI client cannot reproduce
  (``system_role: false``) runs vLLM in-process instead; Hugging Face presets run under ``accelerate launch``;
  API and baseline presets run directly;
- ``LMMS_AGENTIC_DRY_RUN=1`` prints the job's commands instead of running them.

Before it submits, the login-node half runs the pre-flight (``sweep_check``: the environment exists, the weights
and data are cached for offline nodes, API keys are exported, Agent-X's judge is configured and answers) and submits
nothing when a check fails (``LMMS_AGENTIC_SKIP_PREFLIGHT=1`` submits anyway). The header lists the downloads (weights
and datasets) and the judge settings the jobs need.

Every value written into the script is checked and quoted: a newline or control character in an option
(``--partition``, ``--account``, ``--output``, ``--venv``) is refused with one line, values are
``shlex.quote``d, so no option can add a shell line. Paths are absolute: a relative ``--output`` or ``--venv`` is
resolved against the folder `reproduce --emit-slurm` runs in, so the script can be submitted from any folder.
API keys come from the submitting shell's environment; they are never written into the script.

``python -m lmms_agentic.reproduce.slurm free-port`` and ``... wait URL PID [TIMEOUT_S]`` are the helpers the
script calls (a free loopback port; wait until the server answers ``URL/models``, or fail in one line when its
process died or the time ran out).
"""

from __future__ import annotations

import os
import shlex
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from lmms_agentic import presets
from lmms_agentic.presets import Preset, Resources, served

SERVE_TIMEOUT_S = 1800
"""How long a job waits for its vLLM server to answer (loading a large checkpoint takes minutes)."""
OFFLINE = ("HF_HUB_OFFLINE=1", "HF_DATASETS_OFFLINE=1", "TRANSFORMERS_OFFLINE=1", "VLLM_NO_USAGE_STATS=1",
           "DO_NOT_TRACK=1", "TOKENIZERS_PARALLELISM=false")
"""Settings for compute nodes without internet (each only where the submitting shell did not set it)."""


class SlurmScriptError(ValueError):
    """A value that cannot go into a Slurm script (one line naming the option and the fix)."""


def checked(option: str, value: str) -> str:
    """``value`` quoted for the script; ``SlurmScriptError`` when it holds a newline or another control character
    (a ``#SBATCH`` line or a comment would end there and the rest become a shell line)."""
    if any(ord(char) < 32 or ord(char) == 127 for char in value):
        raise SlurmScriptError(f"{option} {value!r}: a newline or control character cannot go into a Slurm script; "
                               "give the value on one line")
    return shlex.quote(value)


def _default_venv() -> str | None:
    return None if sys.prefix == sys.base_prefix else os.path.abspath(sys.prefix)


def _jobs(names: Sequence[str], benchmark_names: Sequence[str], protocols: Sequence[str]
          ) -> tuple[list[tuple[Preset, str]], list[str]]:
    jobs: list[tuple[Preset, str]] = []
    skipped: list[str] = []
    for preset in (presets.get(name) for name in names):
        for benchmark in benchmark_names:
            _, table = presets.protocols(benchmark)  # unknown benchmark -> PresetError
            unknown = [p for p in protocols if p not in table]
            if unknown:
                raise presets.PresetError(f"{benchmark} has no protocol {', '.join(unknown)}; known: "
                                          f"{', '.join(table)}")
            if benchmark in preset.reference:
                jobs.append((preset, benchmark))
            else:
                skipped.append(f"{preset.name} x {benchmark}")
    if not jobs:
        raise presets.PresetError("no preset has a published row for the chosen benchmarks: nothing to run")
    return jobs, skipped


def commands(preset: Preset, benchmark: str, backend: str | None, limit: int | None, protocols: Sequence[str]
             ) -> tuple[list[str], list[str]]:
    """(server command or [], evaluation command) of one job; the job adds the port, the base URL, the output
    folder and the response cache."""
    spec = presets.backend_for(preset, backend)
    tail = ["-m", "lmms_agentic", "reproduce", "--preset", preset.name, "--benchmark", benchmark,
            "--backend", spec.name]
    if limit is not None:
        tail += ["--limit", str(limit)]
    if protocols:
        tail += ["--protocol", ",".join(protocols)]
    if spec.name == "vllm" and not served.not_servable(spec):
        serve = ["vllm", "serve", spec.weights, "--served-model-name", spec.weights, "--host", "127.0.0.1",
                 *served.vllm_serve_args(spec)]
        return serve, ["python", *tail]
    if spec.name == "hf" and spec.processes > 1:
        return [], ["accelerate", "launch", f"--num_processes={spec.processes}", *tail]
    return [], ["python", *tail]


def _sbatch_options(resources: Resources) -> list[str]:
    options = [f"--time={resources.time}", f"--cpus-per-task={resources.cpus}", f"--mem={resources.mem_gb}G"]
    return options + ([f"--gpus-per-node={resources.gpus}"] if resources.gpus else [])


SUBMIT = r'''submit() {  # submit "<job ids>" <sbatch options>: the unfinished jobs of one resource group
  local ids=$1 todo=() id
  shift
  for id in $ids; do
    job "$id"
    if [ -f "$OUTPUT/$PRESET/$BENCHMARK/reproduce.json" ]; then
      echo "job $id: $PRESET x $BENCHMARK already finished"
    else
      todo+=("$id")
    fi
  done
  if [ "${#todo[@]}" -gt 0 ]; then
    sbatch --array="$(IFS=,; echo "${todo[*]}")" "$@" "$SCRIPT"
  fi
}'''

JOB = r'''if [ -f "$OUTPUT/$PRESET/$BENCHMARK/reproduce.json" ]; then
  echo "job ${SLURM_ARRAY_TASK_ID}: $PRESET x $BENCHMARK already finished"; exit 0
fi
RESPONSES="$CACHE/responses/$PRESET/$BENCHMARK"
RUN+=(--output "$OUTPUT" --response-cache "$RESPONSES")
if [ "${#SERVE[@]}" -gt 0 ]; then
  PORT=$(python -m lmms_agentic.reproduce.slurm free-port)
  SERVE+=(--port "$PORT")
  RUN+=(--base-url "http://127.0.0.1:${PORT}/v1")
fi
echo "job ${SLURM_ARRAY_TASK_ID}: $PRESET x $BENCHMARK"
if [ "${#SERVE[@]}" -gt 0 ]; then echo "serve: $(printf '%q ' "${SERVE[@]}")"; fi
echo "run: $(printf '%q ' "${RUN[@]}")"
if [ "${LMMS_AGENTIC_DRY_RUN:-0}" = 1 ]; then exit 0; fi
mkdir -p "$RESPONSES"
if [ "${#SERVE[@]}" -gt 0 ]; then
  LOG="$OUTPUT/slurm/${SLURM_ARRAY_JOB_ID:-local}_${SLURM_ARRAY_TASK_ID}.vllm.log"
  srun --ntasks=1 --overlap "${SERVE[@]}" > "$LOG" 2>&1 &
  SERVER=$!
  trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true' EXIT
  python -m lmms_agentic.reproduce.slurm wait "http://127.0.0.1:${PORT}/v1" "$SERVER" \
    "${LMMS_AGENTIC_SERVE_TIMEOUT:-@TIMEOUT@}" || { echo "vLLM server log: $LOG" >&2; exit 3; }
fi
srun --ntasks=1 --overlap "${RUN[@]}"'''


def _data_lines(benchmark_names: Sequence[str]) -> list[str]:
    """Header lines: each benchmark's dataset download, and the judge settings of a judged one (Agent-X)."""
    from lmms_agentic.adapters import benchmarks

    lines = ["# Data (or a local copy per benchmark under LMMS_AGENTIC_DATA=/data, as /data/<benchmark>):"]
    for name in benchmark_names:
        source = benchmarks.get(name).source
        lines.append(f"#   hf download {shlex.quote(source.hub_id)} --repo-type dataset"
                     + (f" --revision {shlex.quote(source.revision)}" if source.revision else ""))
    if any(benchmarks.get(name).judged for name in benchmark_names):
        lines += ["# Agent-X's judged metrics need the paper's judge, reachable from the compute nodes, exported",
                  "# before submitting: LMMS_AGENTIC_JUDGE_PRESET=gpt-4o (key in LMMS_AGENTIC_JUDGE_API_KEY) or",
                  "# qwen3-14b-local, or LMMS_AGENTIC_JUDGE_BASE_URL and LMMS_AGENTIC_JUDGE_MODEL."]
    return lines


def _preflight(env: str | None, jobs: Sequence[tuple[Preset, str]], backend: str | None) -> str:
    """The login-node pre-flight command: ``sweep_check`` in the jobs' environment with their offline settings."""
    specs = [f"{preset.name}:{benchmark}" + (f":{backend}" if backend else "") for preset, benchmark in jobs]
    offline = " ".join(f'{item.split("=")[0]}="${{{item.split("=")[0]}:-{item.split("=")[1]}}}"' for item in OFFLINE)
    check = f"env {offline} python -m lmms_agentic.reproduce.sweep_check {shlex.join(specs)}"
    if not env:
        return f"( {check} )"
    activate = shlex.quote(str(Path(env) / "bin" / "activate"))
    return (f"( if [ ! -f {activate} ]; then echo \"no environment at \"{activate} >&2; exit 3; fi; "
            f"source {activate} && {check} )")


def script(names: Sequence[str], benchmark_names: Sequence[str], output: Path, *, backend: str | None = None,
           limit: int | None = None, protocols: Sequence[str] = (), partition: str | None = None,
           account: str | None = None, venv: str | None = None, node_gpus: int = 8) -> str:
    """The sweep script for every preset in ``names`` x benchmark in ``benchmark_names`` that the preset has a
    published row for (pairs without one are left out and listed in a comment); ``node_gpus`` is the GPU count of
    the cluster's nodes (a preset needing more is refused)."""
    env = venv if venv is not None else _default_venv()
    for option, value in (("--output", str(output)), ("--partition", partition), ("--account", account),
                          ("--venv", env)):
        if value:
            checked(option, value)
    output = Path(os.path.abspath(output))
    env = os.path.abspath(env) if env else env
    jobs, skipped = _jobs(names, benchmark_names, protocols)
    for preset, _ in jobs:
        needed = presets.resources(preset, backend).gpus
        if needed > node_gpus:
            raise presets.PresetError(f"{preset.name} needs {needed} GPUs on one node; the nodes have {node_gpus} "
                                      "(--gpus)")
    out = checked("--output", str(output))
    groups: dict[Resources, list[int]] = {}
    for index, (preset, _) in enumerate(jobs):
        groups.setdefault(presets.resources(preset, backend), []).append(index)
    weights = sorted({presets.backend_for(p, backend).weights for p, _ in jobs
                      if presets.backend_for(p, backend).name in ("vllm", "hf")})
    header = [
        "#!/bin/bash",
        f"# Written by `python -m lmms_agentic reproduce --emit-slurm` on {time.strftime('%Y-%m-%d %H:%M')}.",
        f"# {len(jobs)} jobs (one per preset x benchmark) in {len(groups)} resource groups; results under "
        f"{out}/<preset>/<benchmark>/.",
        "# Submit (and resubmit to resume unfinished jobs) from any folder: bash THIS_SCRIPT (it checks first that",
        "# the environment, weights, data, API keys and judge are ready, and submits nothing otherwise).",
        f"# Afterwards: python -m lmms_agentic report {out}/*/*",
        "# Compute nodes run offline: download the weights and the data first (HF_HOME and LMMS_AGENTIC_DATA on a",
        "# shared filesystem, exported from the submitting shell); API jobs need outbound HTTPS for their provider.",
        *(f"#   hf download {shlex.quote(w)}" for w in weights),
        *_data_lines(list(dict.fromkeys(b for _, b in jobs))),
        "# LMMS_AGENTIC_DRY_RUN=1 prints a job's commands instead of running them. API keys: exported from the",
        "# submitting shell (sbatch --export=ALL, the default), never stored here.",
        *(f"# left out (no published row): {pair}" for pair in skipped),
        "#SBATCH --job-name=lmms-agentic-reproduce",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        f"#SBATCH --output={checked('--output', str(output / 'slurm' / '%A_%a.out'))}",
    ]
    if partition:
        header.append(f"#SBATCH --partition={checked('--partition', partition)}")
    if account:
        header.append(f"#SBATCH --account={checked('--account', account)}")
    body = ["set -euo pipefail", f"OUTPUT={out}", 'CACHE="$OUTPUT/cache"', 'SCRIPT="${BASH_SOURCE[0]}"', "",
            "job() {  # job ID: sets PRESET, BENCHMARK, SERVE (the vLLM server, or empty) and RUN",
            '  case "$1" in']
    for index, (preset, benchmark) in enumerate(jobs):
        serve, run = commands(preset, benchmark, backend, limit, protocols)
        body.append(f"    {index}) PRESET={preset.name}; BENCHMARK={benchmark}; SERVE=({shlex.join(serve)}); "
                    f"RUN=({shlex.join(run)}) ;;")
    body += ['    *) echo "no job $1 in this sweep" >&2; exit 2 ;;', "  esac", "}", "", SUBMIT, "",
             'if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then',
             '  if [ -n "${SLURM_JOB_ID:-}" ]; then',
             '    echo "run this script with bash on the login node: it submits the job arrays itself" >&2; exit 2',
             "  fi",
             '  mkdir -p "$OUTPUT/slurm"',
             '  if [ "${LMMS_AGENTIC_SKIP_PREFLIGHT:-0}" != 1 ]; then',
             f"    {_preflight(env, jobs, backend)} || {{ echo \"pre-flight failed: nothing submitted (fix the "
             "lines above, or LMMS_AGENTIC_SKIP_PREFLIGHT=1 to submit anyway)\" >&2; exit 3; }",
             "  fi"]
    for resources, ids in groups.items():
        body.append(f"  submit {shlex.quote(' '.join(map(str, ids)))} {shlex.join(_sbatch_options(resources))}")
    body += ["  exit 0", "fi", ""]
    if env:
        checked("--venv", env)
        activate = shlex.quote(str(Path(env) / "bin" / "activate"))
        body += [f"if [ ! -f {activate} ]; then echo \"no environment at \"{activate} >&2; exit 3; fi",
                 f"source {activate}"]
    body += [f'export {item.split("=")[0]}="${{{item.split("=")[0]}:-{item.split("=")[1]}}}"' for item in OFFLINE]
    body += ['export LMMS_AGENTIC_JUDGE_CACHE="${LMMS_AGENTIC_JUDGE_CACHE:-$CACHE/judge}"',
             'job "$SLURM_ARRAY_TASK_ID"', JOB.replace("@TIMEOUT@", str(SERVE_TIMEOUT_S))]
    return "\n".join([*header, "", *body]) + "\n"


def write(target: Path, text: str) -> Path:
    """Write the script (executable)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    target.chmod(0o755)
    return target


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_for_server(url: str, pid: int, timeout_s: float, poll_s: float = 1.0) -> str:
    """"" once ``url/models`` answers 200, else why not (the server process ``pid`` ended, or the time ran out)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return f"the vLLM server (pid {pid}) exited before answering {url}/models"
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5) as reply:
                if reply.status == 200:
                    return ""
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(poll_s)
    return f"the vLLM server did not answer {url}/models within {timeout_s:g} s (raise LMMS_AGENTIC_SERVE_TIMEOUT)"


def main(argv: Sequence[str]) -> int:
    """``free-port`` | ``wait URL PID [TIMEOUT_S]`` (the helpers the sweep script calls)."""
    if list(argv[:1]) == ["free-port"]:
        print(free_port())
        return 0
    if list(argv[:1]) == ["wait"] and len(argv) in (3, 4):
        problem = wait_for_server(argv[1], int(argv[2]), float(argv[3]) if len(argv) == 4 else SERVE_TIMEOUT_S)
        if problem:
            print(f"lmms-agentic sweep: error: {problem}", file=sys.stderr)
            return 1
        return 0
    print("usage: python -m lmms_agentic.reproduce.slurm free-port | wait URL PID [TIMEOUT_S]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
