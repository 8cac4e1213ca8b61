"""Session fixtures of the lm-eval tests: the loopback servers, the harness runs, the exported folders.

Every end-to-end check runs a harness CLI once per configuration and reads its results JSON, samples and log
(`HarnessRun`): lmms-eval exits 0 even when an evaluation fails, so the exit code alone proves nothing. The runs
are grouped (one call per harness and configuration, every task of the three benchmarks at once) because each CLI
start costs 10-20 s:

- `plugin_runs`: lmms-agentic's tasks under lmms-eval (`--model openai`) and under lm-eval
  (`--model local-chat-completions`, `--include_path` = the generated folder), same loopback model and judge;
- `export_runs`: the exported folders, in processes where `lmms_agentic` cannot be imported, loading the Hub ids
  from a Hugging Face home seeded with the mini splits (`hfcache`).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters import benchmarks

from . import hfcache, loopback
from .isolation import run_isolated


@pytest.fixture(scope="session", autouse=True)
def private_lmeval_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The generated lm-eval task folders go to a temporary cache (also for the CLIs the tests start)."""
    folder = tmp_path_factory.mktemp("lmms-agentic-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_CACHE", str(folder))
        yield folder

BASE_TASKS = ["robovista", "robovista_cot", "robovista_confidence", "robovista_icl", "robovista_icl_reasoning",
              "robovista_zeroshot_full", "agentvqa", "agentvqa_coords_norm1000_yx", "agentvqa_web_agents_nohistory",
              "agentx"]
PERMUTATION_TASKS = ["robovista_circular", "agentvqa_perm5"]
EXPORT_TASKS = ["robovista", "robovista_cot", "robovista_icl", "agentvqa", "agentx"]
"""Every exported template and protocol once (each CLI run's fixed cost grows with its task count)."""
BENCHMARKS = ("robovista", "agentvqa", "agentx")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


@dataclass
class HarnessRun:
    """One finished harness run: results, samples and log; `requests` is what the model server received."""

    harness: str
    returncode: int
    log: str
    output: Path
    requests: Counter[loopback.RequestKey]
    turns: dict[loopback.RequestKey, Counter[loopback.Turn]]
    """Each request's raw layout (text pieces and images in the order sent), by key."""

    @property
    def results_file(self) -> Path:
        pattern = "*_results.json" if self.harness == "lmms-eval" else "results_*.json"
        found = sorted(self.output.rglob(pattern))
        assert found, f"{self.harness} wrote no results file. Log tail:\n{self.log[-4000:]}"
        return found[-1]

    @property
    def results(self) -> dict[str, dict[str, Any]]:
        data: dict[str, dict[str, Any]] = json.loads(self.results_file.read_text())["results"]
        return data

    def samples(self, task: str) -> list[dict[str, Any]]:
        pattern = f"*_samples_{task}.jsonl" if self.harness == "lmms-eval" else f"samples_{task}_*.jsonl"
        found = sorted(self.output.rglob(pattern))
        assert found, f"no samples for {task} in {self.output}"
        return [json.loads(line) for line in found[-1].read_text().splitlines()]

    def assert_ok(self, tasks: list[str]) -> None:
        tail = self.log[-6000:]
        assert self.returncode == 0, tail
        assert "Error during evaluation" not in self.log, tail
        assert "Traceback (most recent call last)" not in self.log, tail
        missing = [task for task in tasks if task not in self.results]
        assert not missing, f"{self.harness}: no results for {missing}\n{tail}"


def metrics(results: dict[str, Any]) -> dict[str, float]:
    """The `metric,none` values of one task or group (standard errors left out)."""
    return {key: value for key, value in results.items() if key.endswith(",none") and "_stderr" not in key
            and isinstance(value, (int, float))}


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _book() -> loopback.ReplyBook:
    """Gold answers and traces of every mini-split item, read through the plugin's own loaders."""
    from lmms_agentic.tasks.agentvqa import hooks as agentvqa
    from lmms_agentic.tasks.agentx import hooks as agentx
    from lmms_agentic.tasks.robovista import hooks as robovista

    book = loopback.ReplyBook()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        for docs in (robovista.all_docs(), agentvqa.all_docs()):
            for row in docs.select_columns(["question", "options", "answer"]):
                book.add_mcq(row["question"], list(row["options"]), row["answer"])
        for row in agentx.all_docs():
            book.add_agentx(row["query"], json.loads(row["gt_steps_json"]), json.loads(row["gt_final_answer_json"]))
    return book


@pytest.fixture(scope="session")
def book() -> loopback.ReplyBook:
    return _book()


@pytest.fixture(scope="session")
def judge() -> Iterator[Any]:
    with loopback.judge_server() as server:
        yield server


def _env(judge_url: str, **extra: str) -> dict[str, str]:
    env = {**os.environ, **OFFLINE, "OPENAI_API_KEY": "loopback", "LMMS_AGENTIC_JUDGE_BASE_URL": judge_url,
           "LMMS_AGENTIC_JUDGE_MODEL": "loopback-judge-2025-01-01", "LMMS_AGENTIC_JUDGE_CACHE": "off", **extra}
    for key in ("LMMS_AGENTIC_JUDGE_PRESET", "LMMS_AGENTIC_MCQ_JUDGE", "OPENAI_API_BASE"):
        env.pop(key, None)
    return env


def lmms_eval_args(url: str, tasks: list[str], output: Path, include: str | None = None) -> list[str]:
    args = ["--model", "openai", "--model_args", f"model_version=loopback-vlm,base_url={url}",
            "--tasks", ",".join(tasks), "--output_path", str(output), "--log_samples"]
    return args + (["--include_path", include] if include else [])


