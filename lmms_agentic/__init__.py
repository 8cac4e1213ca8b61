"""lmms-agentic: agentic multimodal benchmarks as lmms-eval task plugins.

This top-level module owns only the package version and the location of the task folder;
everything else lives in `lmms_agentic.adapters` (data, prompts, parsing, statistics),
`lmms_agentic.judges` (LLM judges) and `lmms_agentic.tasks` (lmms-eval YAML + hooks).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__version__ = "0.1.0"
__all__ = ["__version__", "tasks_dir"]


def tasks_dir() -> str:
    """Absolute path of the installed task folder, for `--include_path` / `TaskManager(include_path=...)`."""
    return str(Path(str(resources.files("lmms_agentic.tasks"))).resolve())
