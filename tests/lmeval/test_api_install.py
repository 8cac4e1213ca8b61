"""The lm-eval path of an API user, without lmms-eval or torch: an lm-eval run records its data location, versions
and judge next to lm-eval's results, and the analysis commands reuse them.

One `lm_eval --model local-chat-completions` run (RoboVista and Agent-X on the mini split, a loopback model and a
loopback judge with a judge cache) in a process where lmms-eval, torch, torchvision, transformers, accelerate and
decord cannot be imported, as after `pip install -e '.[lmeval]'`. Then, without `LMMS_AGENTIC_DATA` or any judge
variable: `errors --dry-run` reads the run's data (it used to stop on the Hub), and `rescore` replays it with the
run's judge, every verdict from the cache (0 sent), or with `--judge none`.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from . import loopback
from .conftest import OFFLINE, lm_eval_args, lmeval_tasks_dir

pytestmark = pytest.mark.e2e
pytest.importorskip("lm_eval", reason="pip install -e '.[lmeval]'")
TASKS = ["robovista", "agentx"]
JUDGE_MODEL = "loopback-judge-2025-01-01"
HIDDEN = ("lmms_eval", "torch", "torchvision", "transformers", "accelerate", "decord")
BOOTSTRAP = r'''
import json, os, runpy, sys
HIDDEN = tuple(json.loads(os.environ["HIDDEN_MODULES"]))

class _Absent:
    """Wraps a meta-path finder: the hidden top-level packages are not found, as if not installed."""
    def __init__(self, finder):
        self.finder = finder
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            return None
        return self.finder.find_spec(name, path, target)
    def __getattr__(self, attribute):
        return getattr(self.finder, attribute)

sys.meta_path[:] = [_Absent(f) if hasattr(f, "find_spec") else f for f in sys.meta_path]
module, *args = sys.argv[1:]
sys.argv = [module, *args]
runpy.run_module(module, run_name="__main__", alter_sys=True)
'''


def _clean_env(**extra: str) -> dict[str, str]:
    """The user's shell after the run: no data location, no judge variable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LMMS_AGENTIC_JUDGE_", "LMMS_AGENTIC_DATA"))}
    return {**env, **OFFLINE, **extra}


def _without_heavy(module: str, args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full = {**env, "HIDDEN_MODULES": json.dumps(HIDDEN)}
    return subprocess.run([sys.executable, "-c", BOOTSTRAP, module, *args], env=full, cwd=cwd, capture_output=True,
                          text=True, timeout=900, check=False)


@pytest.fixture(scope="module")
def api_run(tmp_path_factory: pytest.TempPathFactory, book: loopback.ReplyBook) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("api-install")
    cache = root / "judge-cache"
    include = lmeval_tasks_dir()
    with loopback.model_server(book) as model, loopback.judge_server() as judge:
        env = _clean_env(OPENAI_API_KEY="loopback", LMMS_AGENTIC_DATA="mini", LMMS_AGENTIC_JUDGE_CACHE=str(cache),
                         LMMS_AGENTIC_JUDGE_BASE_URL=judge.base_url, LMMS_AGENTIC_JUDGE_MODEL=JUDGE_MODEL)
        done = _without_heavy("lm_eval", lm_eval_args(model.base_url, TASKS, root / "run", include), env, root)
        judge_url = judge.base_url
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in log, log[-4000:]
    (results_file,) = sorted((root / "run").rglob("results_*.json"))
    return {"root": root, "cache": cache, "judge_url": judge_url, "results_file": results_file,
            "results": json.loads(results_file.read_text(encoding="utf-8")), "log": log}


def test_the_run_records_data_versions_and_judge_without_the_key(api_run: dict[str, Any]) -> None:
    record = api_run["results"]["lmms_agentic"]
    assert {name: facts["kind"] for name, facts in record["data"].items()} == {"robovista": "mini", "agentx": "mini"}
    assert record["lm_eval"] == "0.4.13" and record["version"]
    assert record["judge"]["model"] == JUDGE_MODEL
    assert record["judge"]["base_url"] == api_run["judge_url"]
    assert "loopback" not in json.dumps(record["judge"]).replace("loopback-judge", "")  # no key stored


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lmms_agentic", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=900, check=False)


def test_errors_reads_the_runs_data_without_lmms_agentic_data(api_run: dict[str, Any], tmp_path: Path) -> None:
    args = ["errors", str(api_run["results_file"].parent), "--dry-run", "--quiet", "--output", str(tmp_path / "e")]
    done = _without_heavy("lmms_agentic", args, _clean_env(), tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "mini" in done.stdout + done.stderr


def _judged(results_file: Path) -> dict[str, float]:
    row = json.loads(results_file.read_text(encoding="utf-8"))["results"]["agentx"]
    return {k: v for k, v in row.items() if k.split(",")[0] in ("ground_s", "tool_p", "goal_acc") and "stderr" not in k}


def test_rescore_reuses_the_runs_judge_from_the_cache(api_run: dict[str, Any], tmp_path: Path) -> None:
    """The judge that scored the run is gone; its cache answers every verdict, nothing is sent, nothing is NaN."""
    env = _clean_env(LMMS_AGENTIC_JUDGE_CACHE=str(api_run["cache"]))
    done = _cli(env, tmp_path, "rescore", str(api_run["results_file"].parent), "--output", str(tmp_path / "r"))
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    before = _judged(api_run["results_file"])
    (after_file,) = sorted((tmp_path / "r").rglob("*_results.json"))
    after = _judged(after_file)
    assert before and all(not math.isnan(v) for v in after.values())
    assert {k: v for k, v in after.items() if k in before} == before
    verdicts = [line for line in out.splitlines() if line.startswith(f"judge {JUDGE_MODEL}: ")]
    assert verdicts and verdicts[0].endswith(" sent") and " 0 sent" in verdicts[0], out[-2000:]
    assert "the run's, from its results" in out
    assert out.count("it/s]") == 0  # no progress bars


def test_rescore_without_a_judge_is_explicit(api_run: dict[str, Any], tmp_path: Path) -> None:
    env = _clean_env(LMMS_AGENTIC_JUDGE_CACHE=str(api_run["cache"]))
    done = _cli(env, tmp_path, "rescore", str(api_run["results_file"].parent), "--output", str(tmp_path / "n"),
                "--judge", "none")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "judge: none (--judge none)" in done.stdout
    (after_file,) = sorted((tmp_path / "n").rglob("*_results.json"))
    assert all(math.isnan(v) for v in _judged(after_file).values())


def test_rescore_without_lmms_eval_names_the_install(api_run: dict[str, Any], tmp_path: Path) -> None:
    done = _without_heavy("lmms_agentic", ["rescore", str(api_run["results_file"].parent)],
                          _clean_env(LMMS_AGENTIC_JUDGE_CACHE=str(api_run["cache"])), tmp_path)
    assert done.returncode == 1
    assert "pip install -e '.[lmms-eval]'" in done.stdout + done.stderr
