"""The built wheel: everything lives under `lmms_agentic/`, and YAML, templates and data travel with it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build_dir = tmp_path_factory.mktemp("build")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
                   check=True, capture_output=True, cwd=build_dir, timeout=600)
    (built,) = out.glob("lmms_agentic-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_nothing_generic_lands_at_the_top_level(wheel_names: set[str]) -> None:
    top_level = {name.split("/")[0] for name in wheel_names}
    assert top_level == {"lmms_agentic"} | {n for n in top_level if n.endswith(".dist-info")}


def test_every_task_file_travels_in_the_wheel(wheel_names: set[str]) -> None:
    """Data travels through package-data globs: no `__init__.py` is needed in data folders."""
    assert not [p for p in (REPO / "tasks").rglob("__init__.py") if "data" in p.parts or "permutations" in p.parts]
    expected = set()
    for path in (REPO / "tasks").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            expected.add("lmms_agentic/tasks/" + path.relative_to(REPO / "tasks").as_posix())
    missing = expected - wheel_names
    assert not missing, f"not in the wheel: {sorted(missing)}"


@pytest.mark.parametrize("name", [
    "lmms_agentic/tasks/robovista/_default_template_yaml",
    "lmms_agentic/tasks/robovista/robovista.yaml",
    "lmms_agentic/tasks/robovista/benchmark.json",
    "lmms_agentic/tasks/robovista/reference.csv",
    "lmms_agentic/tasks/robovista/permutations/_circular_yaml",
    "lmms_agentic/tasks/robovista/permutations/circular.json",
    "lmms_agentic/tasks/agentvqa/data/mini/videos/kitchen_walk.mp4",
    "lmms_agentic/tasks/robovista/README.md",
    "lmms_agentic/tasks/robovista/data/mini/data/train-00000-of-00001.parquet",
    "lmms_agentic/adapters/core/extract.py",
    "lmms_agentic/judges/__init__.py",
    "lmms_agentic/harness/host.py",
    "lmms_agentic/py.typed",
    "lmms_agentic/presets/open.yaml",
    "lmms_agentic/devtools/benchmark_template/hooks.py.tmpl",
])
def test_key_files_are_packaged(wheel_names: set[str], name: str) -> None:
    assert name in wheel_names


def test_entry_point_is_declared(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = archive.read(name).decode()
    assert "[lmms_eval.models]" in text
    assert "lmms_agentic = lmms_agentic.harness.host:register" in text
