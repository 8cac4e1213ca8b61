"""The harnesses' own pre-commit rules, applied to (and checked on) the files of an upstream export.

Each harness's pre-commit setup is kept verbatim in `style/<harness>/` (its `.pre-commit-config.yaml` as
`pre-commit-config.yaml`, its `pyproject.toml` as `pyproject.toml.txt`, lm-eval's codespell word list; sources in
`style/README.md`), and the tool versions its hooks pin are in the checkout's
`constraints/export-style-lmms-eval.txt` and `constraints/export-style-lm-eval.txt`:

- lmms-eval: black 25.1.0 (`--line-length=240`), then isort 6.0.1 (`--profile black`);
- lm-eval: pre-commit-hooks 6.0.0 (whitespace, end of file, line endings, YAML and AST checks), ruff 0.16.3
  (`ruff check --fix`, `ruff format`, its `[tool.ruff.lint]` settings) and codespell 2.4.3.

The hooks run as pre-commit runs them: in the config's order, with its arguments, on the files its `files`,
`exclude` and `types` select, from the root of a checkout-shaped copy (the harness's config files at the root, a
git repository where isort and black stop looking for settings, the harness's package markers, each file at its
repository path). Import sections and settings are therefore those of the harness's repository wherever the export
is written. The tools come from a venv holding exactly the pinned versions (`tool_bin`, built once under
`.cache/export-venvs/` from PyPI).

`format_files` runs the hooks and copies what they fixed back; for lm-eval, findings `ruff check --fix` cannot fix
(its docstring and bandit rules on the copied core modules) are then suppressed line by line with
`ruff check --add-noqa`. `check_files` runs every hook and raises `FormattingError` when one fails or would change a
file, as the harness's CI does.
"""

from __future__ import annotations

import difflib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

STYLE = Path(__file__).resolve().parent / "style"
CHECKOUT = Path(__file__).resolve().parents[3]
"""The lmms-agentic checkout (its `constraints/` and `.cache/`)."""
CONFIG_NAMES = {"pre-commit-config.yaml": ".pre-commit-config.yaml", "pyproject.toml.txt": "pyproject.toml"}
"""Style files stored under another name (package data carries no dot files, and a `pyproject.toml` inside this
package would be read as a project by the tools that run on it); the rest keep theirs."""
PACKAGE_FILES = {"lmms-eval": ("lmms_eval/__init__.py", "lmms_eval/tasks/__init__.py", "test/__init__.py",
                               "test/eval/__init__.py"),
                 "lm-eval": ("lm_eval/__init__.py", "lm_eval/tasks/__init__.py", "tests/__init__.py")}
"""The harness's package markers around the exported folders (present at the commits in `style/README.md`): with
them isort sees `<package>.tasks.<any folder>` as first party, as in the checkout, not only the folders copied."""
TEXT_BYTES = bytes({7, 8, 9, 10, 11, 12, 13, 27} | set(range(0x20, 0x100)) - {0x7F})
EXTENSION_TYPES = {".py": "python", ".pyi": "pyi", ".pyx": "cython", ".ipynb": "jupyter", ".yaml": "yaml",
                   ".yml": "yaml", ".json": "json", ".md": "markdown", ".toml": "toml", ".txt": "plain-text"}


class FormattingError(RuntimeError):
    """A formatter could not run, or a file does not follow the harness's rules."""


@dataclass(frozen=True)
class Hook:
    """A pre-commit hook as its repository's `.pre-commit-hooks.yaml` defines it."""

    entry: tuple[str, ...]
    types: frozenset[str] = frozenset({"file"})
    types_or: frozenset[str] = frozenset()
    files: str = ""
    args: tuple[str, ...] = ()


