"""Every repository path that a README, a doc page, a module docstring or a build file names exists.

A path is a token in backticks (or a bare word) that starts with one of the repository's top-level folders
(`tasks/`, `adapters/`, `judges/`, `lmms_agentic/`, `tests/`, `perf/`, `docs/`, `constraints/`) or, in a benchmark's
README, with a file of that folder. Placeholders (`tasks/<benchmark>/`, `*.yaml`, `{name}`) and the folders of the
README's example benchmark (`mybench`, created by its "Adding a benchmark" steps) are not paths. Files that the code
writes (run folders, caches) are not named this way.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOP = ("tasks", "adapters", "judges", "lmms_agentic", "tests", "perf", "docs", "constraints")
PATH = re.compile(rf"(?<![\w./-])((?:{'|'.join(TOP)})/[\w./-]*[\w/])")
PLACEHOLDER = re.compile(r"[<>*{}$]")
EXAMPLE = "mybench"


def _docs() -> list[Path]:
    """The READMEs and doc pages, and the two build files whose comments name repository files."""
    return [REPO / "README.md", *sorted(REPO.glob("tasks/*/README.md")), *sorted(REPO.glob("docs/*.md")),
            REPO / "pyproject.toml", REPO / "Makefile"]


def _modules() -> list[Path]:
    found = []
    for top in ("adapters", "judges", "tasks", "lmms_agentic", "perf", "tests"):
        found += sorted((REPO / top).rglob("*.py"))
    return found


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def named_paths(text: str) -> set[str]:
    """The repository paths a text names (placeholders and globs left out)."""
    paths = set()
    for match in PATH.finditer(text):
        end = match.end()
        if end < len(text) and PLACEHOLDER.match(text[end]):
            continue  # `tasks/<benchmark>/...`: the token goes on with a placeholder
        token = match.group(1).rstrip(".")
        if not PLACEHOLDER.search(token) and EXAMPLE not in token.split("/"):
            paths.add(token)
    return paths


@pytest.mark.parametrize(("text", "expected"), [
    ("see `tasks/robovista/README.md`.", {"tasks/robovista/README.md"}),
    ("one folder per `tasks/<benchmark>/`", set()),
    ("files `tasks/*/benchmark.json`", set()),
    ("lmms_agentic/harness/host.py, then adapters/core/", {"lmms_agentic/harness/host.py", "adapters/core/"}),
    ("the module lmms_agentic.adapters.core", set()),
    ("python -m pytest tests/mybench tests/plugin", {"tests/plugin"}),
])
def test_named_paths(text: str, expected: set[str]) -> None:
    assert named_paths(text) == expected


@pytest.mark.parametrize("path", [*_docs(), *_modules()], ids=lambda p: str(p.relative_to(REPO)))
def test_every_named_path_exists(path: Path) -> None:
    text = _docstring(path) if path.suffix == ".py" else path.read_text(encoding="utf-8")
    missing = sorted(p for p in named_paths(text) if not (REPO / p).exists())
    assert not missing, f"{path.relative_to(REPO)} names paths that do not exist: {missing}"
