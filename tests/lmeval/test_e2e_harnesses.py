"""End-to-end: both harnesses on the mini splits, with the same loopback model and judge (one file, so that the
harness runs these tests share are made once, also under pytest-xdist).

Plugin parity.
lmms-eval runs lmms-agentic's tasks with its OpenAI-compatible chat backend (`--model openai`); lm-eval runs the
generated tasks (`--include_path "$(python -m lmms_agentic lmeval-tasks-dir)"`) with `local-chat-completions`.
The server answers from the request (text and decoded pixels), so equal requests get equal replies, and then:
every request (text and every image's pixels) reached the server from both harnesses; every metric both report is
identical, for every task and group (the permutation variants included; a metric that no row of a task counts
for is NaN under lmms-eval and not reported by lm-eval, whose groups could not skip a NaN); lm-eval's sample logs
follow the sample-record contract (the first metric carries the record, the others compact views). Item by item,
each request is laid out as lmms-eval sends it (text pieces, images in order, the text each image follows; the ICL
examples next to their images). lm-eval off the happy path: without `max_images` the multi-image tasks stop before
any request with one line naming the fix; with no judge set the coverage warning names that cause once, plus one
end-of-run line with every judged metric's counts; no run prints a warning twice.

Upstream exports.
Each folder is checked as upstream would: it imports nothing from lmms-agentic and no sibling module; its Python
passes the harness's own formatter and lint settings; its test file passes. Then every exported benchmark runs on
its mini split in a process where `lmms_agentic` cannot be imported, loading the Hub dataset ids from a seeded
Hugging Face home, with the loopback model whose replies exercise every scoring path: each metric equals the
plugin's under the same harness, the prompts and pixels the server received are the plugin's, and the headline
metrics are non-trivial (strictly between their bounds).
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest
import yaml

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.lmeval.export import HARNESS_DIRS, formatting, upstream
from lmms_agentic.lmeval.sources import all_sources

from .conftest import BASE_TASKS, BENCHMARKS, EXPORT_TASKS, PERMUTATION_TASKS, HarnessRun, metrics, same
from .isolation import run_isolated

pytestmark = pytest.mark.e2e
for _tool in ("lm_eval", "black", "isort"):
    pytest.importorskip(_tool, reason="pip install -e '.[lmeval,export]'")
PACKAGES = {"lmms-eval": "lmms_eval.tasks", "lm-eval": "lm_eval.tasks"}
ROW_WEIGHTED = {(s.name, entry["metric"]) for sources in all_sources().values() for s in sources
                if s.is_group and "permutations" in s.relative.parts
                for entry in s.config["aggregate_metric_list"] if entry.get("weight_by_size")}


# ---------------------------------------------------------------- plugin parity
def test_every_request_and_image_reached_the_server_from_both_harnesses(plugin_runs: dict[str, HarnessRun]) -> None:
    lmms, lm = plugin_runs["lmms-eval"].requests, plugin_runs["lm-eval"].requests
    assert sum(lmms.values()) > 300, "the runs cover every task variant of the three mini splits"
    assert lmms == lm, f"only lmms-eval: {list((lmms - lm).elements())[:2]}; only lm-eval: {list(lm - lmms)[:2]}"
    images = sum(len(key.images) * n for key, n in lm.items())
    assert images >= sum(lm.values()), "every request carries at least one image or frame"
    assert max(len(key.images) for key in lm) > 8, "multi-image requests (ICL, video frames) arrive whole"
    assert any("Query: " in key.text and key.system for key in lm), "Agent-X sends its instruction as system turn"


def test_every_shared_metric_is_identical(plugin_runs: dict[str, HarnessRun]) -> None:
    lmms, lm = plugin_runs["lmms-eval"].results, plugin_runs["lm-eval"].results
    assert set(BASE_TASKS + PERMUTATION_TASKS) <= set(lmms) & set(lm)
    compared = 0
    for task in sorted(set(lmms) & set(lm)):
        ours, theirs = metrics(lmms[task]), metrics(lm[task])
        assert set(theirs) <= set(ours), f"{task}: only lm-eval has {sorted(set(theirs) - set(ours))}"
        # not reported by lm-eval: a metric no row of the task counts for (NaN under lmms-eval, see the adapter), and
        # the size-weighted metrics of permutation groups (lm-eval would weight by rows, see lmeval.generate)
        for key in set(ours) - set(theirs):
            assert math.isnan(ours[key]) or (task, key.split(",")[0]) in ROW_WEIGHTED, (task, key)
        for key, value in theirs.items():
            assert same(ours[key], value), f"{task} {key}: lmms-eval {ours[key]} != lm-eval {value}"
            compared += 1
    assert compared > 500
    assert 0 < lm["robovista"]["parity_acc,none"] < 100 and lm["agentx"]["ground_s,none"] > 0
    assert not math.isnan(lm["robovista_confidence"]["calibration_error,none"])


def test_lm_eval_samples_carry_the_record_once(plugin_runs: dict[str, HarnessRun]) -> None:
    samples = plugin_runs["lm-eval"].samples("robovista_cot")
    assert len(samples) == 21
    for sample in samples:
        first, *others = sample["metrics"]
        record = sample[first]
        assert first == "parity_acc" and record["benchmark"] == "robovista" and record["id"] == sample["doc"]["id"]
        assert all("benchmark" not in sample[name] for name in others), "views are compact, never the record"
        assert read_record({k: v for k, v in sample.items() if k != "doc"}) == record
        assert "<image>" in str(sample["arguments"]["gen_args_0"]["arg_0"])
    lmms = {s["parity_acc"]["id"]: s["parity_acc"]["pred"] for s in plugin_runs["lmms-eval"].samples("robovista_cot")}
    assert lmms == {s["parity_acc"]["id"]: s["parity_acc"]["pred"] for s in samples}


def test_each_request_is_laid_out_as_lmms_eval_sends_it(plugin_runs: dict[str, HarnessRun]) -> None:
    """Item by item, on the wire: the same system text, text pieces and images in the same order, each image after
    the same text (lm-eval's API backend would send all images first, placeholders in the text, if not adjusted)."""
    lmms, lm = plugin_runs["lmms-eval"].turns, plugin_runs["lm-eval"].turns
    assert set(lmms) == set(lm)
    differ = [key for key in lmms if lmms[key] != lm[key]]
    assert not differ, f"{len(differ)}/{len(lmms)} differ; first: lmms-eval {next(iter(lmms[differ[0]]))}, " \
                       f"lm-eval {next(iter(lm[differ[0]]))}"
    sent = [turn for found in lm.values() for turn in found]
    assert not [turn for turn in sent if "<image>" in turn.text], "no placeholder reaches an API model"
    icl = [turn for turn in sent if "=== EXAMPLE ===" in turn.text]
    assert len(icl) > 20
    for turn in icl:  # each image right after its "[Image k: ...]" line (or after the image before it)
        labels = [label for label in turn.labels() if label]
        assert labels[0].startswith("[Image 1: Example") and "Your" in labels[-1], labels
        assert len(turn.images) > 1 and turn.parts[0][0] == "text", "the examples sit next to their images"


_STAMP = re.compile(r"\x1b\[[0-9;]*m|\d+")
_WARNING = re.compile(r"(?: WARNING\s+\[[^\]]+\]| \| WARNING\s+\| \S+ - )\s*(.*)$")
_OURS = ("LOW JUDGE COVERAGE", "no LLM judge configured")
"""Our warnings that lmms-eval prints bare (stdlib logging without a handler: no level prefix)."""


def warnings_by_text(log: str, tasks: set[str]) -> dict[str, int]:
    """Warning lines of a harness log, task names and numbers removed, by how often each was printed."""
    found: dict[str, int] = {}
    names = sorted(tasks, key=len, reverse=True)
    for line in log.splitlines():
        match = _WARNING.search(line)
        text = match.group(1) if match else line if line.startswith(_OURS) else None
        if text is None:
            continue
        for name in names:
            text = text.replace(name, "<task>")
        text = _STAMP.sub("", text)
        found[text] = found.get(text, 0) + 1
    return found


def test_no_warning_is_printed_twice(plugin_runs: dict[str, HarnessRun],
                                     lm_eval_edge_runs: dict[str, HarnessRun]) -> None:
    tasks = {s.name for sources in all_sources().values() for s in sources}
    for name, run in [*plugin_runs.items(), ("lm-eval, no judge", lm_eval_edge_runs["no_judge"])]:
        repeated = {text: n for text, n in warnings_by_text(run.log, tasks).items() if n > 1}
        assert not repeated, f"{name}: {repeated}"


def test_no_judge_set_is_named_once_with_its_fix_and_the_counts(lm_eval_edge_runs: dict[str, HarnessRun]) -> None:
    run = lm_eval_edge_runs["no_judge"]
    run.assert_ok(["agentx"])
    first = [line for line in run.log.splitlines() if "LOW JUDGE COVERAGE for " in line]
    summary = [line for line in run.log.splitlines() if "LOW JUDGE COVERAGE in this run" in line]
    assert len(first) == 1 and len(summary) == 1, run.log[-3000:]
    assert "cause: no judge set" in first[0] and "LMMS_AGENTIC_JUDGE_PRESET" in first[0]
    assert re.search(r"ground_s 0/\d+, 0/\d+; tool_p 0/\d+", summary[0]), summary[0]


def test_images_that_would_not_all_reach_the_model_stop_the_run(lm_eval_edge_runs: dict[str, HarnessRun]) -> None:
    """lm-eval's API backends send `max_images` images per request (default 1) and drop the rest without a word:
    without it, the run stops before any request, with one line naming the fix."""
    run = lm_eval_edge_runs["no_max_images"]
    assert run.returncode != 0 and not run.requests
    last = run.log.strip().splitlines()[-1]
    assert last.startswith("lmms_agentic.lmeval.bridge.ImageLimitError: ") and "pass max_images=64" in last


# ---------------------------------------------------------------- upstream exports

def _python_files(root: Path, harness: str) -> list[Path]:
    tasks, tests = HARNESS_DIRS[harness]
    return sorted((root / harness / tasks).rglob("*.py")) + sorted((root / harness / tests).glob("test_*.py"))


class _Functions(yaml.SafeLoader):
    pass


_Functions.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))


