"""`python -m lmms_agentic reproduce`: run a published model with its preset, then compare with the paper.

    reproduce --benchmark robovista --preset qwen2_5_vl_7b [--backend vllm|hf|api|dummy] [--limit N]
              [--protocol zero_shot,cot] [--output runs/reproduce]
    reproduce --from RUN_DIR [--preset P] [--benchmark B]          # compare an existing lmms-eval output folder
    reproduce --emit-slurm sweep.sbatch --preset a,b --benchmark x,y   # then `bash sweep.sbatch` submits the arrays

A run goes through lmms-eval's Python API (``evaluator.simple_evaluate``, results and samples saved as the CLI
saves them) into ``OUTPUT/<preset>/<benchmark>/``, next to ``reproduce.json``: the preset, backend, model and
generation arguments (never an API key), lmms-eval/torch/transformers/vLLM versions, the data location and revision
(the results file's ``lmms_agentic.data`` provenance), the judge configuration (also written into the results file
as ``lmms_agentic.judge`` for ``rescore``; never the key), seeds, world size and the command line. The comparison
(``report.published``: every comparable published number, the difference and a tolerance from both sides'
sampling error; match / MISS / inconclusive, or not comparable with the reason) is printed and saved as
``comparison.md``, with the reasons rows are missing and a warning when the run is another model
(``explain``). Under ``torchrun`` / ``accelerate launch`` every rank evaluates its share; rank 0 writes and
compares.

Before anything is created, ``preflight.check`` makes sure the backend imports, the weights are reachable and an
API preset's key is set; otherwise the command stops with one line naming what is missing and the fix. A run that
fails later removes the run folders it created while they are still empty. ``--base-url`` with an open-weight
preset evaluates the model served there (``vllm serve``, the Slurm sweep's pattern) through lmms-eval's OpenAI
client; ``--response-cache DIR`` keeps lmms-eval's response cache there (a rerun re-asks nothing it has).

API presets read their key from the variable the preset names (``key_env``) and hand it to lmms-eval's OpenAI
backend inside this process; presets that name a reasoning effort run ``presets.openai_effort``. Smoke presets
(``tiny_*``) build their tiny checkpoint and run on the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmms_agentic import presets, tasks_dir
from lmms_agentic.presets import Backend, Preset, served

if TYPE_CHECKING:
    from lmms_agentic.report.published import Comparison
    from lmms_agentic.report.runs import Run


SEEDS = {"random": 0, "numpy": 1234, "torch": 1234, "fewshot": 1234}
VERSIONED = ("lmms_agentic", "lmms_eval", "torch", "transformers", "vllm", "accelerate", "datasets", "openai")


class ReproduceError(ValueError):
    """A reproduction cannot start or finish for a reason the user can fix (one line)."""


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            found[name] = metadata.version(name.replace("_", "-"))
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


def evaluate(model: Any, model_args: str, tasks: Sequence[str], output: Path, *, task_model_name: str,
             gen_kwargs: str = "", limit: int | None = None, response_cache: Path | None = None) -> Path | None:
    """Run lmms-eval through its Python API and save results and samples under ``output`` as the CLI does.
    ``model`` is a backend name or an lmms-eval model object; ``task_model_name`` picks the tasks' per-backend
    kwargs. Returns the results file (None on ranks other than 0)."""
    from lmms_eval import evaluator
    from lmms_eval.loggers import EvaluationTracker
    from lmms_eval.tasks import TaskManager
    from lmms_eval.utils import get_datetime_str

    tracker = EvaluationTracker(output_path=str(output))
    manager = TaskManager("INFO", include_path=tasks_dir(), model_name=task_model_name)
    missing = [task for task in tasks if task not in manager.all_tasks]
    if missing:
        raise ReproduceError(f"lmms-eval does not know the task(s) {', '.join(missing)}")
    stamp = get_datetime_str(timezone="Asia/Singapore")
    results = evaluator.simple_evaluate(
        model=model, model_args=model_args, tasks=list(tasks), batch_size=1, limit=limit, log_samples=True,
        evaluation_tracker=tracker, gen_kwargs=gen_kwargs or None, task_manager=manager, datetime_str=stamp,
        random_seed=SEEDS["random"], numpy_random_seed=SEEDS["numpy"], torch_random_seed=SEEDS["torch"],
        fewshot_random_seed=SEEDS["fewshot"], use_cache=None if response_cache is None else str(response_cache))
    if results is None:
        return None
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples, datetime_str=stamp)
    for task_name in results["configs"]:
        tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    found = sorted(output.rglob(f"{stamp}_results.json"))
    if not found:
        raise ReproduceError(f"lmms-eval wrote no {stamp}_results.json under {output}")
    return found[-1]


def record_judge(results_file: Path) -> dict[str, Any]:
    """Add the judge configuration in effect (no key; None without a judge) to the results file as
    ``lmms_agentic.judge``, for ``rescore`` to reuse; returns the results."""
    from lmms_agentic.judges.config import judge_record

    results: dict[str, Any] = json.loads(results_file.read_text(encoding="utf-8"))
    results.setdefault("lmms_agentic", {})["judge"] = judge_record(os.environ)
    results_file.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    return results


def _prepare(preset: Preset, backend: Backend, output: Path, base_url: str | None, weights: str | None
             ) -> tuple[Any, str, str]:
    """(model for simple_evaluate, model_args, backend name for task kwargs); sets the API key variable."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if backend.name == "vllm" and base_url:
        os.environ.setdefault("OPENAI_API_KEY", "EMPTY")  # vllm serve without --api-key accepts any key
        return "openai", served.served_model_args(backend, base_url, weights), "openai"
    if backend.name == "api":
        os.environ["OPENAI_API_KEY"] = os.environ[backend.key_env or "OPENAI_API_KEY"]  # preflight checked it
        if base_url:
            backend = Backend(backend.name, backend.model, backend.weights, {**backend.args, "base_url": base_url},
                              backend.processes, backend.key_env, backend.reasoning_effort)
        model = "openai"
        if backend.reasoning_effort is not None:
            from lmms_agentic.presets import openai_effort

            model = openai_effort.register()
        return model, presets.model_args(backend, world, weights), "openai"
    if preset.kind == "smoke" and weights is None:
        from lmms_agentic.devtools import tiny_vlm

        kind = preset.weights.removeprefix(presets.TINY_PREFIX)
        checkpoint = tiny_vlm.build(output.parent / f"_tiny_{kind}", kind)
        return backend.model, tiny_vlm.model_args(checkpoint), backend.model
    return backend.model, presets.model_args(backend, world, weights), backend.model


