"""Adding a benchmark touches only its own two folders: the steps of README.md's "Adding a benchmark", replayed in a
clean clone of this repository, give a throwaway fourth MCQ benchmark whose own tests and the contract tests pass,
that the demo, `report`, `reproduce --from`, `baselines`, `export` and the lm-eval task folder pick up, and after
which `git status` shows changes under `tasks/<name>/` and `tests/<name>/` only.

The clone holds this working tree as it is (uncommitted edits included, committed there as one snapshot), plus three
links that make it importable as the installed package (`lmms_agentic/{tasks,adapters,judges}`, kept out of
`git status` through `.git/info/exclude`). Every step runs in a fresh interpreter with the clone first on PYTHONPATH,
which lmms-eval's entry point then imports too.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = "mybench"  # the README's example name
NAME = "toybench"
pytestmark = pytest.mark.e2e


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), "-c", "user.name=test", "-c", "user.email=test@localhost", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout


def _clone(target: Path) -> Path:
    """A clone of this repository holding its working tree as it is now."""
    _git(REPO, "clone", "--quiet", str(REPO), str(target))
    changed = _git(REPO, "diff", "--name-only", "-z", "HEAD").split("\0")
    changed += _git(REPO, "ls-files", "--others", "--exclude-standard", "-z").split("\0")
    for relative in filter(None, changed):
        source = REPO / relative
        if source.is_file():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / relative)
        else:  # deleted since the last commit
            (target / relative).unlink(missing_ok=True)
    _git(target, "add", "-A")
    _git(target, "commit", "--quiet", "--allow-empty", "-m", "snapshot of the working tree")
    for shared in ("tasks", "adapters", "judges"):
        (target / "lmms_agentic" / shared).symlink_to(Path("..") / shared)
    with (target / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("".join(f"/lmms_agentic/{shared}\n" for shared in ("tasks", "adapters", "judges")))
    return target


def _env(root: Path, cache: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "LMMS_AGENTIC_DATA": "mini", "TOKENIZERS_PARALLELISM": "false", "LMMS_AGENTIC_CACHE": str(cache)}


def _run(root: Path, cache: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, *args], env=_env(root, cache), cwd=root, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def readme_steps() -> list[list[str]]:
    """The commands of README.md's "Adding a benchmark" block, with the example name replaced by ours."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("**Adding a benchmark**"):]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block, "README.md's 'Adding a benchmark' has no bash block"
    steps = []
    for line in block.group(1).splitlines():
        command = line.split("#")[0].replace(EXAMPLE, NAME).split()
        if command:
            assert command[:2] == ["python", "-m"], f"a README step this test cannot replay: {line}"
            steps.append(command[1:])
    return steps


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """(the clone, its cache folder, each step's output) after the README's steps."""
    tmp = tmp_path_factory.mktemp("new_benchmark")
    root, cache = _clone(tmp / "repo"), tmp / "cache"
    outputs = []
    for step in readme_steps():
        if step[:2] == ["-m", "pytest"]:  # the clone is the package: pytest must not import this repository's copy
            step = [*step, "-p", "no:cacheprovider", "--import-mode=importlib"]
        outputs.append(_run(root, cache, *step).stdout)
    return root, cache, outputs


def test_the_readme_lists_the_scaffold_the_generator_and_the_tests() -> None:
    steps = readme_steps()
    assert steps[0][:3] == ["-m", "lmms_agentic", "new-benchmark"] and ["-m", "lmms_agentic", "permutations"] in steps
    assert any(step[:2] == ["-m", "pytest"] for step in steps)


def test_the_imported_package_is_the_clone(checkout: tuple[Path, Path, list[str]]) -> None:
    root, cache, _ = checkout
    done = _run(root, cache, "-c", "import lmms_agentic; print(lmms_agentic.tasks_dir())")
    assert done.stdout.strip() == str((root / "tasks").resolve())