def _function_refs(node: object) -> list[str]:
    if isinstance(node, tuple) and node and node[0] == "!function":
        return [str(node[1])]
    if isinstance(node, dict):
        return [ref for value in node.values() for ref in _function_refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _function_refs(value)]
    return []


@pytest.mark.parametrize("harness", ["lmms-eval", "lm-eval"])
def test_folders_are_self_contained(exported: Path, harness: str) -> None:
    for benchmark in BENCHMARKS:
        folder = exported / harness / HARNESS_DIRS[harness][0] / benchmark
        assert {"utils.py", "records.py"} < {p.name for p in folder.glob("*.py")}, "the core sits next to utils.py"
        utils = ast.parse((folder / "utils.py").read_text())
        for path in sorted(folder.glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    assert not any(m.split(".")[0] in ("lmms_agentic", "utils") for m in modules), ast.unparse(node)
                    assert not (isinstance(node, ast.ImportFrom) and node.level), ast.unparse(node)
        defined = {n.name for n in utils.body if isinstance(n, ast.FunctionDef)} | {
            t.id for n in utils.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)} | {
            a.asname or a.name for n in utils.body if isinstance(n, ast.ImportFrom) for a in n.names}
        for path in [*folder.glob("*.yaml"), folder / "_default_template_yaml"]:
            for ref in _function_refs(yaml.load(path.read_text(), Loader=_Functions)):
                module, _, name = ref.partition(".")
                assert module == "utils" and name in defined, f"{path.name}: !function {ref}"
        readme = (folder / "README.md").read_text()
        assert "### Checklist" in readme and "### Changelog" in readme and "Published numbers" in readme
        assert re.search(r"\| \S.* \| \d", readme), "the published numbers table has rows"
    assert (exported / harness / "UPSTREAM_PR.md").read_text().count("Still needed") == len(BENCHMARKS)


