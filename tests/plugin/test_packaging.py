"""The built sdist and wheel (the wheel built from the sdist, as pip does from a source archive): everything lives
under `lmms_agentic/`, YAML, templates and data travel with it, the base requirements hold neither lmms-eval nor
torch, and the wheel installed into a clean venv runs the lm-eval path with lmms-eval and torch absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("lmms-eval", "torch", "torchvision", "transformers", "accelerate")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`python -m build`: the sdist, then the wheel built from the unpacked sdist."""
    out = tmp_path_factory.mktemp("dist")
    build_dir = tmp_path_factory.mktemp("build")
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
                   check=True, capture_output=True, cwd=build_dir, timeout=600)
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (built,) = dist.glob("lmms_agentic-*.whl")
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


def test_the_sdist_carries_the_build_files_and_the_task_data(dist: Path) -> None:
    (sdist,) = dist.glob("lmms_agentic-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "tasks/robovista/robovista.yaml",
                 "tasks/robovista/data/mini/data/train-00000-of-00001.parquet", "adapters/core/extract.py"):
        assert name in names, name


def test_the_base_requirements_need_neither_lmms_eval_nor_torch(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [line.removeprefix("Requires-Dist: ") for line in archive.read(name).decode().splitlines()
                    if line.startswith("Requires-Dist: ")]
    base = [r for r in requires if "extra ==" not in r]
    assert not [r for r in base if r.split(">")[0].split("=")[0].split("<")[0].strip() in HEAVY], base
    assert any(r.startswith("lmms-eval==") and 'extra == "lmms-eval"' in r for r in requires)
    assert [r for r in requires if 'extra == "lmeval"' in r] == ['lm-eval[api]==0.4.13; extra == "lmeval"']


CLEAN_CHECK = r"""
import json, os, runpy, sys
HIDDEN = ("lmms_eval", "torch", "torchvision", "transformers", "accelerate", "decord")

class _Absent:
    def __init__(self, finder):
        self.finder = finder
    def find_spec(self, name, path=None, target=None):
        return None if name.split(".")[0] in HIDDEN else self.finder.find_spec(name, path, target)
    def __getattr__(self, attribute):
        return getattr(self.finder, attribute)

sys.meta_path[:] = [_Absent(f) if hasattr(f, "find_spec") else f for f in sys.meta_path]
import lmms_agentic
from lmms_agentic.lmeval import tasks_dir
from lm_eval.tasks import TaskManager

folder = tasks_dir()
tasks = TaskManager(include_path=folder, metadata={"max_images": 64}).load(["robovista"])
docs = sum(len(list(t.test_docs())) for t in tasks["tasks"].values())
print(json.dumps({"package": lmms_agentic.__file__, "docs": docs, "torch": "torch" in sys.modules,
                  "lmms_eval": "lmms_eval" in sys.modules}))
"""


def test_the_wheel_runs_the_lm_eval_path_in_a_clean_venv(wheel: Path, tmp_path: Path) -> None:
    """A venv without system site-packages; the wheel installed with --no-deps and no index. Its dependencies are
    borrowed from this test venv through a `.pth` path line (processed after the venv's own site-packages, and
    without this venv's editable finder), lmms-eval and torch hidden as after `pip install '.[lmeval]'`."""
    pytest.importorskip("lm_eval", reason="pip install -e '.[lmeval]'")
    venv = tmp_path / "clean"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--quiet", str(wheel)], check=True, timeout=300, capture_output=True)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    borrowed = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "zz_borrowed_dependencies.pth").write_text("\n".join(borrowed) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(LMMS_AGENTIC_DATA="mini", LMMS_AGENTIC_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1")
    done = subprocess.run([str(python), "-c", CLEAN_CHECK], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(found["package"]).is_relative_to(site), found
    assert found["docs"] == 21 and not found["torch"] and not found["lmms_eval"], found
    listed = subprocess.run([str(python), "-m", "lmms_agentic", "lmeval-tasks-dir"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert listed.returncode == 0 and Path(listed.stdout.strip()).is_dir(), listed.stderr[-2000:]
