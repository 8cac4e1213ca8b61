"""Run a command in a fresh Python process where `lmms_agentic` cannot be imported.

The venv has lmms-agentic installed (editable), so `python -I` alone would still find it. The bootstrap below
inserts a meta-path finder that refuses `lmms_agentic` and its submodules and drops the repository from
`sys.path`, optionally appends exported task folders to `lmms_eval.tasks.__path__` / `lm_eval.tasks.__path__` (as
if they had been merged upstream, so `from lm_eval.tasks.<b> import utils` works), then runs the module like
`python -m`. lmms-eval's `lmms_eval.models` entry point of lmms-agentic then fails to load, which lmms-eval logs
as a warning, exactly as on a machine without lmms-agentic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BOOTSTRAP = r'''
import importlib.abc, json, os, runpy, sys

class _NoLmmsAgentic(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "lmms_agentic" or name.startswith("lmms_agentic."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: this process must not use lmms-agentic)")
        return None

sys.meta_path.insert(0, _NoLmmsAgentic())
repo = os.environ["ISOLATION_REPO"]
sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != repo]
for package, folder in json.loads(os.environ.get("ISOLATION_TASK_DIRS", "{}")).items():
    __import__(package)
    sys.modules[package].__path__.append(folder)
module, *args = sys.argv[1:]
sys.argv = [module, *args]
runpy.run_module(module, run_name="__main__", alter_sys=True)
'''


def run_isolated(module: str, args: Sequence[str], env: Mapping[str, str], cwd: Path,
                 task_dirs: Mapping[str, str] | None = None, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    """`python -m module args` without lmms-agentic (stdout and stderr captured, never raises on exit code)."""
    full = {**os.environ, **env, "ISOLATION_REPO": str(REPO), "ISOLATION_TASK_DIRS": json.dumps(dict(task_dirs or {}))}
    full.pop("PYTHONPATH", None)
    command = [sys.executable, "-I", "-c", BOOTSTRAP, module, *args]
    return subprocess.run(command, env=full, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
