"""The core-based RoboVista, AgentVQA and Agent-X exports (lmms-eval and lm-eval), checked as a maintainer would:
their size, that nothing in them names this package, the README template, the harness's style, their own tests,
and every metric equal to the plugin's (Agent-X: the exported tasks declare only the metrics they compute, its
`REPORTED_METRICS`; the plugin, with no judge configured, leaves its judged metrics unscored).

The metric check runs the exported hooks where `lmms_agentic` cannot be imported (`tests.lmeval.isolation`): the mini
split is loaded with `datasets` as the harness loads `dataset_path`, every leaf task's `process_docs` and
`process_results` run on every document with the benchmark's example replies, and each metric is aggregated with
the YAML's aggregation; the plugin does the same in this process.
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.lmeval.export import export, formatting, generated, shared, task_folder, upstream
from lmms_agentic.lmeval.export.layout import exported_sources
from lmms_agentic.lmeval.export.testgen import plugin_environment
from lmms_agentic.lmeval.task_functions import placeholder, resolve

from ..lmeval.isolation import run_isolated

pytestmark = pytest.mark.e2e
HARNESSES = ("lmms-eval", "lm-eval")
BENCHMARKS = ("robovista", "agentvqa", "agentx")
TESTS = {"lmms-eval": "test/eval/test_{b}.py", "lm-eval": "tests/test_{b}.py"}
README = {
    "robovista": ("@inproceedings{xie2026robovista,", r"\| GPT-4o \| 49\.6 \|", "Apache-2.0"),
    "agentvqa": ("@misc{gupta2026agentvqa,", r"\| GPT-4o \| 31\.4 \|", "AgentVQA_old"),
    "agentx": ("@inproceedings{ashraf2026agentx,", r"\| GPT-4o \| 0\.\d+ \|", "mbzuai-oryx/Agent-X"),
}
"""Per benchmark: its BibTeX entry's first line, a published row, a word of the dataset's licence note."""
UTILS_LIMITS = {"robovista": (1500, 100_000), "agentvqa": (1500, 100_000), "agentx": (2500, 250_000)}
"""(lines, bytes) of utils.py at most."""
MIN_COMPARED = {"robovista": 200, "agentvqa": 100, "agentx": 20}
"""Metric values compared at least (every leaf task's metrics; Agent-X: 11 declared metrics in each of 2 tasks)."""
NON_TRIVIAL = {"agentx": ("toolset_f1_prog", "format_error_rate", "parse_failure_rate")}
"""Metrics that must be strictly between their bounds in every leaf task (default: most of the values compared).
Agent-X's exported tasks declare no judged metric (they are `judge_samples.py`'s)."""


def _mini(benchmark: str) -> Path:
    """The mini split's table: its parquet file, or a release's data.json (its media next to it)."""
    mini = benchmarks.get(benchmark).folder / "data" / "mini"
    return next(mini.rglob("*.parquet"), mini / "data.json")

SCRIPT = r'''
import importlib, json, math, os, sys, datasets, yaml
class L(yaml.SafeLoader): pass
L.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
package, folder, parquet, tasks, name = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
utils = importlib.import_module(f"{package}.tasks.{name}.utils")
if parquet.endswith(".json"):  # a data.json release: the hooks read it and its media from the dataset repository
    import huggingface_hub  # the shared media reader downloads through it
    here = os.path.dirname(parquet)
    huggingface_hub.hf_hub_download = lambda repo_id, filename, **kwargs: os.path.join(here, filename)
raw = datasets.load_dataset("parquet" if parquet.endswith(".parquet") else "json", data_files={"train": parquet},
                            split="train")
template = yaml.load(open(f"{folder}/_default_template_yaml"), L)
out = {}
for name, replies_per_row in tasks.items():
    config = {**template, **yaml.load(open(f"{folder}/{name}.yaml"), L)}
    if "include" in config and config["include"] != "_default_template_yaml":
        config = {**yaml.load(open(f"{folder}/{config['include']}"), L), **config}
    docs = getattr(utils, config["process_docs"].split(".")[1])(raw)
    score = getattr(utils, config["process_results"].split(".")[1])
    values = {}
    for doc, replies in zip(docs, replies_per_row):
        for reply in replies:
            for metric, value in score(doc, [reply]).items():
                values.setdefault(metric, []).append(value)
    aggregated = {}
    for entry in config["metric_list"]:
        aggregate = getattr(utils, entry["aggregation"].split(".")[1])
        aggregated[entry["metric"]] = aggregate(values.get(entry["metric"], []))
    out[name] = aggregated
print("RESULT" + json.dumps(out))
'''


@pytest.fixture(scope="module", params=[(h, b) for b in BENCHMARKS for h in HARNESSES],
                ids=lambda p: f"{p[1]}-{p[0]}")
def pair(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def harness(pair: tuple[str, str]) -> str:
    return pair[0]


@pytest.fixture(scope="module")
def benchmark(pair: tuple[str, str]) -> str:
    return pair[1]


@pytest.fixture(scope="module")
def exported(harness: str, benchmark: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp(f"core_export_{benchmark}_{harness}")
    export(harness, benchmark, root)
    return root


def _package(harness: str) -> str:
    return upstream.PACKAGES[harness]


def _task_dirs(exported: Path, harness: str) -> dict[str, str]:
    """The exported task folders and shared module, appended to the harness's packages (as if merged upstream)."""
    dirs = {f"{_package(harness)}.tasks": str(exported / upstream.PACKAGES[harness] / "tasks")}
    if harness == "lmms-eval":
        dirs["lmms_eval.tasks._task_utils"] = str((exported / shared.SHARED_DIRS[harness]).parent)
    return dirs


def test_the_folder_meets_the_size_and_naming_rules(exported: Path, harness: str, benchmark: str) -> None:
    folder = task_folder(exported, harness, benchmark)
    utils = folder / "utils.py"
    lines, size = UTILS_LIMITS[benchmark]
    assert len(utils.read_text().splitlines()) <= lines and utils.stat().st_size <= size
    mentions = [p for p in exported.rglob("*") if p.is_file() and re.search(r"lmms[_-]agentic", p.read_text(), re.I)]
    assert mentions == []
    template = (folder / "_default_template_yaml").read_text()
    assert f"dataset_path: {benchmarks.get(benchmark).source.hub_id}" in template
    if generated.core_task(benchmark) is None:
        assert re.search(r"revision: main +# TODO: pin", template), "an unknown revision is a visible placeholder"
    else:  # the unpinned revision is a step of UPSTREAM_PR.md, not a comment in a shipped file
        assert re.search(r"revision: main\n", template)
        assert not [p for p in exported.rglob("*") if p.is_file() and re.search(r"TODO|FIXME", p.read_text())]
    for path in folder.glob("*yaml*"):
        assert "mcq" not in path.read_text() and "loop_rate" not in path.read_text(), path.name


def test_the_readme_follows_the_template(exported: Path, harness: str, benchmark: str) -> None:
    readme = (task_folder(exported, harness, benchmark) / "README.md").read_text()
    bibtex, published, licence = README[benchmark]
    assert len(readme.splitlines()) <= 150
    assert readme.count("### Checklist") == 1 and readme.count("### Changelog") == 1
    assert bibtex in readme and re.search(published, readme)
    assert "Licences of verbatim material" in readme and licence in readme


def test_python_follows_the_harness_style(exported: Path, harness: str, benchmark: str) -> None:
    folder = task_folder(exported, harness, benchmark)
    formatting.check_files(harness, [*sorted(folder.glob("*.py")), exported / TESTS[harness].format(b=benchmark)])


COVERAGE_TARGET = {"robovista": 85.0, "agentvqa": 85.0, "agentx": 87.0}
"""Statement coverage (%) of each exported benchmark folder by its own test, at least. Agent-X's (88% when written)
counts its judge paths through the checks of `judge_samples.py` and the trace parser's hard cases; what is left is
mostly the release records' error paths (`records.py`). The per-model script protocols are not copied (the export
offers no script task: `script_task.py` is the plugin's core)."""


def _coverage(exported: Path, harness: str, benchmark: str, data: Path) -> dict[str, float]:
    """Statement coverage (%) of the benchmark folder and of the shared module by the run recorded in `data`."""
    folders = {"folder": task_folder(exported, harness, benchmark), "shared": exported / shared.SHARED_DIRS[harness]}
    found = {}
    for name, folder in folders.items():
        report = data.with_suffix(f".{name}.json")
        done = run_isolated("coverage", ["json", f"--data-file={data}", "-o", str(report), f"--include={folder}/*"],
                            {}, cwd=exported)
        assert done.returncode == 0, done.stdout + done.stderr
        found[name] = json.loads(report.read_text())["totals"]["percent_covered"]
    return found


def test_its_own_test_passes_without_lmms_agentic(exported: Path, harness: str, benchmark: str,
                                                  tmp_path: Path) -> None:
    test = exported / TESTS[harness].format(b=benchmark)
    core_based = generated.core_task(benchmark) is not None
    data = tmp_path / ".coverage"
    module, runner = "pytest", []
    if core_based:
        pytest.importorskip("coverage")
        module, runner = "coverage", ["run", f"--data-file={data}", "-m", "pytest"]
    done = run_isolated(module, [*runner, "-q", "-p", "no:cacheprovider", "--rootdir", str(exported), str(test)], {},
                        cwd=exported, task_dirs=_task_dirs(exported, harness))
    assert done.returncode == 0 and re.search(r"\d+ passed", done.stdout), done.stdout[-3000:] + done.stderr[-2000:]
    assert "failed" not in done.stdout and "skipped" not in done.stdout
    if core_based:
        covered = _coverage(exported, harness, benchmark, data)
        line = (f"{benchmark} {harness}: its own test covers {covered['folder']:.1f}% of the task folder's "
                f"statements, {covered['shared']:.1f}% of the shared module's")
        print(line)
        (tmp_path / "coverage.txt").write_text(line + "\n")
        assert covered["folder"] >= COVERAGE_TARGET[benchmark], line


@functools.cache
def _plugin_metrics(benchmark: str) -> tuple[dict[str, list[list[str]]], dict[str, dict[str, float]]]:
    bench = benchmarks.get(benchmark)
    replies: dict[str, list[list[str]]] = {}
    results: dict[str, dict[str, float]] = {}
    with plugin_environment(bench):
        for source in exported_sources(bench):
            if source.is_group:
                continue
            docs = resolve(source.hook("process_docs"))(placeholder(source.placeholder(bench.folder.parent)))
            score = resolve(source.hook("process_results"))
            per_row = [bench.package().example_replies(dict(doc)) for doc in docs]
            values: dict[str, list[Any]] = {}
            for doc, row_replies in zip(docs, per_row, strict=True):
                for reply in row_replies:
                    for metric, value in score(dict(doc), [reply]).items():
                        values.setdefault(metric, []).append(value)
            results[source.name] = {entry["metric"]: resolve(str(entry["aggregation"]))(values[entry["metric"]])
                                    for entry in source.config["metric_list"]
                                    if entry["metric"] not in upstream.PLUGIN_ONLY_METRICS}
            replies[source.name] = per_row
    return replies, results


def test_every_metric_equals_the_plugins_without_lmms_agentic(exported: Path, harness: str, benchmark: str,
                                                              tmp_path: Path) -> None:
    replies, plugin = _plugin_metrics(benchmark)
    folder = task_folder(exported, harness, benchmark)
    package = _package(harness)
    (tmp_path / "_export_metrics.py").write_text(SCRIPT)  # run as <package>._export_metrics (isolation's module path)
    done = run_isolated(f"{package}._export_metrics",
                        [package, str(folder), str(_mini(benchmark)), json.dumps(replies), benchmark], {},
                        cwd=exported, task_dirs={**_task_dirs(exported, harness), package: str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    ours = json.loads(done.stdout.rpartition("RESULT")[2])
    compared = 0
    reported = getattr(benchmarks.get(benchmark).package().export_hooks(), "REPORTED_METRICS", None)
    for task, values in plugin.items():
        values = {k: v for k, v in values.items() if reported is None or k in reported}
        assert set(ours[task]) == set(values), task
        for metric, value in values.items():
            theirs = ours[task][metric]
            assert (math.isnan(value) and math.isnan(theirs)) or value == theirs, f"{task} {metric}"
            compared += 1
    assert compared > MIN_COMPARED[benchmark]
    if benchmark in NON_TRIVIAL:
        for task, values in plugin.items():
            assert all(0 < values[m] < 1 for m in NON_TRIVIAL[benchmark]), (task, values)
        return
    non_trivial = [v for task in plugin.values() for v in task.values() if not math.isnan(v) and 0 < v < 100]
    assert len(non_trivial) > compared // 2
