"""The Slurm sweep's pre-flight, run on the login node by ``bash sweep.sbatch`` before anything is submitted:
every job's needs checked as the compute node will see them (offline, through the same environment), so a sweep
that cannot work stops in seconds instead of failing each array task after it queued.

    python -m lmms_agentic.reproduce.sweep_check PRESET:BENCHMARK[:BACKEND] ...

Checked per job: the backend imports (``preflight``), the weights of a vLLM or Hugging Face preset are in the
Hugging Face cache (``HF_HUB_OFFLINE=1`` unless the submitting shell said otherwise), an API preset's key is
exported (``sbatch`` passes the environment on); per benchmark: its data are where the jobs will look (a local copy
under ``LMMS_AGENTIC_DATA``, the bundled mini split, or the Hub snapshot in the cache); for a judged benchmark
(Agent-X): a judge is configured and answers. Each problem is one line with its fix; exit status 3 when there is
any (the script then submits nothing; ``LMMS_AGENTIC_SKIP_PREFLIGHT=1`` submits anyway).
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence

JUDGE_TIMEOUT_S = 10.0
JUDGE_FIX = ("export LMMS_AGENTIC_JUDGE_PRESET=gpt-4o (key in LMMS_AGENTIC_JUDGE_API_KEY) or qwen3-14b-local, or "
             "LMMS_AGENTIC_JUDGE_BASE_URL and LMMS_AGENTIC_JUDGE_MODEL, before `bash sweep.sbatch`; the endpoint "
             "must be reachable from the compute nodes")


def job_problems(preset_name: str, benchmark: str, backend_name: str | None) -> list[str]:
    """What stops one job (weights, backend modules, API key), each with its fix."""
    from lmms_agentic import presets
    from lmms_agentic.presets import served
    from lmms_agentic.reproduce import preflight

    preset = presets.get(preset_name)
    backend = presets.backend_for(preset, backend_name)
    found = preflight.problems(preset, backend, served=False)
    if backend.name == "vllm" and not served.not_servable(backend):
        found += preflight.problems(preset, backend, served=True)  # `vllm serve`, then lmms-eval's OpenAI client
    return [f"{preset_name} x {benchmark}: {problem}" for problem in dict.fromkeys(found)]


def data_problem(benchmark: str, environ: Mapping[str, str]) -> str:
    """"" when the benchmark's data are where the jobs will read them, else what is missing and the fix."""
    from pathlib import Path

    from lmms_agentic.adapters import benchmarks
    from lmms_agentic.adapters.data import locate

    source = benchmarks.get(benchmark).source
    location = locate(source, dict(environ))
    if location.kind in ("local", "mini"):
        if location.root and Path(location.root).is_dir():
            return ""
        return (f"{benchmark}: no data at {location.where} ({location.chosen_by}): copy the benchmark there "
                f"(hf download {source.hub_id} --repo-type dataset --local-dir {location.where})")
    from huggingface_hub import snapshot_download

    try:
        snapshot_download(source.hub_id, repo_type="dataset", revision=source.revision, local_files_only=True)
    except Exception as error:  # not cached (LocalEntryNotFoundError) or an unreadable cache
        return (f"{benchmark}: the Hub dataset {source.hub_id} is not in the Hugging Face cache of this environment "
                f"({type(error).__name__}) and the compute nodes run offline: hf download {source.hub_id} "
                f"--repo-type dataset (with the jobs' HF_HOME), or a local copy with LMMS_AGENTIC_DATA=/data")
    return ""


def judge_problem(environ: Mapping[str, str]) -> str:
    """"" when a judge is configured and answers ``GET base_url/models``, else what is wrong and the fix."""
    from lmms_agentic.judges.config import JudgeConfig, mask_url

    try:
        config = JudgeConfig.from_env(environ)
    except (ValueError, KeyError) as error:
        return f"agentx: the judge settings are malformed ({error})"
    if not config.configured:
        return f"agentx: its judged metrics need a judge and none is configured: {JUDGE_FIX}"
    url = f"{config.base_url}".removesuffix("/chat/completions").rstrip("/") + "/models"
    request = urllib.request.Request(url, headers={k: v for k, v in config.headers().items() if k != "Content-Type"})
    try:
        with urllib.request.urlopen(request, timeout=JUDGE_TIMEOUT_S):
            return ""
    except urllib.error.HTTPError as error:
        if error.code in (401, 403):
            return (f"agentx: the judge at {mask_url(url)} refused the key (HTTP {error.code}): check "
                    "LMMS_AGENTIC_JUDGE_API_KEY")
        return ""  # it answered: some servers do not list models
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        return f"agentx: the judge at {mask_url(url)} does not answer from here ({reason}): {JUDGE_FIX}"


def check(jobs: Sequence[tuple[str, str, str | None]], environ: Mapping[str, str] | None = None) -> list[str]:
    """Every problem of the sweep's ``jobs`` (preset, benchmark, backend), each with its fix."""
    from lmms_agentic.adapters import benchmarks

    env = os.environ if environ is None else environ
    found = [problem for preset, benchmark, backend in jobs for problem in job_problems(preset, benchmark, backend)]
    for benchmark in dict.fromkeys(benchmark for _, benchmark, _ in jobs):
        found.append(data_problem(benchmark, env))
        if benchmarks.get(benchmark).judged:
            found.append(judge_problem(env))
    return [problem for problem in found if problem]


def main(argv: Sequence[str]) -> int:
    jobs = []
    for item in argv:
        preset, _, rest = item.partition(":")
        benchmark, _, backend = rest.partition(":")
        jobs.append((preset, benchmark, backend or None))
    if not jobs:
        print("usage: python -m lmms_agentic.reproduce.sweep_check PRESET:BENCHMARK[:BACKEND] ...", file=sys.stderr)
        return 2
    problems = check(jobs)
    for problem in problems:
        print(f"pre-flight: {problem}", file=sys.stderr)
    if problems:
        return 3
    print(f"pre-flight: {len(jobs)} jobs ready (weights, data, keys, judge)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
