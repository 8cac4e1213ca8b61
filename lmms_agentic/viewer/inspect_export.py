"""``python -m lmms_agentic export-inspect RUN OUT``: a finished lmms-eval or lm-eval run written as Inspect logs, so
``inspect view`` and Inspect's log tools read it. Inspect is an optional extra (``pip install -e '.[inspect]'`` in
the checkout); without it the command stops with one line naming that install command.

One log per top-level task (or group) and model of the run (``viewer.build.load_runs``: a folder holding several
models' runs gives one run per model), written with Inspect's ``write_eval_log`` as
``OUT/<created>_<task>_<id>.eval`` (``--format json`` for Inspect's JSON logs):

- eval spec: the task, its version (the results' ``versions``: the task config's ``metadata.version``), the model
  (``<harness model>/<run label>``, its arguments with secrets left out), the dataset (benchmark, the data location
  the run read, the logged samples), the task config's generation settings, harness and package versions;
- results: one Inspect score per numeric metric of the task's row in the results file, the benchmark's headline
  (``viewer.overview.headline``) first: the harness's value and standard errors, as the results file has them (NaN
  where it has NaN); ``scored_samples`` / ``unscored_samples`` count the samples' scores; a group's leaf rows ride in
  the results' metadata;
- samples: every logged line of the task's leaf tasks (``viewer.inspect_samples``), ids unique within the log (the
  record id; ``<leaf>:`` in front and ``#n`` behind when one repeats).

Not carried: media bytes (paths only), lm-eval's lines of filters other than ``none`` as samples (their metrics are in
the results), token usage and timings (the harnesses log none per sample).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.report.runs import Run
from lmms_agentic.viewer import build, overview

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample, EvalScore
    from inspect_ai.model import GenerateConfig

    from lmms_agentic.viewer.inspect_samples import MediaFinder

HELP = "write a run as Inspect logs (for inspect view and Inspect's log reader; needs the [inspect] extra)"
INSTALL = "pip install -e '.[inspect]' in the checkout (or pip install 'inspect_ai>=0.3.250')"
SECRET = re.compile(r"key|token|secret|password|auth", re.IGNORECASE)
"""Model arguments whose values are not carried into the logs."""


class InspectMissing(ValueError):
    """Inspect is not installed; the message names the install command."""


def require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise InspectMissing(f"Inspect (inspect_ai) is not installed; install the extra: {INSTALL}") from exc


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("run", type=Path, help="an lmms-eval or lm-eval --output_path folder (or results file), "
                                               "written with --log_samples")
    parser.add_argument("output", type=Path, help="folder to write the Inspect logs into")
    parser.add_argument("--format", choices=("eval", "json"), default="eval", help="Inspect log format")
    parser.add_argument("--label", default=None, help="the model's name in the logs (default: the reports' label)")
    return parser


def execute(args: argparse.Namespace) -> int:
    written = export(args.run, args.output, args.format, args.label)
    for path, log in written:
        print(f"  {path.name}: {log.eval.task}, {log.eval.model}, {len(log.samples or [])} samples")
    print(f"inspect logs: {len(written)} in {args.output.resolve()} (inspect view --log-dir {args.output})")
    return 0


def export(run: Path, output: Path, log_format: str = "eval",
           label: str | None = None) -> list[tuple[Path, EvalLog]]:
    """Write one Inspect log per task and model of the run under ``output``; (path, log) of each."""
    require_inspect()
    from inspect_ai.log import write_eval_log

    from lmms_agentic.viewer.inspect_samples import MediaFinder

    written = []
    output.mkdir(parents=True, exist_ok=True)
    for viewed in build.load_runs([Path(run)], [label] if label else None):
        finder = MediaFinder(data_folders(viewed.run))
        for task in viewed.run.top_level():
            log = eval_log(viewed.run, viewed.label, task, finder)
            path = output / file_name(log, log_format)
            write_eval_log(log, str(path), format="eval" if log_format == "eval" else "json")
            written.append((path, log))
    return written


def file_name(log: EvalLog, log_format: str) -> str:
    """Inspect's naming, ``<created>_<task>_<task id>``; the task's underscores become dashes as Inspect's own do."""
    created = datetime.fromisoformat(log.eval.created).astimezone(timezone.utc)
    return f"{created:%Y-%m-%dT%H-%M-%S}+00-00_{log.eval.task.replace('_', '-')}_{log.eval.task_id}.{log_format}"