@pytest.mark.parametrize("harness", ["lmms-eval", "lm-eval"])
def test_python_follows_the_harness_style(exported: Path, harness: str) -> None:
    formatting.check_files(harness, _python_files(exported, harness))


@pytest.mark.parametrize("harness", ["lmms-eval", "lm-eval"])
def test_exported_test_files_pass_where_lmms_agentic_is_not_importable(exported: Path, harness: str) -> None:
    tasks, tests = HARNESS_DIRS[harness]
    files = [str(p) for p in sorted((exported / harness / tests).glob("test_*.py"))]
    done = run_isolated("pytest", ["-q", "-p", "no:cacheprovider", "--rootdir", str(exported), *files], {},
                        cwd=exported, task_dirs={PACKAGES[harness]: str(exported / harness / tasks)})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\d+ passed", done.stdout) and "skipped" not in done.stdout


def _judged(key: str) -> bool:
    """An Agent-X judged metric or its coverage (the exports declare none: their `judge_samples.py` scores them from
    the logged samples)."""
    from lmms_agentic.tasks.agentx.core.judging import ALL_NAMES
    from lmms_agentic.tasks.agentx.core.metrics import GOAL_STAR

    name = key.split(",")[0]
    return name in (*ALL_NAMES, GOAL_STAR) or name.startswith("cov_")


