"""Adding a benchmark touches only its own folders: a throwaway fourth MCQ benchmark, scaffolded from the template
into a copy of the installed layout, is picked up by the permutation generator, the contract tests, `baselines`,
the demo and the report, with no edit anywhere else.

The copy is a temporary "site" folder: `lmms_agentic/` holds links to this repository's package files, `adapters`
and `judges`, and a copy of `tasks/` (so nothing here writes into the repository). Every step runs in a fresh
interpreter with that folder first on PYTHONPATH, which lmms-eval's entry point then imports too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NAME = "toybench"
pytestmark = pytest.mark.e2e


def _site(tmp: Path) -> Path:
    package = tmp / "site" / "lmms_agentic"
    package.mkdir(parents=True)
    for entry in (REPO / "lmms_agentic").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for shared in ("adapters", "judges"):
        (package / shared).symlink_to(REPO / shared)
    shutil.copytree(REPO / "tasks", package / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp / "site"


def _run(site: Path, *args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "LMMS_AGENTIC_DATA": "mini", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, *args], env=env, cwd=cwd or site, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("new_benchmark")
    site = _site(tmp)
    tasks = site / "lmms_agentic" / "tasks"
    _run(site, "-m", "lmms_agentic", "new-benchmark", NAME, "--options", "4", "--tasks-dir", str(tasks),
         "--tests-dir", str(tmp / "tests"))
    _run(site, "-m", "lmms_agentic", "permutations")
    return site


def test_the_imported_package_is_the_copy(site: Path) -> None:
    done = _run(site, "-c", "import lmms_agentic; print(lmms_agentic.tasks_dir())")
    assert done.stdout.strip() == str((site / "lmms_agentic" / "tasks").resolve())


def test_only_its_own_folders_were_written(site: Path) -> None:
    """The scaffold and the generator wrote the new folder; every other benchmark folder is unchanged."""
    tasks = site / "lmms_agentic" / "tasks"
    for original in (REPO / "tasks").iterdir():
        if original.is_dir() and original.name != "__pycache__":
            for path in original.rglob("*"):
                if path.is_file() and "__pycache__" not in path.parts:
                    copy = tasks / path.relative_to(REPO / "tasks")
                    assert copy.read_bytes() == path.read_bytes(), copy
    assert sorted(p.name for p in (tasks / NAME / "permutations").glob("*.yaml")) == [
        f"{NAME}_circular.yaml", f"{NAME}_general_circular.yaml", f"{NAME}_general_perm5.yaml", f"{NAME}_perm5.yaml"]
    assert (site.parent / "tests" / NAME / f"test_{NAME}.py").is_file()


def test_its_own_tests_and_the_contract_tests_pass(site: Path) -> None:
    own = _run(site, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(site.parent / "tests" / NAME),
               "--rootdir", str(site.parent))
    assert "2 passed" in own.stdout
    # importlib mode: pytest must not put the repository first on sys.path (the copy is the installed package)
    contract = _run(site, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
                    str(REPO / "tests" / "plugin" / "test_contract.py"), "-k", NAME, "--rootdir", str(REPO))
    assert " passed" in contract.stdout and "failed" not in contract.stdout
    assert "deselected" in contract.stdout  # the other benchmarks' cases exist and were not selected


def test_baselines_know_it(site: Path) -> None:
    done = _run(site, "-m", "lmms_agentic", "baselines", NAME)
    assert f"Constant-letter baselines for {NAME}" in done.stdout
    assert "| always A | 33.3 | 33.3 | 33.3 |" in done.stdout  # gold letters A, B, C of the three mini rows


def test_demo_and_report_include_it(site: Path, tmp_path: Path) -> None:
    done = _run(site, "-m", "lmms_agentic", "demo", "--skip-tiny-vlm", "--output", str(tmp_path / "demo"),
                timeout=900)
    assert f"--tasks {NAME}," in done.stdout or f",{NAME}" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith(f"| {NAME} |"))
    assert row.startswith(f"| {NAME} | 3 | 33.3 | 33.3 ")  # dummy answers "A": exactly the share of gold "A"
    results = json.loads(next((tmp_path / "demo" / "dummy").rglob("*_results.json")).read_text())
    assert results["results"][NAME]["accuracy,none"] == pytest.approx(100 / 3)
    assert (next((tmp_path / "demo" / "dummy").rglob(f"*_{NAME}_domains.png"))).stat().st_size > 1000
