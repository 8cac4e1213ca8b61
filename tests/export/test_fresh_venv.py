"""The core-based exports tried as a new contributor tries them: in a venv with only the harness (`fresh`), the folder
copied into the installed harness, its own test run there, then the mini split through the harness CLI against a
loopback OpenAI-compatible model whose replies make every metric non-trivial, and every metric equal to the plugin's
(the plugin's tasks, same CLI and same replies, in this venv).

Harnesses: `EXPORT_HARNESSES` (comma-separated; default `lm-eval`). lmms-eval's venv pulls torch and its CUDA
libraries (several GB), so it is opt-in: `EXPORT_HARNESSES=lm-eval,lmms-eval make test-export`.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.lmeval.export import HARNESS_DIRS, export, shared, task_folder, upstream

from ..lmeval import hfcache, loopback
from . import fresh

pytestmark = pytest.mark.e2e
TASKS = {"robovista": ["robovista", "robovista_icl"], "agentvqa": ["agentvqa", "agentvqa_coords_norm1000_yx"],
         "agentx": ["agentx"]}
"""Per benchmark: RoboVista's domain group (zero-shot) and ICL group (every breakdown plus confidence and calibration
metrics); AgentVQA's main group (images, action histories and sampled video frames) and a coordinate convention that
re-renders the coordinate options; Agent-X's group (images, multi-image sets, video frames; the export declares only
the metrics it computes, which are compared, and its `judge_samples.py` then judges the run's logged samples with a
loopback judge)."""
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "OPENAI_API_KEY": "loopback"}
NON_TRIVIAL_SHARE = {"robovista": 3, "agentvqa": 6, "agentx": 8}
"""At least 1/N of the compared values lie strictly between 0 and 100. AgentVQA's mini split has three items per
domain, so its per-source accuracies cover one item each and are 0 or 100 by construction."""
MIN_COMPARED = {"robovista": 40, "agentvqa": 40, "agentx": 20}
"""At least this many values compared (Agent-X's exports declare its 11 deterministic metrics on 3 tasks)."""
HEADLINE = {"robovista": "parity_acc,none", "agentvqa": "accuracy,none", "agentx": "toolset_f1_prog,none"}
DATA_FILES = {"agentx": {"test": "data.json"}}
"""Releases kept as a data.json (the harness's `data_files`), not parquet."""
HARNESSES = [h.strip() for h in os.environ.get("EXPORT_HARNESSES", "lm-eval").split(",") if h.strip()]


def _book(benchmark: str) -> loopback.ReplyBook:
    hooks = importlib.import_module(f"lmms_agentic.tasks.{benchmark}.hooks")

    book = loopback.ReplyBook()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        if benchmark == "agentx":
            for row in hooks.all_docs():
                book.add_agentx(row["query"], json.loads(row["gt_steps_json"]), json.loads(row["gt_final_answer_json"]))
            return book
        for row in hooks.all_docs().select_columns(["question", "options", "answer"]):
            book.add_mcq(row["question"], list(row["options"]), row["answer"])
    return book


def _args(harness: str, tasks: list[str], url: str, output: Path, include: str | None) -> list[str]:
    if harness == "lm-eval":
        args = ["--model", "local-chat-completions", "--model_args",
                f"model=loopback-vlm,base_url={url}/chat/completions,max_images=64,num_concurrent=4",
                "--apply_chat_template"]
    else:
        args = ["--model", "openai", "--model_args", f"model_version=loopback-vlm,base_url={url}"]
    args += ["--tasks", ",".join(tasks), "--output_path", str(output), "--log_samples"]
    return args + (["--include_path", include] if include else [])


def _results(harness: str, output: Path, log: str) -> dict[str, dict[str, Any]]:
    pattern = "*_results.json" if harness == "lmms-eval" else "results_*.json"
    found = sorted(output.rglob(pattern))
    assert found, f"{harness} wrote no results file:\n{log[-4000:]}"
    results: dict[str, dict[str, Any]] = json.loads(found[-1].read_text())["results"]
    return results


def _metrics(values: dict[str, Any]) -> dict[str, float]:
    return {key: value for key, value in values.items() if key.endswith(",none") and "_stderr" not in key
            and isinstance(value, (int, float)) and key.split(",")[0] not in upstream.PLUGIN_ONLY_METRICS}


def _run(harness: str, tasks: list[str], python: str, book: loopback.ReplyBook, output: Path, env: dict[str, str],
         include: str | None) -> dict[str, dict[str, Any]]:
    module = "lm_eval" if harness == "lm-eval" else "lmms_eval"
    with loopback.model_server(book) as server:
        done = subprocess.run([python, "-m", module, *_args(harness, tasks, server.base_url, output, include)], env=env,
                              cwd=output.parent, capture_output=True, text=True, timeout=900, check=False)
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback (most recent call last)" not in log, log[-6000:]
    return _results(harness, output, log)


def _hf_home(root: Path, benchmark: str) -> Path:
    """A Hugging Face home holding the mini split (and its media) under the Hub id the exported YAML names."""
    home = root / "hf_home"
    bench = benchmarks.get(benchmark)
    mini = bench.folder / "data" / "mini"
    hfcache.seed(home, bench.source.hub_id, bench.source.split, mini, DATA_FILES.get(benchmark))
    return home


@pytest.mark.parametrize("benchmark", sorted(TASKS))
@pytest.mark.parametrize("harness", HARNESSES)
def test_a_fresh_harness_runs_the_export_with_the_plugins_numbers(harness: str, benchmark: str,
                                                                  tmp_path: Path) -> None:
    python = fresh.harness_venv(harness)
    hf_home = _hf_home(tmp_path, benchmark)
    tasks = TASKS[benchmark]
    out = tmp_path / "checkout"
    export(harness, benchmark, out)
    fresh.install_folder(python, harness, task_folder(out, harness, benchmark))
    if (out / shared.SHARED_DIRS[harness]).is_dir():
        fresh.install_folder(python, harness, out / shared.SHARED_DIRS[harness], shared.SHARED_DIRS[harness])
    test_file = out / HARNESS_DIRS[harness][1] / f"test_{benchmark}.py"
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LMMS_AGENTIC", "PYTHON"))}
    env.update(OFFLINE, HF_HOME=str(hf_home), HF_DATASETS_CACHE=str(hf_home / "datasets"))

    own = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)], env=env,
                         cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert own.returncode == 0 and "passed" in own.stdout, own.stdout[-3000:] + own.stderr[-2000:]
    probe = subprocess.run([str(python), "-c", "import lmms_agentic"], env=env, cwd=tmp_path, capture_output=True,
                           text=True, check=False)
    assert probe.returncode != 0, "the fresh venv must not have lmms-agentic"

    book = _book(benchmark)
    exported = _run(harness, tasks, str(python), book, tmp_path / "export_run", env, None)
    plugin_env = {**os.environ, **OFFLINE, "LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_CACHE": "off",
                  "LMMS_AGENTIC_CACHE": str(tmp_path / "plugin_cache")}
    include = None
    if harness == "lm-eval":
        done = subprocess.run([sys.executable, "-m", "lmms_agentic", "lmeval-tasks-dir"], env=plugin_env,
                              capture_output=True, text=True, check=True)
        include = done.stdout.strip()
    plugin = _run(harness, tasks, sys.executable, book, tmp_path / "plugin_run", plugin_env, include)

    compared, non_trivial = 0, 0
    hooks = benchmarks.get(benchmark).package().export_hooks()
    reported = getattr(hooks, "REPORTED_METRICS", None)
    ungrouped = set(getattr(hooks, "NOT_GROUPED_UNDER_LM_EVAL", ())) if harness == "lm-eval" else set()
    for task, values in exported.items():
        ours, theirs = _metrics(plugin[task]), _metrics(values)
        ours = {k: v for k, v in ours.items() if reported is None or k.split(",")[0] in reported}
        # lm-eval's groups leave out the metrics a subtask may have no item for (their subtasks report them)
        ours = {k: v for k, v in ours.items() if k in theirs or k.split(",")[0] not in ungrouped}
        # the export reports every declared metric (NaN where no item counts); the plugin's lm-eval path leaves
        # such a metric out
        only_theirs = set(theirs) - set(ours)
        assert set(ours) <= set(theirs) and all(math.isnan(theirs[k]) for k in only_theirs), f"{task}: {ours} {theirs}"
        for key, value in ours.items():
            assert (math.isnan(value) and math.isnan(theirs[key])) or value == theirs[key], f"{task} {key}"
            compared += 1
            non_trivial += 0 < value < 100
    assert set(tasks) <= set(exported) and compared > MIN_COMPARED[benchmark]
    assert non_trivial > compared // NON_TRIVIAL_SHARE[benchmark]
    assert all(0 < _metrics(exported[task])[HEADLINE[benchmark]] < 100 for task in tasks), "headline not exercised"
    if benchmark == "agentx":
        _judge_the_logged_samples(harness, python, tmp_path / "export_run", env)
    shutil.rmtree(fresh.site_packages(python) / fresh.PACKAGES[harness] / "tasks" / benchmark)