HOOKS = {
    "black": Hook(("black",), types_or=frozenset({"python", "pyi"})),
    "isort": Hook(("isort",), types_or=frozenset({"cython", "pyi", "python"}), args=("--filter-files",)),
    "ruff-check": Hook(("ruff", "check", "--force-exclude"), types_or=frozenset({"python", "pyi", "jupyter"})),
    "ruff-format": Hook(("ruff", "format", "--force-exclude"), types_or=frozenset({"python", "pyi", "jupyter"})),
    "codespell": Hook(("codespell",), types=frozenset({"text"})),
    "pymarkdown": Hook(("pymarkdown",), types=frozenset({"markdown"}), args=("scan",)),
    "check-added-large-files": Hook(("check-added-large-files",)),
    "check-ast": Hook(("check-ast",), types=frozenset({"python"})),
    "check-case-conflict": Hook(("check-case-conflict",)),
    "check-json": Hook(("check-json",), types=frozenset({"json"})),
    "check-merge-conflict": Hook(("check-merge-conflict",), types=frozenset({"text"})),
    "check-yaml": Hook(("check-yaml",), types=frozenset({"yaml"})),
    "check-symlinks": Hook(("check-symlinks",), types=frozenset({"symlink"})),
    "destroyed-symlinks": Hook(("destroyed-symlinks",)),
    "detect-private-key": Hook(("detect-private-key",), types=frozenset({"text"})),
    "end-of-file-fixer": Hook(("end-of-file-fixer",), types=frozenset({"text"})),
    "fix-byte-order-marker": Hook(("fix-byte-order-marker",), types=frozenset({"text"})),
    "mixed-line-ending": Hook(("mixed-line-ending",), types=frozenset({"text"})),
    "requirements-txt-fixer": Hook(("requirements-txt-fixer",), files=r"(requirements|constraints).*\.txt$"),
    "trailing-whitespace": Hook(("trailing-whitespace-fixer",), types=frozenset({"text"})),
}
"""Entries and file selection of the hooks the harnesses configure (black 25.1.0, isort 6.0.1, ruff-pre-commit
v0.16.3, codespell v2.4.3, pre-commit-hooks v6.0.0, pymarkdown v0.9.39). A hook whose tool is not pinned (pymarkdown:
lm-eval excludes `lm_eval/tasks/` from it and an export ships no other Markdown) is an error only when it selects a
file."""
NOT_APPLICABLE = {"no-commit-to-branch": "a rule for the branch a contributor commits on, not for files"}
FIX_ROUNDS = 3
"""lm-eval: rounds of hooks, then `ruff check --add-noqa` and `ruff format`, until ruff passes."""


def _pins(harness: str) -> Path:
    return CHECKOUT / "constraints" / f"export-style-{harness}.txt"


def pinned_versions(harness: str) -> dict[str, str]:
    """Tool name -> the version the harness's hooks pin (the `constraints/export-style-...` file of `harness`)."""
    path = _pins(harness)
    if not path.is_file():
        raise FormattingError(f"{path} is missing: the export's formatting runs from an lmms-agentic checkout "
                              "(pip install -e . in it), or pass --no-format and run the harness's pre-commit")
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, _, version = line.partition("#")[0].strip().partition("==")
        if name:
            pins[name] = version
    return pins


def _venv_root() -> Path:
    return Path(os.environ.get("EXPORT_VENV_DIR") or CHECKOUT / ".cache" / "export-venvs")


VERSIONS_SCRIPT = """
import importlib.metadata, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        pass
print(json.dumps(found))
"""


def _installed(python: Path, names: Sequence[str]) -> dict[str, str]:
    if not python.exists():
        return {}
    done = subprocess.run([str(python), "-c", VERSIONS_SCRIPT, *names], capture_output=True, text=True, check=False)
    return dict(json.loads(done.stdout)) if done.returncode == 0 else {}


def tool_bin(harness: str) -> Path:
    """The bin folder of a venv holding exactly the pinned tools of `harness` (built from PyPI on first use)."""
    pins = pinned_versions(harness)
    key = hashlib.sha256(f"{sys.version_info[:2]}\n{sorted(pins.items())}".encode()).hexdigest()[:12]
    venv = _venv_root() / f"style-{harness}-{key}"
    python = venv / "bin" / "python"
    if _installed(python, list(pins)) == pins:
        return venv / "bin"
    venv.parent.mkdir(parents=True, exist_ok=True)
    install = f"{sys.executable} -m venv {venv} && {python} -m pip install -r {_pins(harness)}"
    with open(venv.parent / f".{venv.name}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed(python, list(pins)) != pins:
            shutil.rmtree(venv, ignore_errors=True)
            made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True,
                                  check=False)
            done = made if made.returncode else subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", "-r", str(_pins(harness))],
                capture_output=True, text=True, check=False)
            if done.returncode != 0 or _installed(python, list(pins)) != pins:
                raise FormattingError(f"the {harness} style tools ({', '.join(f'{n}=={v}' for n, v in pins.items())})"
                                      f" could not be installed:\n{done.stderr[-2000:]}\ninstall them with: {install}")
    return venv / "bin"


