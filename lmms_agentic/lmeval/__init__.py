"""lm-evaluation-harness support: the lmms-eval tasks as generated lm-eval YAMLs, and upstream task exports.

- `tasks_dir()`: the lm-eval task folder, generated from `tasks/` on first use (`generate.ensure`), for
  `lm_eval --include_path` / `TaskManager(include_path=...)` (also `python -m lmms_agentic lmeval-tasks-dir`);
  it is also the target of the `lm_eval.tasks` entry point (lm-eval 0.4.13 reads no such group yet);
- `generate` renders the folder from `tasks/` (one source of truth), `task_functions` and `bridge` run the
  lmms-eval hooks under lm-eval (and stop a run that would drop images), `runtime` puts each image at its place in
  lm-eval's API requests and shows lm-eval's per-task warnings once, `export` writes self-contained upstream task
  folders for either harness.

Importing this package does no I/O.
"""

from __future__ import annotations

__all__ = ["tasks_dir"]


def tasks_dir() -> str:
    """Absolute path of the lm-eval task folder (generated into the user cache on first use)."""
    from lmms_agentic.lmeval import generate

    return str(generate.ensure())