UNGROUPED = {name for benchmark in BENCHMARKS
             for name in getattr(upstream.hooks_of(benchmarks.get(benchmark)), "NOT_GROUPED_UNDER_LM_EVAL", ())}


@pytest.mark.parametrize("harness", ["lmms-eval", "lm-eval"])
def test_exports_give_the_plugins_numbers_without_lmms_agentic(export_runs: dict[str, HarnessRun],
                                                                plugin_runs: dict[str, HarnessRun],
                                                                harness: str) -> None:
    export, plugin = export_runs[harness], plugin_runs[harness]
    if harness == "lmms-eval":
        assert "No module named 'lmms_agentic'" in export.log, "the run really had no lmms-agentic"
    assert not (export.requests - plugin.requests), "the exported prompts and pixels are the plugin's"
    compared = 0
    for task in sorted(export.results):
        ours, theirs = metrics(plugin.results[task]), metrics(export.results[task])
        # the plugin-only diagnostics are not exported
        ours = {k: v for k, v in ours.items() if k.split(",")[0] not in upstream.PLUGIN_ONLY_METRICS}
        if task.startswith("agentx"):  # the exports declare no judged metric (the plugin's are unscored, no judge)
            ours, theirs = ({k: v for k, v in d.items() if not _judged(k)} for d in (ours, theirs))
        if harness == "lm-eval":
            # the export reports every declared metric on every row (None where it does not count): a subtask with
            # no counting item has NaN where the plugin's lm-eval path reports nothing; its groups do not average
            # the metrics a subtask may have no item for
            absent = {k for k in set(theirs) - set(ours) if math.isnan(theirs[k])}
            theirs = {k: v for k, v in theirs.items() if k not in absent}
            ours = {k: v for k, v in ours.items() if k in theirs or k.split(",")[0] not in UNGROUPED}
        assert set(ours) == set(theirs), f"{task}: {sorted(set(ours) ^ set(theirs))}"
        for key, value in ours.items():
            assert same(value, theirs[key]), f"{harness} {task} {key}: plugin {value} != export {theirs[key]}"
            compared += 1
    assert compared > 200 and set(EXPORT_TASKS) <= set(export.results)


def test_the_replies_make_the_metrics_non_trivial(export_runs: dict[str, HarnessRun]) -> None:
    results = export_runs["lm-eval"].results
    robovista, confidence = results["robovista"], results["robovista_icl_seed0"]
    for value in (robovista["parity_acc,none"], robovista["strict_acc,none"], robovista["no_answer_rate,none"],
                  results["agentvqa"]["accuracy,none"], confidence["confidence_coverage,none"]):
        assert 0 < value < 100
    assert any(results[t]["parity_acc,none"] != results[t]["strict_acc,none"] for t in ("robovista_cot",
                                                                                        "robovista_icl_seed0"))
    assert confidence["calibration_error,none"] > 0 and not math.isnan(confidence["hle_compat_calibration,none"])
    agentx = results["agentx"]
    for key in ("format_error_rate", "parse_failure_rate", "toolset_f1_prog"):  # judged ones: unscored, no judge
        assert 0 < agentx[f"{key},none"] < 1, key

