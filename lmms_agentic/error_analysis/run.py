"""Reading a finished lmms-eval run for the error analysis: variants, items, source documents, stratified samples.

``load_run`` finds the newest ``*_results.json`` under the run folder (as ``python -m lmms_agentic report`` does),
pools each group's subtasks into one variant, and reads every sample line: the record (``adapters.samples``), the
model's full reply (lmms-eval's ``resps``, which keeps the thinking; it drops ``resps`` from the line when it equals
``filtered_resps``) and the task's ``lmms_eval_specific_kwargs`` from the results file's ``configs``.

Documents: the records hold no pixels, so ``DocStore`` loads the benchmark's rows through its hooks
(``hooks.all_docs()``) from the data location of the current environment, which must be the run's
(``LMMS_AGENTIC_DATA`` as set for the run; ``use_run_data`` adopts the run's setting from the results file's
provenance when the environment sets none).  A permutation row is rebuilt from its question (``group_id``) and
logged ``permutation``.  A record id missing from the data stops the command with the location it looked at.

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

    @property
    def stamp(self) -> str:
        return self.results_file.name.removesuffix("_results.json")

    def task_kwargs(self, task: str) -> dict[str, Any]:
        """The task's ``lmms_eval_specific_kwargs`` as lmms-eval resolved them for the run's model."""
        config = self.results.get("configs", {}).get(task, {})
        kwargs = config.get("lmms_eval_specific_kwargs") or {}
        return {k: v for k, v in kwargs.items() if not isinstance(v, dict)} or dict(kwargs.get("default", {}))


def latest_results(folder: Path) -> Path:
    """The newest ``*_results.json`` under ``folder`` (lmms-eval may add a model sub-folder)."""
    found = sorted(folder.rglob("*_results.json"), key=lambda p: p.name)
    if not found:
        raise FileNotFoundError(f"no *_results.json under {folder}; run lmms-eval with --output_path {folder} "
                                "--log_samples")
    return found[-1]


def full_reply(line: Mapping[str, Any]) -> str:
    """The model's raw reply of one sample line (``resps`` when logged, else ``filtered_resps``)."""
    value: Any = line.get("resps", line.get("filtered_resps", ""))
    while isinstance(value, list):
        value = value[0] if value else ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _items(sample_file: Path, variant: str, task: str, correct_field: str) -> list[Item]:
    found = []
    with sample_file.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            try:
                line = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{sample_file}, line {number}: not a JSON sample line ({exc})") from exc
            record = read_record(line)
            if record is not None:
                field_name = "correct" if "group_id" in record else correct_field
                found.append(Item(variant, task, record, full_reply(line), field_name))
    return found


def load_run(folder: Path, only: Sequence[str] = ()) -> Run:
    """The run's MCQ variants (groups pooled), optionally only those named in ``only``."""
    results_file = latest_results(folder)
    results = json.loads(results_file.read_text(encoding="utf-8"))
    stamp = results_file.name.removesuffix("_results.json")
    samples = {p.name.removeprefix(f"{stamp}_samples_").removesuffix(".jsonl"): p
               for p in results_file.parent.glob(f"{stamp}_samples_*.jsonl")}
    groups = {name: list(subtasks) for name, subtasks in results.get("group_subtasks", {}).items() if subtasks}
    members = {task for subtasks in groups.values() for task in subtasks}
    names = sorted(groups) + sorted(t for t in samples if t not in members and t not in groups)
    unknown = sorted(set(only) - set(names) - set(samples))
    if unknown:
        raise KeyError(f"no task or group {', '.join(unknown)} with samples in {results_file.parent} "
                       f"(found: {', '.join(names)})")
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
    return Run(folder, results_file, results, variants)


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
