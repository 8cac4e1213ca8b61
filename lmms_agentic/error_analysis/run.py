"""Reading a finished lmms-eval run for the error analysis: variants, items, source documents, stratified samples.

``load_run`` reads the run folder (lmms-eval's or lm-eval's layout) through ``report.run_files``, as ``python -m
lmms_agentic report`` does, pools each group's subtasks into one variant, and reads every sample line: the record
(``adapters.samples``), the model's full reply (the harness's ``resps``, which keeps the thinking; lmms-eval drops
``resps`` from the line when it equals ``filtered_resps``) and the task's ``lmms_eval_specific_kwargs`` from the results
file's ``configs``.

Documents: the records hold no pixels, so ``DocStore`` loads the benchmark's rows through its hooks
(``hooks.all_docs()``) from the data location of the current environment, which must be the run's (``LMMS_AGENTIC_DATA``
as set for the run; ``use_run_data`` adopts the run's setting from the results file's provenance when the environment
sets none).  A permutation row is rebuilt from its question (``group_id``) and logged ``permutation``.  A record id
missing from the data stops the command with the location it looked at.

``stratified_sample`` draws up to n items per domain, evenly across sources: sources in a seeded order, one item from
each in turn (a source that runs out leaves its turns to the others), items in a seeded order within a source.
"""

from __future__ import annotations

import json
import logging
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmms_agentic.adapters import benchmarks, permutation
from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.data import DATA_ENV, locate
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.judges.error_modes import Item
from lmms_agentic.report import run_files

log = logging.getLogger("lmms_agentic.error_analysis")


@dataclass
class Variant:
    """One reported task or group of a run, with its benchmark and every logged prediction."""

    name: str
    tasks: list[str]
    benchmark: Benchmark
    items: list[Item] = field(default_factory=list)


@dataclass
class Run:
    folder: Path
    results_file: Path
    results: dict[str, Any]
    variants: list[Variant]
    run_stamp: str = ""

    @property
    def stamp(self) -> str:
        return self.run_stamp or self.results_file.name.removesuffix("_results.json")

    def task_kwargs(self, task: str) -> dict[str, Any]:
        """The task's ``lmms_eval_specific_kwargs`` as lmms-eval resolved them for the run's model."""
        config = self.results.get("configs", {}).get(task, {})
        kwargs = config.get("lmms_eval_specific_kwargs") or {}
        return {k: v for k, v in kwargs.items() if not isinstance(v, dict)} or dict(kwargs.get("default", {}))


def latest_results(folder: Path) -> Path:
    """The newest results file under ``folder`` (either harness; lmms-eval may add a model sub-folder)."""
    return run_files.results_files(Path(folder))[-1].path


def full_reply(line: Mapping[str, Any]) -> str:
    """The model's raw reply of one sample line (``resps`` when logged, else ``filtered_resps``)."""
    value: Any = line.get("resps", line.get("filtered_resps", ""))
    while isinstance(value, list):
        value = value[0] if value else ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _items(sample_file: Path, variant: str, task: str, correct_field: str) -> list[Item]:
    found = []
    for _, line in run_files.sample_lines(sample_file):
        record = read_record(line)
        if record is not None:
            field_name = "correct" if "group_id" in record else correct_field
            found.append(Item(variant, task, record, full_reply(line), field_name))
    return found


def load_run(folder: Path, only: Sequence[str] = ()) -> Run:
    """The run's MCQ variants (groups pooled), optionally only those named in ``only``; a run without sample
    files, or a task asked for without them, stops with the results file and the fix."""
    files = run_files.open_run(Path(folder))
    results_file, results, samples = files.results_file, files.results, files.samples
    for note in files.notes:
        log.warning("%s", note)
    if not samples:
        raise run_files.ReportInputError(
            f"{results_file}: the run logged no samples (no sample file next to it), so there are no predictions "
            "to analyse; rerun the evaluation with --log_samples")
    groups = {name: list(subtasks) for name, subtasks in results.get("group_subtasks", {}).items() if subtasks}
    members = {task for subtasks in groups.values() for task in subtasks}
    names = sorted(groups) + sorted(t for t in samples if t not in members and t not in groups)
    unknown = sorted(set(only) - set(names) - set(samples))
    if unknown:
        unlogged = [name for name in unknown if name in results.get("results", {})]
        why = (f"; {', '.join(unlogged)} ran but logged no samples (rerun with --log_samples)" if unlogged else "")
        raise KeyError(f"no task or group {', '.join(unknown)} with samples in {results_file.parent} "
                       f"(found: {', '.join(names)}){why}")
    variants = []
    for name in names if not only else [n for n in dict.fromkeys([*names, *samples]) if n in only]:
        tasks = groups.get(name, [name])
        owner = {b.name for t in tasks if t in samples and (b := benchmarks.benchmark_of_task(t)) is not None}
        if len(owner) != 1:
            continue
        benchmark = benchmarks.get(owner.pop())
        if not benchmark.mcq:
            continue
        variant = Variant(name, tasks, benchmark)
        for task in tasks:
            if task in samples:
                variant.items += _items(samples[task], name, task, benchmark.correct_field or "correct")
        if variant.items:
            variants.append(variant)
    return Run(folder, results_file, results, variants, files.stamp)