def test_git_status_shows_only_its_two_folders(checkout: tuple[Path, Path, list[str]]) -> None:
    root, _, _ = checkout
    changed = [line[3:] for line in _git(root, "status", "--porcelain", "--untracked-files=all").splitlines()]
    assert changed and all(path.startswith((f"tasks/{NAME}/", f"tests/{NAME}/")) for path in changed), changed
    expected = {f"tasks/{NAME}/{path}" for path in ("__init__.py", "hooks.py", "release.py", "upstream.py",
                                                     *(f"core/{m}.py" for m in ("task", "metrics", "records",
                                                                               "prompt", "scoring")))}
    assert expected | {f"tests/{NAME}/test_{NAME}.py"} <= set(changed)
    assert f"tasks/{NAME}/views.py" not in changed, "the core's METRICS table is the only place metrics are defined"
    from lmms_agentic.devtools.permutations import MODES

    written = sorted(Path(p).name for p in changed if f"tasks/{NAME}/permutations/" in p and p.endswith(".yaml"))
    assert written == sorted(f"{NAME}{part}_{mode}.yaml" for part in ("", "_general") for mode in MODES)


def test_its_own_tests_and_the_contract_tests_passed(checkout: tuple[Path, Path, list[str]]) -> None:
    tests = checkout[2][-1]
    assert re.search(r"\b\d+ passed", tests) and "failed" not in tests and "error" not in tests.lower(), tests
    assert f"test_{NAME}.py" in tests or "passed" in tests


def test_the_interface_and_the_core_rule_hold(checkout: tuple[Path, Path, list[str]]) -> None:
    root, cache, _ = checkout
    done = _run(root, cache, "-c", (
        f"import sys, lmms_agentic.tasks.{NAME} as own\n"
        "print(sorted(m for m in sys.modules if m.startswith(('datasets', 'lmms_agentic.judges'))))\n"
        f"from lmms_agentic.adapters import benchmarks\nprint(benchmarks.get({NAME!r}).package() is own)\n"
        "print(own.METRICS)\n"))
    heavy, same, metrics = done.stdout.strip().splitlines()
    assert heavy == "[]", "the package and its core import nothing heavy"
    assert same == "True" and "accuracy" in metrics


def _module_names(tree: ast.Module) -> set[str]:
    return {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}


def test_its_hooks_are_bindings_to_the_generic_plugin_task(checkout: tuple[Path, Path, list[str]]) -> None:
    """`hooks.py` holds no logic: imports, the `PluginBenchmark` declaration, `HOOKS` and names bound to its
    methods; no function, class, loop or branch of its own."""
    root, _, _ = checkout
    tree = ast.parse((root / "tasks" / NAME / "hooks.py").read_text(encoding="utf-8"))
    assert "lmms_agentic.adapters.plugin_task" in _module_names(tree)
    logic = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.For, ast.While, ast.If, ast.With,
             ast.Try, ast.comprehension)
    assert not [type(node).__name__ for node in ast.walk(tree) if isinstance(node, logic)]
    for statement in tree.body[1:]:
        assert isinstance(statement, (ast.Import, ast.ImportFrom, ast.Assign)), ast.unparse(statement)
    bound = {target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets
             if isinstance(target, ast.Name)}
    assert {"PLUGIN", "HOOKS", "doc_to_visual", "doc_to_text", "doc_to_messages", "process_results"} <= bound
    release = ast.parse((root / "tasks" / NAME / "release.py").read_text(encoding="utf-8"))
    names = {getattr(node, "name", None) for node in release.body} | {
        target.id for node in release.body if isinstance(node, ast.Assign) for target in node.targets
        if isinstance(target, ast.Name)}
    assert {"SCHEMA", "normalise", "load_documents"} <= names


