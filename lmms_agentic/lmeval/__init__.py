"""lm-evaluation-harness support: the lmms-eval tasks as generated lm-eval YAMLs, and upstream task exports.

- `tasks_dir()`: the generated lm-eval task folder, for `lm_eval --include_path` / `TaskManager(include_path=...)`
  (also `python -m lmms_agentic.lmeval tasks-dir`);
- `TASKS`: the object behind the `lm_eval.tasks` entry point. lm-eval 0.4.13 reads no such group, so today it
  does nothing; it is a `str` (the folder's path) that is also callable (returns the path) and looks like a package
  (`__path__`, `__file__`), so a loader that expects a path, a function returning one, or a package whose folder
  holds the YAMLs finds the folder;
- `generate` writes the folder from `tasks/` (one source of truth), `adapter` and `hooks` run the lmms-eval hooks
  under lm-eval, `export` writes self-contained upstream task folders for either harness.

Importing this package does no I/O.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TASKS", "TasksDir", "tasks_dir"]


def tasks_dir() -> str:
    """Absolute path of the generated lm-eval task folder."""
    return str(Path(__file__).resolve().parent.parent / "lmeval_tasks")


class TasksDir(str):
    """The lm-eval task folder as a path string that is also callable and package-like (entry-point target)."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)

    def __fspath__(self) -> str:
        return str(self)

    @property
    def __path__(self) -> list[str]:
        return [str(self)]

    @property
    def __file__(self) -> str:
        return str(Path(self) / "__init__.py")


TASKS = TasksDir(tasks_dir())