def _run_data(run: Run) -> dict[str, Any]:
    data = (run.results.get("lmms_agentic") or {}).get("data")
    return data if isinstance(data, dict) else {}


def data_folders(run: Run) -> list[Path]:
    """The data folders the run read (the results' ``lmms_agentic.data``), where bare media names are looked up."""
    found = [Path(entry["path"]) for entry in _run_data(run).values()
             if isinstance(entry, Mapping) and isinstance(entry.get("path"), str)]
    return [path for path in found if path.is_dir()]


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def result_metrics(row: Mapping[str, Any], headline: str | None) -> dict[str, dict[str, float]]:
    """Score name -> {metric name: value, "stderr...": value} of every numeric ``<metric>,<filter>`` entry of a
    results row; the filter joins the name unless it is ``none``; the headline first."""
    found: dict[str, dict[str, float]] = {}
    errors: dict[str, dict[str, float]] = {}
    for key, value in row.items():
        number = _number(value)
        if "," not in key or number is None:
            continue
        name, _, kind = key.partition(",")
        metric, marker, stat = name.partition("_stderr")
        score = metric if kind == "none" else f"{metric},{kind}"
        if marker:
            errors.setdefault(score, {})[f"stderr{stat}"] = number
        else:
            found[score] = {metric: number}
    order = sorted(found, key=lambda score: score != headline)
    return {score: {**found[score], **errors.get(score, {})} for score in order}


def _scores(metrics: Mapping[str, Mapping[str, float]], samples: Sequence[EvalSample]) -> list[EvalScore]:
    from inspect_ai.log import EvalMetric, EvalScore

    scores = []
    for name, values in metrics.items():
        given = [s.scores[name] for s in samples if s.scores and name in s.scores]
        unscored = sum(isinstance(score.value, float) and math.isnan(score.value) for score in given)
        scores.append(EvalScore(name=name, scorer=name, scored_samples=len(given) - unscored,
                                unscored_samples=unscored,
                                metrics={stat: EvalMetric(name=stat, value=value) for stat, value in values.items()}))
    return scores


def collect_samples(run: Run, task: str, model: str, metrics: Sequence[str], finder: MediaFinder) -> list[EvalSample]:
    """Every logged line of the task's leaves, with ids unique within the log."""
    from lmms_agentic.viewer.inspect_samples import eval_sample

    found: list[EvalSample] = []
    taken: set[str] = set()
    for leaf in dict.fromkeys(run.leaves(task)):
        owner = benchmarks.benchmark_of_task(leaf)
        for line in run.lines(leaf):
            if line.get("filter", "none") != "none":
                continue
            record = read_record(line) or {}
            sample_id = str(record.get("id", f"{leaf}:{line.get('doc_id')}"))
            if sample_id in taken:
                sample_id = f"{leaf}:{sample_id}"
            base, number = sample_id, 1
            while sample_id in taken:
                number += 1
                sample_id = f"{base}#{number}"
            taken.add(sample_id)
            found.append(eval_sample(line, leaf, sample_id, metrics, model, owner, finder))
    return found


def model_name(run: Run, label: str) -> str:
    """``<harness model>/<label>`` (Inspect names models ``<provider>/<model>``)."""
    backend = str(run.config.get("model") or "model")
    return label if label.startswith(f"{backend}/") else f"{backend}/{label}"


def model_args(run: Run) -> dict[str, Any]:
    """The backend's arguments (``k=v,...``), secrets left out."""
    text = run.config.get("model_args")
    pairs = [item.partition("=") for item in text.split(",") if item.strip()] if isinstance(text, str) else []
    return {key.strip(): "(not carried)" if SECRET.search(key) else value for key, _, value in pairs}


def created_at(run: Run) -> str:
    """When the run was written: the results' ``date`` (lm-eval: a timestamp; lmms-eval: a local time stamp in
    the run's ``--timezone``), else the results file's modification time; ISO, UTC."""
    date = run.results.get("date")
    stamp = _number(date)
    moment = datetime.fromtimestamp(run.results_file.stat().st_mtime if stamp is None else stamp, timezone.utc)
    if isinstance(date, str):
        with contextlib.suppress(ValueError):
            moment = datetime.strptime(date, "%Y%m%d_%H%M%S").replace(tzinfo=_zone(run))
    return moment.astimezone(timezone.utc).isoformat()