def lm_eval_args(url: str, tasks: list[str], output: Path, include: str, max_images: int | None = 64) -> list[str]:
    limit = f",max_images={max_images}" if max_images is not None else ""
    return ["--model", "local-chat-completions",
            "--model_args", f"model=loopback-vlm,base_url={url}/chat/completions{limit},num_concurrent=4",
            "--tasks", ",".join(tasks), "--include_path", include, "--apply_chat_template",
            "--output_path", str(output), "--log_samples"]


def _run(harness: str, book: loopback.ReplyBook, output: Path, env: dict[str, str], tasks: list[str],
         include: str | None, isolated: bool, max_images: int | None = 64) -> HarnessRun:
    with loopback.model_server(book) as server:
        if harness == "lmms-eval":
            module, args = "lmms_eval", lmms_eval_args(server.base_url, tasks, output, include)
        else:
            module, args = "lm_eval", lm_eval_args(server.base_url, tasks, output, include or "", max_images)
        if isolated:
            # core-based exports import their sibling modules as <package>.tasks.<benchmark>.<module>
            done = run_isolated(module, args, env, cwd=output.parent,
                                task_dirs={f"{module}.tasks": include} if include else None)
        else:
            done = subprocess.run([sys.executable, "-m", module, *args], env=env, cwd=output.parent,
                                  capture_output=True, text=True, timeout=900, check=False)
        return HarnessRun(harness, done.returncode, done.stdout + done.stderr, output, loopback.requests(server),
                          loopback.turns(server))


def lmeval_tasks_dir() -> str:
    """The generated folder, as users get it: `python -m lmms_agentic lmeval-tasks-dir`."""
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "lmeval-tasks-dir"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="session")
def plugin_runs(tmp_path_factory: pytest.TempPathFactory, book: loopback.ReplyBook,
                judge: Any) -> dict[str, HarnessRun]:
    root = tmp_path_factory.mktemp("plugin")
    env = _env(judge.base_url, LMMS_AGENTIC_DATA="mini")
    tasks = BASE_TASKS + PERMUTATION_TASKS
    runs = {"lmms-eval": _run("lmms-eval", book, root / "lmms-eval", env, tasks, None, isolated=False),
            "lm-eval": _run("lm-eval", book, root / "lm-eval", env, tasks, lmeval_tasks_dir(), isolated=False)}
    for run in runs.values():
        run.assert_ok(tasks)
    return runs


def no_judge_env(**extra: str) -> dict[str, str]:
    """The harness environment with no judge set (the judged metrics stay unscored: not_configured)."""
    env = _env("", LMMS_AGENTIC_DATA="mini", **extra)
    for key in ("LMMS_AGENTIC_JUDGE_BASE_URL", "LMMS_AGENTIC_JUDGE_MODEL"):
        env.pop(key, None)
    return env


@pytest.fixture(scope="session")
def lm_eval_edge_runs(tmp_path_factory: pytest.TempPathFactory, book: loopback.ReplyBook) -> dict[str, HarnessRun]:
    """lm-eval runs off the happy path: `no_max_images` (lm-eval's API default of 1 image per request, on the tasks
    with several), `no_judge` (Agent-X with no judge set)."""
    root = tmp_path_factory.mktemp("lm-eval-edge")
    include = lmeval_tasks_dir()
    return {
        "no_max_images": _run("lm-eval", book, root / "no_max_images", no_judge_env(),
                              ["robovista_icl_seed0", "agentvqa_egocentric_videos"], include, False, max_images=None),
        "no_judge": _run("lm-eval", book, root / "no_judge", no_judge_env(), ["agentx"], include, False),
    }


@pytest.fixture(scope="session")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All three benchmarks exported for both harnesses (formatted), under <root>/<harness>/."""
    from lmms_agentic.lmeval.export import export

    root = tmp_path_factory.mktemp("export")
    for harness in ("lmms-eval", "lm-eval"):
        for benchmark in BENCHMARKS:
            export(harness, benchmark, root / harness)
    return root


@pytest.fixture(scope="session")
def hf_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hugging Face home holding the three mini splits under their Hub ids."""
    from lmms_agentic.lmeval.export.layout import data_keys

    home = tmp_path_factory.mktemp("hf_home")
    for name in BENCHMARKS:
        bench = benchmarks.get(name)
        files = (data_keys(bench).get("dataset_kwargs") or {}).get("data_files")
        hfcache.seed(home, bench.source.hub_id, bench.source.split, bench.folder / "data" / "mini", files)
    return home


@pytest.fixture(scope="session")
def export_runs(exported: Path, hf_home: Path, book: loopback.ReplyBook, judge: Any,
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, HarnessRun]:
    root = tmp_path_factory.mktemp("export_runs")
    # lmms-eval's exported Agent-X judges through lmms_eval.llm_judge: the same loopback judge, by its own settings
    env = _env(judge.base_url, HF_HOME=str(hf_home), HF_DATASETS_CACHE=str(hf_home / "datasets"),
               OPENAI_API_URL=judge.base_url, MODEL_VERSION="loopback-judge-2025-01-01", API_TYPE="openai")
    for key in [k for k in env if k.startswith("LMMS_AGENTIC_DATA")]:
        del env[key]
    runs = {}
    for harness, folder in (("lmms-eval", "lmms_eval/tasks"), ("lm-eval", "lm_eval/tasks")):
        runs[harness] = _run(harness, book, root / harness, env, EXPORT_TASKS, str(exported / harness / folder),
                             isolated=True)
        runs[harness].assert_ok(EXPORT_TASKS)
    return runs
