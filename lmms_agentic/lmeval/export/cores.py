"""The benchmark core as modules of an exported task folder: `tasks/<b>/core/*` and the `adapters/core` modules
they use, copied file by file next to the folder's `utils.py`.

Both harnesses import a task folder's sibling modules by their absolute name (`lmms_eval.tasks.<b>.<module>`,
`lm_eval.tasks.<b>.<module>`, as their own multi-file tasks do), so each core module is copied as it is, with
three rewrites: its imports of this package name the copied module (`from <package>.tasks.<b>.text import ...`),
the dotted and file-path references in its docstrings and comments lose the plugin's layout prefix
(`adapters.core.scores.mean_score` -> `scores.mean_score`, `core/parity.py` -> `parity.py`), and the package's
`__init__` files are not copied (nothing imports them). A module name used twice (the benchmark core and the
shared core) is an error, and so is any mention of this package left after the rewrites.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = "lmms_agentic"
SHARED_CORE = f"{ROOT}.adapters.core"
FORBIDDEN = re.compile(r"lmms[_-]agentic", re.IGNORECASE)


class CoreExportError(ValueError):
    """A core module cannot be exported as a sibling module; the message names it and the construct."""


@dataclass(frozen=True)
class CoreModule:
    """One module of the exported core: its source module and the file name it takes in the task folder."""

    module: str
    path: Path

    @property
    def file_name(self) -> str:
        return self.module.rpartition(".")[2] + ".py"


def benchmark_core(benchmark: str) -> str:
    return f"{ROOT}.tasks.{benchmark}.core"


def benchmark_folder(benchmark: str) -> Path:
    """The folder of the benchmark core's modules (and data files)."""
    return _origin(benchmark_core(benchmark)).parent


def _origin(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise CoreExportError(f"cannot find the source of {module}")
    return Path(spec.origin)


def _imported(module: str, path: Path) -> set[str]:
    """The modules of the two cores that `module` imports (a `from package import name` of a submodule counts)."""
    found: set[str] = set()
    package = module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith(ROOT))
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                source = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], source]).strip(".")
            if not source.startswith(ROOT):
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if importlib.util.find_spec(source) and _is_module(submodule) else source)
    return found


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def core_modules(benchmark: str, shared: tuple[str, ...] = (), left_out: tuple[str, ...] = ()) -> list[CoreModule]:
    """Every module of the benchmark core, plus the shared-core modules they import (transitively), by file name;
    `shared`: shared-core modules the export's hooks import (e.g. `extract`), added with their own imports;
    `left_out`: benchmark-core modules the export does not need (an error if a copied module imports one)."""
    own = benchmark_core(benchmark)
    folder = _origin(own).parent
    todo = [f"{own}.{p.stem}" for p in sorted(folder.glob("*.py")) if p.stem not in ("__init__", *left_out)]
    todo += [f"{SHARED_CORE}.{name}" for name in shared]
    found: dict[str, CoreModule] = {}
    while todo:
        module = todo.pop()
        if module in found:
            continue
        if not (module.startswith(own + ".") or module.startswith(SHARED_CORE + ".")):
            raise CoreExportError(f"{module} is imported by the {benchmark} core but is not part of a core "
                                  f"({own} or {SHARED_CORE}); a core imports only the shared core")
        if module.rpartition(".")[2] in left_out and module.startswith(own + "."):
            raise CoreExportError(f"{module} is left out of the {benchmark} export but a copied module imports it")
        path = _origin(module)
        found[module] = CoreModule(module, path)
        todo.extend(sorted(_imported(module, path) - {own, SHARED_CORE}))
    by_file: dict[str, str] = {}
    for item in found.values():
        if item.file_name in by_file:
            raise CoreExportError(f"{item.module} and {by_file[item.file_name]} would both be {item.file_name}")
        by_file[item.file_name] = item.module
    return sorted(found.values(), key=lambda m: m.file_name)


def rewrite(source: str, benchmark: str, package: str) -> str:
    """A core module's source as a sibling module of `<package>.tasks.<benchmark>`."""
    target = f"{package}.tasks.{benchmark}"
    own = benchmark_core(benchmark)
    for prefix in (own, SHARED_CORE):
        source = re.sub(rf"\bfrom {re.escape(prefix)}\.(\w+) import", rf"from {target}.\1 import", source)
        source = re.sub(rf"\bfrom {re.escape(prefix)} import", f"from {target} import", source)
    source = re.sub(r"`?\b(?:adapters/core|tasks/\w+/core)/(\w+\.py)`?", r"`\1`", source)
    source = re.sub(r"\b(?:adapters\.core|tasks\.\w+\.core)\.(\w)", r"\1", source)
    source = re.sub(r"`(?:adapters\.core|tasks/<benchmark>/core/)`", "the core modules", source)
    return source


def exported_core(benchmark: str, package: str, shared: tuple[str, ...] = (),
                  left_out: tuple[str, ...] = ()) -> dict[str, str]:
    """file name -> text of every core module of the export (`shared`, `left_out`: as in `core_modules`)."""
    files: dict[str, str] = {}
    for item in core_modules(benchmark, shared, left_out):
        text = rewrite(item.path.read_text(encoding="utf-8"), benchmark, package)
        left = FORBIDDEN.search(text)
        if left:
            line = text[: left.start()].count("\n") + 1
            raise CoreExportError(f"{item.module} still mentions this package at line {line} after the export's "
                                  "rewrites; reword it there")
        files[item.file_name] = text
    return files
