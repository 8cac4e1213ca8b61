"""Shared fixtures: the mini split, a runner for the real lmms-eval CLI (used by e2e tests), and the corrupted
copies of the bad-data tests (`tests/bad_data.py`, used by `tests/<benchmark>/test_bad_data.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters import bad_records, frames, media, provenance

REPO = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-snapshots", action="store_true", help="rewrite prompt snapshots on purpose")


@pytest.fixture
def update_snapshots(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-snapshots"))


@pytest.fixture(autouse=True)
def fresh_judge_coverage_run() -> None:
    """Each test is its own run for the judge coverage warning (logged once per run, see judges/coverage.py)."""
    from lmms_agentic.judges import coverage

    coverage.reset_run_state()


@pytest.fixture
def mini_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point every benchmark at its bundled mini split for the duration of a test."""
    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    for key in list(os.environ):
        if key.startswith("LMMS_AGENTIC_DATA_"):
            monkeypatch.delenv(key)
    yield


@pytest.fixture(scope="session")
def robovista_docs() -> Any:
    """The canonical RoboVista mini split (as process_docs returns it)."""
    from lmms_agentic.tasks.robovista import hooks

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        return hooks.load_docs(_manifest())


def placeholder(benchmark: str) -> Any:
    """The one-row placeholder dataset lmms-eval gives a base task's process_docs (the benchmark's manifest)."""
    import datasets

    row = json.loads((REPO / "tasks" / benchmark / "benchmark.json").read_text())
    return datasets.Dataset.from_list([row])


def _manifest() -> Any:
    return placeholder("robovista")


@pytest.fixture(scope="session")
def robovista_manifest() -> Any:
    return _manifest()


@dataclass
class CliRun:
    """A finished lmms-eval CLI run: its log, results JSON and samples per task."""

    returncode: int
    log: str
    output: Path

    @property
    def results_file(self) -> Path | None:
        found = sorted(self.output.rglob("*_results.json"))
        return found[-1] if found else None

    @property
    def results(self) -> dict[str, Any]:
        if self.results_file is None:
            raise AssertionError(f"lmms-eval wrote no results file. Log tail:\n{self.log[-4000:]}")
        data: dict[str, Any] = json.loads(self.results_file.read_text())
        return data

    def samples(self, task: str) -> list[dict[str, Any]]:
        files = sorted(self.output.rglob(f"*_samples_{task}.jsonl"))
        assert files, f"no samples for {task}"
        return [json.loads(line) for line in files[-1].read_text().splitlines()]

    def records(self, task: str) -> list[dict[str, Any]]:
        """The sample records of a task (the value of its first metric; see `adapters.samples`), by item id."""
        from lmms_agentic.adapters.samples import read_record

        found = [read_record(sample) for sample in self.samples(task)]
        assert all(record is not None for record in found), f"{task}: a sample line without a record"
        return sorted((r for r in found if r is not None), key=lambda r: str(r["id"]))

    def assert_ok(self) -> None:
        assert self.returncode == 0, self.log[-4000:]
        # lmms-eval exits 0 even when an evaluation fails: check the log and the results file too
        assert "Error during evaluation" not in self.log, self.log[-4000:]
        assert self.results_file is not None, self.log[-4000:]


def run_lmms_eval(args: list[str], output: Path, env: dict[str, str] | None = None,
                  subcommand: list[str] | None = None, timeout: int = 900) -> CliRun:
    """Run `lmms-eval [subcommand] ARGS --output_path OUTPUT --log_samples` as a user would."""
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    for key, value in list(full_env.items()):
        if value is None:
            del full_env[key]
    command = [str(Path(sys.executable).parent / "lmms-eval"), *(subcommand or []), *args,
               "--output_path", str(output), "--log_samples"]
    done = subprocess.run(command, env=full_env, capture_output=True, text=True, timeout=timeout, check=False)
    return CliRun(done.returncode, done.stdout + done.stderr, output)


# --------------------------------------------------------------------------- bad-data copies (tests/*/test_bad_data.py)

@pytest.fixture(scope="session")
def private_datasets_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Arrow caches of the corrupted copies go to a temporary folder, not the user's Hugging Face cache."""
    import datasets

    folder = tmp_path_factory.mktemp("hf-datasets-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(datasets.config, "HF_DATASETS_CACHE", folder)
        yield folder


@pytest.fixture
def point_at(monkeypatch: pytest.MonkeyPatch, private_datasets_cache: Path) -> Callable[..., None]:
    """Point ``benchmark`` at the folder ``copy`` (and set or clear the bad-record skip); forget decoded media
    and recorded provenance, which are keyed by record id, not by data location."""
    def point(benchmark: str, copy: Path, skip: bool = False) -> None:
        monkeypatch.delenv("LMMS_AGENTIC_DATA", raising=False)
        monkeypatch.setenv(f"LMMS_AGENTIC_DATA_{benchmark.upper()}", str(copy))
        if skip:
            monkeypatch.setenv(bad_records.SKIP_ENV, "1")
        else:
            monkeypatch.delenv(bad_records.SKIP_ENV, raising=False)
        media.configure_image_cache(enabled=True, clear=True)
        frames.clear_cache()
        provenance.clear()
    return point
