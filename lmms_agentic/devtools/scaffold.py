"""`python -m lmms_agentic new-benchmark NAME`: a new multiple-choice benchmark folder from the template.

Writes `tasks/<name>/` in the benchmark layout (manifest, README with checklist and changelog, the interface in
`__init__.py`, the harness-neutral `core/` with the release-row reader, prompt and metric names, the plugin's
`release.py`, `hooks.py` and `views.py`, the mini split builder, task YAMLs) and, when a tests folder is given,
`tests/<name>/test_<name>.py`, then builds the 3-row mini split. Nothing outside those two folders changes: the
demo, report, reproduce, permutation generator, baselines, export and contract tests find the benchmark through its
`benchmark.json` and its package. The template lives in `lmms_agentic/devtools/benchmark_template/` (`{{name}}`,
`{{title}}`, `{{n_options}}` are replaced; `NAME` in a file name becomes the name).
"""

from __future__ import annotations

import re
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


def create(name: str, *, n_options: int = 4, tasks_root: Path | None = None, tests_root: Path | None = None,
           build_mini: bool = True) -> Path:
    """Create `tasks_root/<name>/` (and `tests_root/<name>/`); returns the task folder."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"benchmark name {name!r} must be 2-31 lower-case letters/digits, starting with a letter")
    if not 2 <= n_options <= 10:
        raise ValueError(f"a question needs 2-10 options, got {n_options}")
    root = (tasks_root or benchmarks.tasks_root()).resolve()
    folder = root / name
    if folder.exists():
        raise FileExistsError(f"{folder} already exists; choose another name or remove it")
    template = Path(str(resources.files("lmms_agentic.devtools") / TEMPLATE))
    folder.mkdir(parents=True)
    _render_tree(template, folder, name, n_options, skip=("tests",))
    if tests_root is not None:
        tests = tests_root / name
        tests.mkdir(parents=True, exist_ok=True)
        (tests / "__init__.py").write_text("")
        _render_tree(template / "tests", tests, name, n_options)
    if build_mini:
        # in a fresh interpreter, through the benchmark interface: the new package must be importable from the folder
        # just written (the registry reads that folder)
        code = ("import sys; from pathlib import Path; from lmms_agentic.adapters import benchmarks; "
                "benchmarks.get(sys.argv[1], Path(sys.argv[2])).package().build_mini(Path(sys.argv[3]))")
        subprocess.run([sys.executable, "-c", code, name, str(root), str(folder / "data" / "mini")], check=True,
                       capture_output=True, text=True)
    benchmarks.clear_cache()
    return folder