def _created(folder: Path) -> list[Path]:
    """The folders ``mkdir -p folder`` creates (deepest first)."""
    return [path for path in (folder, *folder.parents) if not path.exists()]


def _remove_if_empty(created: list[Path]) -> None:
    for path in created:
        try:
            path.rmdir()
        except OSError:  # not empty (something was written), or already gone
            return


def run(preset: Preset, benchmark: str, *, backend_name: str | None = None, limit: int | None = None,
        protocols: Sequence[str] = (), output: Path = Path("runs/reproduce"), base_url: str | None = None,
        weights: str | None = None, response_cache: Path | None = None) -> Run | None:
    """Evaluate ``preset`` on ``benchmark`` and return the finished run (None on ranks other than 0)."""
    from lmms_agentic.adapters import benchmarks
    from lmms_agentic.reproduce import preflight

    if benchmark not in benchmarks.all_benchmarks():
        raise ReproduceError(f"unknown benchmark {benchmark!r}; known: {', '.join(benchmarks.all_benchmarks())}")
    default, table = presets.protocols(benchmark)
    chosen = list(protocols) or [default]
    unknown = [p for p in chosen if p not in table]
    if unknown:
        raise ReproduceError(f"{benchmark} has no protocol {', '.join(unknown)}; known: {', '.join(table)}")
    tasks = [presets.task_for(preset, benchmark, p) for p in chosen]
    backend = preflight.check(preset, backend_name, weights=weights, base_url=base_url)
    folder = output / preset.name / benchmark
    created = _created(folder)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        return _evaluate_into(folder, preset, benchmark, backend, chosen, tasks, limit=limit, base_url=base_url,
                              weights=weights, response_cache=response_cache)
    except BaseException:
        _remove_if_empty(created)
        raise


