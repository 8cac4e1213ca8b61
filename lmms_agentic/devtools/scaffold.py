"""`python -m lmms_agentic new-benchmark NAME`: a new multiple-choice benchmark folder from the template.

Writes `tasks/<name>/` in the shape of the shipped benchmarks (manifest, README with checklist and changelog, the
interface in `__init__.py`; the harness-neutral `core/` as one `adapters.core.task.CoreTask` in `core/task.py`, with
the release-row reader, prompt, scoring and the one `METRICS` table; the plugin's `release.py` with `SCHEMA`,
`normalise` and `load_documents`; `hooks.py`, bindings only to `adapters.plugin_task`; the mini split builder, the
upstream export's `upstream.py`, task YAMLs listing `METRICS`) and, when a tests folder is given,
`tests/<name>/test_<name>.py` (prompt, scoring and aggregation), then builds the 3-row mini split. Nothing outside
those two folders changes: the demo, report, reproduce, permutation generator, baselines, export and contract tests
find the benchmark through its `benchmark.json` and its package. The template lives in
`lmms_agentic/devtools/benchmark_template/` (`{{name}}`, `{{title}}`, `{{n_options}}` are replaced; `NAME` in a file
name becomes the name). The name must be usable as a module name (no Python keyword), the folder must be the one
`lmms_agentic.tasks` is imported from (the package imports itself by that name), and a failure midway removes what
was written.
"""

from __future__ import annotations

import keyword
import re
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from lmms_agentic.adapters import benchmarks

TEMPLATE = "benchmark_template"
_NAME = re.compile(r"[a-z][a-z0-9]{1,30}")


def _render(text: str, name: str, n_options: int) -> str:
    return (text.replace("{{name}}", name).replace("{{title}}", name.capitalize())
            .replace("{{n_options}}", str(n_options)))


def _target_name(template_name: str, name: str) -> str:
    return template_name.removesuffix(".tmpl").replace("NAME", name)


def _render_tree(source: Path, target: Path, name: str, n_options: int, skip: tuple[str, ...] = ()) -> None:
    """Every `*.tmpl` file under `source` (sub-folders included, except `skip`) rendered into `target`."""
    for entry in sorted(source.rglob("*.tmpl")):
        relative = entry.relative_to(source)
        if relative.parts[0] in skip:
            continue
        path = target / relative.parent / _target_name(entry.name, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_render(entry.read_text(encoding="utf-8"), name, n_options), encoding="utf-8")


class ScaffoldError(ValueError):
    """The benchmark could not be created; nothing of it is left behind. One line for the user."""


def _importable_roots() -> list[Path]:
    """The folders Python imports `lmms_agentic.tasks.<name>` from."""
    import lmms_agentic.tasks

    return [Path(p).resolve() for p in lmms_agentic.tasks.__path__]


def check_name(name: str) -> None:
    """`ScaffoldError` unless ``name`` can be a benchmark package and task-name prefix."""
    if not _NAME.fullmatch(name):
        raise ScaffoldError(f"benchmark name {name!r} must be 2-31 lower-case letters/digits, starting with a letter")
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise ScaffoldError(f"benchmark name {name!r} is a Python keyword: `import lmms_agentic.tasks.{name}` would "
                            f"be a syntax error; choose another name (e.g. {name}bench)")


def create(name: str, *, n_options: int = 4, tasks_root: Path | None = None, tests_root: Path | None = None,
           build_mini: bool = True) -> Path:
    """Create `tasks_root/<name>/` (and `tests_root/<name>/`); returns the task folder. Everything is checked
    before anything is written, and a failure on the way removes what was written (`ScaffoldError`)."""
    check_name(name)
    if not 2 <= n_options <= 10:
        raise ScaffoldError(f"a question needs 2-10 options, got {n_options}")
    root = (tasks_root or benchmarks.tasks_root()).resolve()
    importable = _importable_roots()
    if root not in importable:
        raise ScaffoldError(f"{root} is not the task folder Python imports lmms_agentic.tasks from "
                            f"({', '.join(map(str, importable))}): the new package imports itself as "
                            f"lmms_agentic.tasks.{name}, so it only works there; omit --tasks-dir, or install the "
                            f"checkout that holds {root} (pip install -e <checkout>) and run this again")
    folder = root / name
    if folder.exists():
        raise FileExistsError(f"{folder} already exists; choose another name or remove it")
    tests = tests_root / name if tests_root is not None else None
    if tests is not None and tests.exists():
        raise FileExistsError(f"{tests} already exists; choose another name or remove it")
    template = Path(str(resources.files("lmms_agentic.devtools") / TEMPLATE))
    try:
        folder.mkdir(parents=True)
        _render_tree(template, folder, name, n_options, skip=("tests",))
        if tests is not None:
            tests.mkdir(parents=True)
            (tests / "__init__.py").write_text("")
            _render_tree(template / "tests", tests, name, n_options)
        if build_mini:
            _build_mini(name, root, folder)
    except BaseException as exc:
        for written in (folder, tests):
            if written is not None and written.exists():
                shutil.rmtree(written, ignore_errors=True)
        if isinstance(exc, OSError):
            raise ScaffoldError(f"cannot write {exc.filename or folder} ({exc.strerror or exc}); nothing was "
                                "left behind") from exc
        raise
    finally:
        benchmarks.clear_cache()
    return folder


def _build_mini(name: str, root: Path, folder: Path) -> None:
    """The 3-row mini split, in a fresh interpreter through the benchmark interface (the new package must be
    importable from the folder just written: the registry reads that folder)."""
    code = ("import sys; from pathlib import Path; from lmms_agentic.adapters import benchmarks; "
            "benchmarks.get(sys.argv[1], Path(sys.argv[2])).package().build_mini(Path(sys.argv[3]))")
    done = subprocess.run([sys.executable, "-c", code, name, str(root), str(folder / "data" / "mini")],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no error output"])[-1]
        raise ScaffoldError(f"building the mini split of {name} failed ({last}); nothing was left behind")