def test_its_core_is_a_core_task_whose_metrics_its_yaml_lists(checkout: tuple[Path, Path, list[str]]) -> None:
    root, cache, _ = checkout
    done = _run(root, cache, "-c", (
        "from lmms_agentic.adapters.core.task import check_core_task\n"
        f"from lmms_agentic.tasks.{NAME}.core import task\n"
        "core = check_core_task(task)\n"
        "print(list(core.METRICS), dict(core.TASK_METRICS), sorted(core.VARIANTS))\n"))
    assert done.stdout.strip() == ("['accuracy', 'no_answer_rate', 'request_failed_rate'] "
                                   "{'domain': ('accuracy', 'no_answer_rate', 'request_failed_rate')} "
                                   "['all', 'general']")
    assert "metric-lists" in (root / "tasks" / NAME / "_default_template_yaml").read_text()  # its marked block
    _run(root, cache, "-m", "lmms_agentic", "metric-lists", "--check")  # ... is the core's METRICS


def test_baselines_know_it(checkout: tuple[Path, Path, list[str]]) -> None:
    root, cache, _ = checkout
    done = _run(root, cache, "-m", "lmms_agentic", "baselines", NAME)
    assert f"Constant-letter baselines for {NAME}" in done.stdout
    assert "| always A | 33.3 | 33.3 | 33.3 |" in done.stdout  # gold letters A, B, C of the three mini rows


def test_demo_report_and_reproduce_include_it(checkout: tuple[Path, Path, list[str]], tmp_path: Path) -> None:
    root, cache, _ = checkout
    done = _run(root, cache, "-m", "lmms_agentic", "demo", "--skip-tiny-vlm", "--output", str(tmp_path / "demo"))
    assert f"--tasks {NAME}," in done.stdout or f",{NAME}" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith(f"| {NAME} |"))
    assert row.startswith(f"| {NAME} | 3 | 33.3 | 33.3 ")  # dummy answers "A": exactly the share of gold "A"
    dummy = tmp_path / "demo" / "dummy"
    results = json.loads(next(dummy.rglob("*_results.json")).read_text())
    assert results["results"][NAME]["accuracy,none"] == pytest.approx(100 / 3)
    assert next(dummy.rglob(f"*_{NAME}_domains.png")).stat().st_size > 1000
    report = _run(root, cache, "-m", "lmms_agentic", "report", str(dummy))
    assert f"| {NAME} | 3 |" in report.stdout
    reproduce = _run(root, cache, "-m", "lmms_agentic", "reproduce", "--from", str(dummy), "--benchmark", NAME)
    assert NAME in reproduce.stdout


def test_export_and_lm_eval_include_it(checkout: tuple[Path, Path, list[str]], tmp_path: Path) -> None:
    """Its scaffolded `upstream.py` exports it for both harnesses: the core next to a `utils.py` generated from its
    `core/task.py`, nothing naming this package, and the export's own test files pass where lmms_agentic cannot be
    imported."""
    from ..lmeval.isolation import run_isolated

    root, cache, _ = checkout
    dirs = {"lmms-eval": ("lmms_eval", "test/eval"), "lm-eval": ("lm_eval", "tests")}
    for harness, (package, tests) in dirs.items():
        out = tmp_path / harness
        _run(root, cache, "-m", "lmms_agentic", "export", "--harness", harness, "--benchmark", NAME, str(out))
        folder = out / package / "tasks" / NAME
        core = {"task.py", "metrics.py", "records.py", "prompt.py", "scoring.py"}
        assert {"utils.py", *core} <= {p.name for p in folder.glob("*.py")}
        assert 'process_results_domain = HOOKS.process_results("domain")' in (folder / "utils.py").read_text()
        assert next(out.rglob("extract.py"), None) is not None  # the shared extractor the core's scoring imports
        assert (folder / f"{NAME}_general.yaml").is_file()
        assert not [p for p in out.rglob("*") if p.is_file() and "lmms_agentic" in p.read_text()]
        done = run_isolated("pytest", ["-q", "-p", "no:cacheprovider", "--rootdir", str(out),
                                       str(out / tests / f"test_{NAME}.py")], {},
                            cwd=out, task_dirs={f"{package}.tasks": str(out / package / "tasks")})
        assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    folder = Path(_run(root, cache, "-m", "lmms_agentic", "lmeval-tasks-dir").stdout.strip())
    assert (folder / NAME / f"{NAME}_general.yaml").is_file() and folder.is_relative_to(cache)