def _evaluate_into(folder: Path, preset: Preset, benchmark: str, backend: Backend, chosen: list[str],
                   tasks: list[str], *, limit: int | None, base_url: str | None, weights: str | None,
                   response_cache: Path | None) -> Run | None:
    from lmms_agentic.adapters import benchmarks
    from lmms_agentic.report.runs import load_run

    model, model_args, task_model = _prepare(preset, backend, folder, base_url, weights)
    extra = presets.gen_kwargs(preset, benchmark)
    manifest: dict[str, Any] = {
        "preset": {"name": preset.name, "title": preset.title, "kind": preset.kind, "weights": preset.weights,
                   "verified": preset.verified, "reference": {k: list(v) for k, v in preset.reference.items()}},
        "benchmark": benchmark, "protocols": chosen, "tasks": tasks,
        "backend": {"name": backend.name, "model": model if isinstance(model, str) else str(model),
                    "model_args": model_args, "key_env": backend.key_env, "reasoning_effort":
                    backend.reasoning_effort, "served": backend.name == "vllm" and bool(base_url)},
        "gen_kwargs": extra, "limit": limit, "seeds": SEEDS, "versions": versions(),
        "data": {"manifest_revision": benchmarks.get(benchmark).source.revision or "",
                 "hub_id": benchmarks.get(benchmark).source.hub_id,
                 "environment": {k: v for k, v in os.environ.items() if k.startswith("LMMS_AGENTIC_DATA")}},
        "world_size": int(os.environ.get("WORLD_SIZE", "1")), "command": sys.argv,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    print(f"reproduce: {preset.name} on {benchmark} ({', '.join(tasks)}) with --model {manifest['backend']['model']}"
          f" --model_args {model_args}" + (f" --gen_kwargs {extra}" if extra else ""), flush=True)
    results_file = evaluate(model, model_args, tasks, folder, task_model_name=task_model, gen_kwargs=extra,
                            limit=limit, response_cache=response_cache)
    if results_file is None or _rank() != 0:
        return None
    results = record_judge(results_file)
    manifest["data"]["provenance"] = (results.get("lmms_agentic") or {}).get("data")
    manifest["judge"] = results["lmms_agentic"]["judge"]
    manifest.update(finished=time.strftime("%Y-%m-%dT%H:%M:%S%z"), results_file=str(results_file))
    from lmms_agentic.report.runs import RUN_MANIFEST

    (folder / RUN_MANIFEST).write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
    return load_run(folder)


def comparisons(run_: Run, preset: Preset | None = None, benchmark_names: Sequence[str] = (),
                protocols: Sequence[str] = ()) -> list[Comparison]:
    """Every comparable published number for the run (all its benchmarks unless named)."""
    from lmms_agentic.report import published

    preset = preset or run_.preset
    if preset is None:
        raise ReproduceError(f"{run_.results_file}: cannot tell which published model this run is (model "
                             f"{run_.config.get('model')!r}); pass --preset NAME")
    names = list(benchmark_names) or run_.benchmarks()
    return [c for name in names for c in published.compare(run_, preset, name, protocols or None)]


def render(run_: Run, found: list[Comparison], preset: Preset | None = None, smoke_note: bool = True) -> str:
    """The comparison table with a title line, labelled when the model is a smoke-test or baseline model."""
    from lmms_agentic.report import published

    preset = preset or run_.preset
    label = f"{preset.name} ({preset.title})" if preset is not None else run_.label
    title = f"## Reproduction: {label} vs published numbers ({run_.results_file})"
    if preset is not None and preset.kind == "smoke" and smoke_note:
        title += ("\nSMOKE TEST: a random-weight model on the bundled mini split, compared with chance rows to show "
                  "the comparison works; these numbers are not scores.")
    data = (run_.results.get("lmms_agentic") or {}).get("data") or {}
    small = sorted(name for name, facts in data.items() if isinstance(facts, dict) and facts.get("kind") == "mini")
    if small:
        title += f"\nData: the bundled mini split of {', '.join(small)} (a smoke test, never a score)."
    if run_.config.get("limit") is not None:
        title += f"\n--limit {run_.config['limit']}: a partial run, not comparable with the paper's full set."
    return published.table(found, title) + (f"\n\n{published.headline(found)}" if found else "")


def smoke_table(demo_output: Path) -> str:
    """The reproduction tables for the demo's smoke-model runs (``demo_output/dummy``, ``.../tiny_vlm``), labelled
    as smoke tests; for `demo.py` to print at the end."""
    from lmms_agentic.report.runs import load_run

    parts = ["\n".join(["=" * 100, "REPRODUCTION CHECK ON SMOKE-TEST MODELS: the bundled mini split, a constant-letter "
                         "model and a random-weight model.", "It shows the comparison with the published numbers "
                         "working; these are not scores.", "=" * 100])]
    for name in ("dummy", "tiny_vlm"):
        folder = demo_output / name
        if not folder.is_dir():
            continue
        run_ = load_run(folder)
        parts.append(render(run_, comparisons(run_)) if run_.preset is not None else
                     f"{folder}: no preset describes this run")
    return "\n\n".join(parts)


def _split(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of `python -m lmms_agentic reproduce`."""
    parser.add_argument("--preset", help="preset name(s) (`python -m lmms_agentic presets`); comma list for slurm")
    parser.add_argument("--benchmark", help="robovista, agentvqa or agentx; comma list for slurm / --from")
    parser.add_argument("--backend", choices=presets.BACKENDS, help="default: the preset's first (vllm first)")
    parser.add_argument("--protocol", help="published protocol(s), comma list (default: the benchmark's main one)")
    parser.add_argument("--limit", type=int, help="items per task (a smoke run: not comparable with the paper)")
    parser.add_argument("--output", type=Path, default=Path("runs/reproduce"), help="runs go to OUTPUT/preset/bench")
    parser.add_argument("--from", dest="source", type=Path, help="compare this lmms-eval output folder, no run")
    parser.add_argument("--base-url", help="API presets: another OpenAI-compatible endpoint; open-weight presets "
                        "(--backend vllm): the model served there by `vllm serve`")
    parser.add_argument("--response-cache", type=Path, help="lmms-eval response cache folder (reruns re-ask nothing)")
    parser.add_argument("--weights", help="local weights folder instead of the preset's repository id")
    parser.add_argument("--emit-slurm", type=Path, help="write a Slurm job-array script instead of running")
    parser.add_argument("--gpus", type=int, default=8, help="--emit-slurm: GPUs of one node (default 8); each job "
                        "asks for its preset's own")
    parser.add_argument("--partition", help="--emit-slurm: Slurm partition")
    parser.add_argument("--account", help="--emit-slurm: Slurm account")
    parser.add_argument("--venv", help="--emit-slurm: environment the jobs activate (default: the running one)")
    parser.add_argument("--fail-on-miss", action="store_true", help="exit 1 when a published number is missed")
    return parser


def execute(args: argparse.Namespace) -> int:
    """Run the command for parsed ``args``; user errors raise (ValueError subclasses, FileNotFoundError)."""
    from lmms_agentic.report.runs import load_run

    names, bench_names, protocols = _split(args.preset), _split(args.benchmark), _split(args.protocol)
    if args.emit_slurm is not None:
        from lmms_agentic.reproduce import slurm

        if not names or not bench_names:
            raise ReproduceError("--emit-slurm needs --preset and --benchmark (comma lists)")
        text = slurm.script(names, bench_names, args.output, backend=args.backend, node_gpus=args.gpus,
                            limit=args.limit, protocols=protocols, partition=args.partition, account=args.account,
                            venv=args.venv)
        target = slurm.write(args.emit_slurm, text)
        print(f"wrote {target} ({text.count(') PRESET=')} jobs); submit (and later resume) with: bash {target}")
        return 0
    if args.source is not None:
        run_ = load_run(args.source)
        preset = presets.get(names[0]) if names else None
        found = comparisons(run_, preset, bench_names, protocols)
    else:
        if len(names) != 1 or len(bench_names) != 1:
            raise ReproduceError("give one --preset and one --benchmark (or --from RUN_DIR, or --emit-slurm)")
        preset = presets.get(names[0])
        finished = run(preset, bench_names[0], backend_name=args.backend, limit=args.limit, protocols=protocols,
                       output=args.output, base_url=args.base_url, weights=args.weights,
                       response_cache=args.response_cache)
        if finished is None:
            return 0
        run_ = finished
        found = comparisons(run_, preset, bench_names, protocols)
    text = render(run_, found, preset)
    from lmms_agentic.reproduce import explain

    lines = explain.notes(run_, preset or run_.preset, bench_names, protocols)
    text += ("\n\n" + "\n".join(f"- {line}" for line in lines)) if lines else ""
    print(text)
    if args.source is None:
        target = run_.path / "comparison.md"
        target.write_text(text + "\n", encoding="utf-8")
        from lmms_agentic.report.runs import RUN_MANIFEST

        print(f"\nrun folder: {run_.path} (comparison.md, {RUN_MANIFEST})")
    return 1 if args.fail_on_miss and any(c.status == "MISS" for c in found) else 0