def style_config(harness: str) -> dict[str, Any]:
    """The harness's `.pre-commit-config.yaml`."""
    return dict(yaml.safe_load((STYLE / harness / "pre-commit-config.yaml").read_text(encoding="utf-8")))


def file_types(path: Path) -> set[str]:
    """pre-commit's type tags of a file (the subset of `identify` the configured hooks select on)."""
    if path.is_symlink():
        return {"symlink"}
    tags = {"file", "executable" if os.access(path, os.X_OK) else "non-executable"}
    head = path.read_bytes()[:1024]
    if not head.translate(None, TEXT_BYTES):
        tags.add("text")
        if head.startswith(b"#!") and b"python" in head.splitlines()[0]:
            tags.add("python")
    else:
        tags.add("binary")
    if path.suffix in EXTENSION_TYPES:
        tags.add(EXTENSION_TYPES[path.suffix])
    return tags


def _selected(config: Mapping[str, Any], hook: Mapping[str, Any], definition: Hook | None,
              paths: Mapping[str, Path]) -> list[str]:
    files = hook.get("files", definition.files if definition else "")
    types = set(hook.get("types", definition.types if definition else {"file"}))
    types_or = set(hook.get("types_or", definition.types_or if definition else ()))
    chosen = []
    for name, path in paths.items():
        if not re.search(config.get("files", ""), name) or re.search(config.get("exclude", "^$"), name):
            continue
        if not re.search(files, name) or re.search(hook.get("exclude", "^$"), name):
            continue
        tags = file_types(path)
        if types <= tags and (not types_or or types_or & tags) and not set(hook.get("exclude_types", ())) & tags:
            chosen.append(name)
    return chosen


def _repository_root(harness: str, files: Sequence[Path]) -> Path:
    from lmms_agentic.lmeval.export import HARNESS_DIRS

    roots = set()
    for path in files:
        absolute = Path(path).absolute()
        found = [parent for parent in absolute.parents
                 if any(absolute.relative_to(parent).as_posix().startswith(f"{d}/") for d in HARNESS_DIRS[harness])]
        if not found:
            raise FormattingError(f"{path} is not under {' or '.join(HARNESS_DIRS[harness])} of an export")
        roots.add(found[0])
    if len(roots) != 1:
        raise FormattingError(f"the files belong to more than one export: {sorted(map(str, roots))}")
    return roots.pop()


def _git(tree: Path, *command: str) -> None:
    """The copy is a git repository with the files staged, as in a contributor's checkout before a commit (isort
    and black stop looking for settings at its root; several pre-commit-hooks read the index)."""
    git = shutil.which("git")
    if git is None:
        raise FormattingError("git is needed to run the harness's pre-commit hooks on a checkout-shaped copy")
    done = subprocess.run([git, *command], cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise FormattingError(f"git {' '.join(command)} failed in the checkout copy: {done.stderr}")


@contextmanager
def _checkout_copy(harness: str, files: Sequence[Path], root: Path | None) -> Iterator[tuple[Path, dict[str, Path]]]:
    """(a checkout-shaped copy of `files`, repository path -> the original file)."""
    base = Path(root).absolute() if root is not None else _repository_root(harness, files)
    originals = {Path(path).absolute().relative_to(base).as_posix(): Path(path) for path in files}
    with tempfile.TemporaryDirectory(prefix=f"{harness}-checkout-") as folder:
        tree = Path(folder)
        for item in sorted(p for p in (STYLE / harness).iterdir() if p.is_file() and not p.name.startswith(".")):
            shutil.copyfile(item, tree / CONFIG_NAMES.get(item.name, item.name))
        for name in PACKAGE_FILES[harness]:
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).touch()
        for name, path in originals.items():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, tree / name)
        _git(tree, "init", "--quiet")
        _git(tree, "add", "--all")
        yield tree, originals