def _zone(run: Run) -> Any:
    name = (run.config.get("resolved_cli_args") or {}).get("timezone")
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(str(name)) if name else timezone.utc
    except (ValueError, KeyError, OSError):  # an unknown zone name (ZoneInfoNotFoundError is a KeyError)
        return timezone.utc


def generate_config(run: Run, leaves: Sequence[str]) -> GenerateConfig:
    """The first leaf config's generation settings."""
    from inspect_ai.model import GenerateConfig

    configs = run.results.get("configs") or {}
    settings: Mapping[str, Any] = next(
        (c["generation_kwargs"] for leaf in leaves
         if isinstance(c := configs.get(leaf), Mapping) and isinstance(c.get("generation_kwargs"), Mapping)), {})
    tokens = settings.get("max_new_tokens", settings.get("max_gen_toks"))
    stops = settings.get("until")
    return GenerateConfig(max_tokens=int(tokens) if isinstance(tokens, int) else None,
                          temperature=_number(settings.get("temperature")), top_p=_number(settings.get("top_p")),
                          stop_seqs=[str(s) for s in stops] if isinstance(stops, list) and stops else None)


def _version(value: Any) -> int | str:
    return value if isinstance(value, int) and not isinstance(value, bool) else "" if value is None else str(value)


def _packages(run: Run) -> dict[str, str]:
    ours = run.results.get("lmms_agentic") or {}
    found = {"lmms_agentic": ours.get("version"), "lmms_eval": ours.get("lmms_eval"),
             "lm_eval": run.results.get("lm_eval_version")}
    return {name: str(version) for name, version in found.items() if version}


def eval_log(run: Run, label: str, task: str, finder: MediaFinder) -> EvalLog:
    """The Inspect log of one top-level task of one model's run (module docstring)."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalPlan,
        EvalPlanStep,
        EvalResults,
        EvalSpec,
        EvalStats,
    )

    owner = benchmarks.benchmark_of_task(task)
    row = run.results["results"].get(task) or {}
    metrics = result_metrics(row, overview.headline(run, task))
    model = model_name(run, label)
    leaves = list(dict.fromkeys(run.leaves(task)))
    samples = collect_samples(run, task, model, list(metrics), finder)
    created = created_at(run)
    digest = hashlib.sha256(json.dumps([str(run.results_file), run.stamp, task, label]).encode()).hexdigest()
    data = _run_data(run).get(owner.name if owner else "") or {}
    tools = any(m.role == "tool" for sample in samples for m in sample.messages)
    spec = EvalSpec(
        task_id=digest[:22], eval_id=digest[22:44], run_id=digest[44:], created=created, task=task,
        task_version=_version((run.results.get("versions") or {}).get(task)),
        dataset=EvalDataset(name=owner.name if owner else task, location=str(data.get("path") or "") or None,
                            samples=len(samples), sample_ids=[str(s.id) for s in samples]),
        model=model, model_args=model_args(run), model_generate_config=generate_config(run, leaves),
        config=EvalConfig(limit=_limit(run), epochs=1, log_samples=True), packages=_packages(run),
        metadata={"harness": run.results.get("harness"), "results_file": str(run.results_file), "run_label": label,
                  "leaf_tasks": leaves, "data": data, "judge": (run.results.get("lmms_agentic") or {}).get("judge"),
                  "notes": run.notes, "exported_by": "lmms-agentic export-inspect"})
    subtasks = {leaf: {k: v for k, v in (run.results["results"].get(leaf) or {}).items() if _number(v) is not None}
                for leaf in leaves if leaf != task}
    results = EvalResults(total_samples=len(samples), completed_samples=len(samples),
                          scores=_scores(metrics, samples),
                          metadata={"subtasks": subtasks} if subtasks else None)
    plan = EvalPlan(steps=[EvalPlanStep(solver="executed-tools loop" if tools else "generate")],
                    config=spec.model_generate_config)
    return EvalLog(status="success", eval=spec, plan=plan, results=results,
                   stats=EvalStats(started_at=created, completed_at=created), samples=samples)


def _limit(run: Run) -> int | None:
    limit = run.config.get("limit")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else None  # a fraction is not a count