def use_run_data(run: Run, benchmark: Benchmark, environ: dict[str, str] | None = None) -> str:
    """Make the data location the run's when the environment sets none; returns a line saying which is used."""
    env = os.environ if environ is None else environ
    used = (run.results.get("lmms_agentic") or {}).get("data", {}).get(benchmark.name) or {}
    if not env.get(DATA_ENV) and not env.get(benchmark.source.env_override):
        chosen = str(used.get("chosen_by", ""))
        variable, _, value = chosen.partition("=")
        if variable in (DATA_ENV, benchmark.source.env_override) and value:
            env[variable] = value
    location = locate(benchmark.source, dict(env))
    line = f"{benchmark.name}: {location.describe()}"
    run_path = used.get("path")
    if run_path and location.root and Path(str(run_path)).resolve() != Path(location.root).resolve():
        line += f" — WARNING: the run read {run_path}"
    elif used and used.get("kind") and used.get("kind") != location.kind:
        line += f" — WARNING: the run read {used.get('kind')} data ({used.get('chosen_by')})"
    return line


class DocStore:
    """The benchmark's documents by id, loaded once through its hooks (``all_docs()``)."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self._docs: Any = None
        self._index: dict[str, int] = {}

    def _load(self) -> None:
        self._docs = self.benchmark.package().load_docs()
        self._index = {str(doc_id): i for i, doc_id in enumerate(self._docs["id"])}

    def get(self, item: Item) -> dict[str, Any]:
        """The document of ``item`` as its task built it (permutation rows re-permuted)."""
        if self._docs is None:
            self._load()
        position = self._index.get(item.base_id)
        if position is None:
            where = locate(self.benchmark.source).describe()
            raise KeyError(f"{self.benchmark.name} record {item.base_id!r} (task {item.task}) is not in the data "
                              f"at {where}: point {DATA_ENV} (or --data) at the data the run used")
        doc = dict(self._docs[position])
        order = item.record.get("permutation")
        if isinstance(order, list) and order:
            doc.update(permutation.apply(doc, tuple(int(i) for i in order)))
        return doc


def eligible(items: Iterable[Item], population: str) -> tuple[list[Item], list[Item]]:
    """(items analysed, items skipped): failed requests are always skipped; ``incorrect`` also skips correct ones."""
    keep, skip = [], []
    for item in items:
        if item.request_failed or (population == "incorrect" and item.correct):
            skip.append(item)
        else:
            keep.append(item)
    return keep, skip


def stratified_sample(items: Sequence[Item], n: int | None, seed: int) -> list[Item]:
    """Up to ``n`` items per domain, evenly across sources (module docstring); all items when ``n`` is None."""
    if n is None:
        return list(items)
    by_domain: dict[str, dict[str, list[Item]]] = {}
    for item in sorted(items, key=lambda i: (i.task, i.id)):
        by_domain.setdefault(item.domain, {}).setdefault(item.source, []).append(item)
    chosen: list[Item] = []
    for domain, sources in sorted(by_domain.items()):
        rng = random.Random(f"{seed}|{domain}")
        queues = []
        for source in sorted(sources):
            pool = list(sources[source])
            rng.shuffle(pool)
            queues.append(pool)
        rng.shuffle(queues)
        taken = 0
        while taken < n and any(queues):
            for queue in queues:
                if queue and taken < n:
                    chosen.append(queue.pop())
                    taken += 1
    return chosen