@dataclass
class HookRun:
    """One hook's run over the files it selected: exit status, output and the files it changed."""

    hook: str
    returncode: int
    output: str
    changed: dict[str, tuple[str, str]]

    @property
    def failed(self) -> bool:
        return self.returncode != 0 or bool(self.changed)

    def report(self) -> str:
        diffs = "".join("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), name, name))
                        for name, (before, after) in self.changed.items())
        return f"{self.hook} (exit {self.returncode}, changed {sorted(self.changed)}):\n{self.output}{diffs}"[:6000]


def _run_hook(tree: Path, tools: Path, hook_id: str, hook: Mapping[str, Any], names: list[str]) -> HookRun:
    before = {name: (tree / name).read_bytes() for name in names}
    definition = HOOKS[hook_id]
    args = tuple(hook["args"]) if "args" in hook else definition.args
    if not (tools / definition.entry[0]).exists():
        raise FormattingError(f"the {hook_id} hook would check {names}, but {definition.entry[0]} is not among the "
                              "pinned tools (constraints/export-style-lmms-eval.txt, "
                              "constraints/export-style-lm-eval.txt)")
    command = [str(tools / definition.entry[0]), *definition.entry[1:], *args, *names]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
    changed = {name: (data.decode("utf-8", "replace"), (tree / name).read_text("utf-8", "replace"))
               for name, data in before.items() if (tree / name).read_bytes() != data}
    return HookRun(hook_id, done.returncode, done.stdout + done.stderr, changed)


def _run_hooks(harness: str, tree: Path, paths: Mapping[str, Path]) -> list[HookRun]:
    config = style_config(harness)
    tools = tool_bin(harness)
    copies = {name: tree / name for name in paths}
    runs = []
    for repository in config["repos"]:
        for hook in repository["hooks"]:
            hook_id = hook["id"]
            if hook_id in NOT_APPLICABLE:
                continue
            names = _selected(config, hook, HOOKS.get(hook_id), copies)
            if not names:
                continue
            if hook_id not in HOOKS:
                raise FormattingError(f"{harness}'s pre-commit hook {hook_id} would check {names} but the exporter "
                                      f"cannot run it (see {__name__})")
            runs.append(_run_hook(tree, tools, hook_id, hook, names))
    return runs


def _suppress_unfixable(tree: Path, tools: Path, names: list[str]) -> None:
    """lm-eval: `# noqa` for what `ruff check --fix` leaves, then the formatter again (the hooks' order)."""
    for command in (["check", "--add-noqa"], ["format"]):
        subprocess.run([str(tools / "ruff"), *command, "--quiet", *names], cwd=tree, capture_output=True, text=True,
                       check=False)


def format_files(harness: str, files: Sequence[Path], root: Path | None = None) -> list[HookRun]:
    """Rewrite `files` (paths under the export's `root`, found from the harness's folders when not given) by the
    harness's hooks; returns the hooks that still fail afterwards (their runs, with the tools' output)."""
    with _checkout_copy(harness, files, root) as (tree, originals):
        python = [name for name in originals if name.endswith(".py")]
        _run_hooks(harness, tree, originals)
        for attempt in range(1, FIX_ROUNDS + 1):
            remaining = [run for run in _run_hooks(harness, tree, originals) if run.failed]
            if harness != "lm-eval" or attempt == FIX_ROUNDS or all(run.hook != "ruff-check" for run in remaining):
                break
            _suppress_unfixable(tree, tool_bin(harness), python)
        for name, path in originals.items():
            text = (tree / name).read_bytes()
            if text != path.read_bytes():
                path.write_bytes(text)
        return remaining


def check_files(harness: str, files: Sequence[Path], root: Path | None = None) -> None:
    """Raise `FormattingError` unless every hook of the harness passes on `files` without changing them."""
    with _checkout_copy(harness, files, root) as (tree, originals):
        failed = [run for run in _run_hooks(harness, tree, originals) if run.failed]
    if failed:
        raise FormattingError(f"{harness}'s pre-commit hooks fail:\n" + "\n".join(run.report() for run in failed))
