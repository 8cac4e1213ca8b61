"""Installation: the generated lm-eval folder travels in the wheel, and the `lm_eval.tasks` entry point is declared.

Both need lines in pyproject.toml (package-data globs, the entry point); until they are there these tests skip and
say so, and installs from a wheel would lack the folder.
"""

from __future__ import annotations

import fnmatch
from importlib import metadata
from pathlib import Path

import pytest

from lmms_agentic.lmeval import generate, tasks_dir

REPO = Path(__file__).resolve().parents[2]


def test_package_data_covers_every_generated_file() -> None:
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"].get("lmms_agentic", [])
    if not any(glob.startswith("lmeval_tasks/") for glob in globs):
        pytest.skip("pyproject.toml does not list lmeval_tasks/ in package-data yet")
    package = Path(tasks_dir()).parent
    files = [p.relative_to(package).as_posix() for p in Path(tasks_dir()).rglob("*") if p.is_file()]
    missing = [f for f in files if not any(fnmatch.fnmatch(f, glob.replace("**/", "*")) for glob in globs)]
    assert files and not missing, missing
    assert generate.TEMPLATE in {Path(f).name for f in files}


def test_the_lm_eval_tasks_entry_point_names_the_folder() -> None:
    found = [ep for ep in metadata.entry_points(group="lm_eval.tasks") if ep.value.startswith("lmms_agentic")]
    if not found:
        pytest.skip("no `lm_eval.tasks` entry point installed (pyproject snippet not applied, or not reinstalled)")
    loaded = found[0].load()
    assert str(loaded) == tasks_dir() and loaded() == tasks_dir()
