"""Inline lmms-agentic modules into one self-contained Python file (an upstream task folder's `utils.py`).

Upstream task folders are loaded by file path: a task folder cannot import a sibling module, and nothing of
lmms-agentic may be imported. The bundle therefore carries every module the task's hooks need, each one verbatim
as the body of a function that returns its namespace:

    def _module_adapters_core_extract():
        '''<the module's docstring>'''
        <the module's code, imports of other lmms-agentic modules turned into assignments>
        return types.SimpleNamespace(**locals())

    _adapters_core_extract = _module_adapters_core_extract()

Rewrites (all others keep the code as written): `from lmms_agentic.x import y` (or a relative import) becomes
`y = _x.y`, or `y = _x_y` when `y` is itself a module; `global` in a function becomes `nonlocal` (the module's
names live in the enclosing function); `globals()` becomes `vars(_x)`; `from __future__ import annotations` is
hoisted to the top of the file. Imports inside `if TYPE_CHECKING:` are kept out of the bundle. Modules are emitted
in dependency order (module-level imports; a cycle is an error); a function-level import only needs the module to
exist when the function runs. `patches` append code to a module's body (before its `return`), so a redefinition
replaces the original everywhere inside that module, e.g. where the data comes from.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT_PACKAGE = "lmms_agentic"
NOT_INLINED = frozenset({ROOT_PACKAGE})
"""Modules an export never needs (the package root: the plugin's task-folder location). A function-level import of
one binds a stand-in that raises when used; a module-level import is an error."""
PRELUDE = '''def _not_inlined(name):
    """A name of lmms-agentic that this file does not need (the plugin's own locations): raises if ever used."""

    def unavailable(*args, **kwargs):
        raise RuntimeError(f"{name} is not part of this exported task folder")

    return unavailable
'''


class BundleError(ValueError):
    """A module cannot be inlined; the message names the module and the construct."""


def namespace_name(module: str) -> str:
    """The bundle's variable for a module: `lmms_agentic.adapters.core.extract` -> `_adapters_core_extract`."""
    if module == ROOT_PACKAGE:
        return "_lmms_agentic"
    return "_" + module.removeprefix(ROOT_PACKAGE + ".").replace(".", "_")


def _spec_origin(module: str) -> tuple[Path, bool] | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin), spec.submodule_search_locations is not None


def is_ours(module: str) -> bool:
    return module == ROOT_PACKAGE or module.startswith(ROOT_PACKAGE + ".")


def _absolute(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module
    top_deps: set[str] = field(default_factory=set)
    all_deps: set[str] = field(default_factory=set)


def _targets(current: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str | None]]:
    """(module, attribute or None) for every lmms-agentic name an import statement binds."""
    found: list[tuple[str, str | None]] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if is_ours(alias.name):
                if alias.asname is None:
                    raise BundleError(f"{current}: `import {alias.name}` without `as` cannot be inlined")
                found.append((alias.name, None))
        return found
    source = _absolute(current, is_package, node)
    if not is_ours(source):
        return found
    for alias in node.names:
        if alias.name == "*":
            raise BundleError(f"{current}: `from {source} import *` cannot be inlined")
        submodule = f"{source}.{alias.name}"
        found.append((submodule, None) if _spec_origin(submodule) else (source, alias.name))
    return found


def _scan(module: Module) -> None:
    """Record the lmms-agentic modules `module` imports at import time (top) and anywhere (all)."""
    def visit(nodes: Iterable[ast.AST], top: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                visit(node.orelse, top)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target, _ in _targets(module.name, module.is_package, node):
                    if target in NOT_INLINED:
                        if top:
                            raise BundleError(f"{module.name} imports {target} at import time")
                        continue
                    module.all_deps.add(target)
                    if top:
                        module.top_deps.add(target)
                continue
            inner = top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(ast.iter_child_nodes(node), inner)

    visit(module.tree.body, True)
    module.top_deps.discard(module.name)
    module.all_deps.discard(module.name)


def collect(roots: Iterable[str]) -> dict[str, Module]:
    """Every lmms-agentic module reachable from `roots` through imports (function-level ones included)."""
    modules: dict[str, Module] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in modules:
            continue
        origin = _spec_origin(name)
        if origin is None:
            raise BundleError(f"cannot find the source of module {name}")
        path, is_package = origin
        module = Module(name, path, is_package, ast.parse(path.read_text(encoding="utf-8"), str(path)))
        _scan(module)
        modules[name] = module
        todo.extend(sorted(module.all_deps))
    return modules


def order(modules: Mapping[str, Module]) -> list[str]:
    """Modules in an order where every module-level import is already defined."""
    done: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            raise BundleError("import cycle at module level: " + " -> ".join((*chain, name)))
        state[name] = 1
        for dep in sorted(modules[name].top_deps):
            visit(dep, (*chain, name))
        state[name] = 2
        done.append(name)

    for name in sorted(modules):
        visit(name, ())
    return done


def _module_level_names(tree: ast.Module) -> set[str]:
    """Names a module binds at import time (functions, classes, assignments)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        names.update(sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store))
    return names


Edit = tuple[int, int, int, int, str]
"""(start line, start column, end line, end column, replacement): positions as `ast` reports them."""


class _Edits(ast.NodeVisitor):
    """The text edits that turn a module's source into the body of its namespace function."""

    def __init__(self, module: Module, known: set[str]) -> None:
        self.module = module
        self.known = known
        self.module_level = _module_level_names(module.tree)
        self.edits: list[Edit] = []
        self.depth = 0

    def _replace(self, node: ast.AST, text: str) -> None:
        self.edits.append((node.lineno, node.col_offset, node.end_lineno or node.lineno,  # type: ignore[attr-defined]
                           node.end_col_offset or 0, text))  # type: ignore[attr-defined]

    def _value(self, target: str, attribute: str | None) -> str:
        if target in NOT_INLINED:
            return f'_not_inlined("{target}{"" if attribute is None else "." + attribute}")'
        if target not in self.known:
            raise BundleError(f"{self.module.name} imports {target}, which is not in the bundle")
        return namespace_name(target) + ("" if attribute is None else f".{attribute}")

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        bound = _targets(self.module.name, self.module.is_package, node)
        if not bound:
            return
        indent = " " * node.col_offset
        names = [alias.asname or alias.name for alias in node.names]
        lines = [f"{local} = {self._value(target, attribute)}" for local, (target, attribute) in zip(names, bound,
                                                                                                       strict=True)]
        self._replace(node, f"\n{indent}".join(lines))

    def visit_Import(self, node: ast.Import) -> None:
        self._import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == "__future__":  # hoisted to the top of the file
            self._replace(node, "")
            return
        self._import(node)

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node):
            self.generic_visit(node)
            return
        for statement in node.body:  # typing-only imports of lmms-agentic modules stay out of the bundle
            if isinstance(statement, (ast.Import, ast.ImportFrom)) and _targets(self.module.name,
                                                                                 self.module.is_package, statement):
                self._replace(statement, "pass")
        for statement in node.orelse:
            self.visit(statement)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Global(self, node: ast.Global) -> None:
        if not self.depth:
            self._replace(node, "pass")
            return
        missing = [name for name in node.names if name not in self.module_level]
        if missing:
            raise BundleError(f"{self.module.name}: `global {', '.join(missing)}` names no module-level variable")
        self._replace(node, "nonlocal " + ", ".join(node.names))

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "globals" and not node.args:
            self._replace(node, f"vars({namespace_name(self.module.name)})")
            return
        self.generic_visit(node)


def _apply(source: str, edits: list[Edit]) -> str:
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    for start_line, start_col, end_line, end_col, text in sorted(edits, reverse=True):
        start = offsets[start_line - 1] + start_col
        end = offsets[end_line - 1] + end_col
        data = data[:start] + text.encode("utf-8") + data[end:]
    return data.decode("utf-8")


def _string_continuations(source: str) -> set[int]:
    """1-based numbers of the lines that continue a multi-line string (their text is part of the string)."""
    inside: set[int] = set()
    opened: int | None = None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = tokenize.tok_name[token.type]
        if kind == "STRING" and token.end[0] > token.start[0]:
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
        elif kind == "FSTRING_START":
            opened = token.start[0]
        elif kind == "FSTRING_END" and opened is not None:
            inside.update(range(opened + 1, token.end[0] + 1))
            opened = None
    return inside


def indent(source: str, prefix: str = "    ") -> str:
    """`source` one block deeper, leaving the continuation lines of multi-line strings as they are."""
    keep = _string_continuations(source)
    return "".join(line if n in keep or not line.strip() else prefix + line
                   for n, line in enumerate(source.splitlines(keepends=True), 1))


def module_function(module: Module, module_names: set[str], patch: str = "") -> str:
    """The source of one module's namespace function and the line that runs it."""
    source = module.path.read_text(encoding="utf-8")
    visitor = _Edits(module, module_names)
    visitor.visit(module.tree)
    body = _apply(source, visitor.edits).rstrip() + "\n"
    if patch:
        body += "\n" + patch.strip("\n") + "\n"
    body += "\nreturn types.SimpleNamespace(**locals())\n"
    function = f"_module{namespace_name(module.name)}"
    relative = module.name.replace(".", "/") + ("/__init__" if module.is_package else "")
    banner = f"# {'-' * 100}\n# inlined from {relative}.py\n"
    code = f"{banner}def {function}():\n{indent(body)}\n\n{namespace_name(module.name)} = {function}()\n"
    compile(code, f"<bundle {module.name}>", "exec")
    return code


@dataclass(frozen=True)
class Bundle:
    """The inlined modules of one export, in load order."""

    modules: tuple[str, ...]
    code: str

    def namespace(self, module: str) -> str:
        if module not in self.modules:
            raise BundleError(f"{module} is not in the bundle")
        return namespace_name(module)


def build(roots: Iterable[str], patches: Mapping[str, str] | None = None) -> Bundle:
    """Inline every module reachable from `roots` (plus `patches`, by module name)."""
    modules = collect(roots)
    unknown = set(patches or {}) - set(modules)
    if unknown:
        raise BundleError(f"patches for modules outside the bundle: {', '.join(sorted(unknown))}")
    names = order(modules)
    code = "\n\n".join([PRELUDE, *(module_function(modules[name], set(modules), (patches or {}).get(name, ""))
                                   for name in names)])
    return Bundle(tuple(names), code)