def _judge_the_logged_samples(harness: str, python: Path, output: Path, env: dict[str, str]) -> None:
    """The exported `judge_samples.py` on the run's own logs, against a loopback judge scoring every call 1: every
    judged mean it can take is 1, the key never shows."""
    from lmms_agentic.judges.testing import ScriptedJudgeServer, fixed

    samples = [str(p) for p in sorted(output.rglob("*samples*agentx*.jsonl"))]
    data = benchmarks.get("agentx").folder / "data" / "mini" / "data.json"
    assert samples, "the run logged no Agent-X samples"
    with ScriptedJudgeServer(fixed("{'Score': '1', 'Justification': 'all there'}")) as judge:
        variables = {"AGENTX_JUDGE_BASE_URL": judge.base_url, "AGENTX_JUDGE_MODEL": "gpt-4o",
                     "AGENTX_JUDGE_API_KEY": "sk-loopback-secret"}
        done = subprocess.run([str(python), "-m", f"{fresh.PACKAGES[harness]}.tasks.agentx.judge_samples", *samples,
                               "--data", str(data), "--output", str(output / "judged.json")],
                              env={**env, **variables}, cwd=output, capture_output=True, text=True, timeout=600,
                              check=False)
        sent = judge.request_count
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "sk-loopback-secret" not in done.stdout + done.stderr and sent > 0
    result = json.loads((output / "judged.json").read_text())
    assert result["metrics"]["ground_s"] == 1.0 and result["coverage"]["ground_s"] > 0.5, result
    assert set(result["metrics"].values()) <= {1.0, None}
