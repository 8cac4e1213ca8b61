"""The shared module of an export: what every exported benchmark imports, written once per harness.

It holds the shared core (`adapters/core/*.py`: answer extraction, schema, scores, text, prompting, few-shot,
coordinates and the core interface `task`) and the harness glue (`adapters/glue`: the media reader, the variant
documents, the scoring hooks and the harness's own hooks), each copied as a file with its imports rewritten to the
shared package. Where each harness keeps shared task code:

- lmms-eval: `lmms_eval/tasks/_task_utils/` (its tasks import `lmms_eval.tasks._task_utils.<module>`): the
  modules go into one subpackage, `lmms_eval/tasks/_task_utils/agentic/`;
- lm-eval: no repository-wide folder; a folder under `lm_eval/tasks/` that other task folders import (as
  `leaderboard/ifeval` imports `lm_eval.tasks.ifeval` and the `score` subtasks import `lm_eval.tasks.score.utils`):
  `lm_eval/tasks/agentic_common/`, which holds no task YAML.

`rewrite` turns a module of this project into a module of the export: imports of the shared core and glue name the
shared package, imports of a benchmark core name the benchmark's task folder, the file paths of this project in
docstrings and comments become the exported file names (or go, where the file is not exported), and what the
docstrings attribute to the project's own integration is attributed to "the harness side".
"""

from __future__ import annotations

import re
from pathlib import Path

import lmms_agentic.adapters.core as shared_core
import lmms_agentic.adapters.glue as glue

ROOT = "lmms_agentic"
SHARED_DIRS = {"lmms-eval": "lmms_eval/tasks/_task_utils/agentic", "lm-eval": "lm_eval/tasks/agentic_common"}
HARNESS_PACKAGES = {"lmms-eval": "lmms_eval", "lm-eval": "lm_eval"}
CORE_MODULES = ("choice", "coords", "extract", "fewshot", "prompting", "sampling", "schema", "scores", "task", "text")
GLUE_MODULES = {"lmms-eval": ("dataset_docs", "hub_media", "lmms_eval_glue", "scoring"),
                "lm-eval": ("dataset_docs", "hub_media", "lm_eval_glue", "scoring")}
GLUE_CLASSES = {"lmms-eval": ("lmms_eval_glue", "LmmsEvalHooks"), "lm-eval": ("lm_eval_glue", "LmEvalHooks")}
FORBIDDEN = re.compile(r"lmms[_-]agentic|\bplugin", re.IGNORECASE)
INIT = '''"""Shared code of the agentic benchmark tasks (AgentVQA, RoboVista, Agent-X): the answer extraction, scoring
and prompt helpers their task folders use, and the {harness} hooks every one of them is built from (`{glue}`)."""
'''


class SharedExportError(ValueError):
    """A module cannot be exported as it is; the message names it and what is left."""


def shared_package(harness: str) -> str:
    """The dotted name of the shared module (`lmms_eval.tasks._task_utils.agentic`, `lm_eval.tasks.agentic_common`)."""
    return SHARED_DIRS[harness].replace("/", ".")


def rewrite(source: str, harness: str, benchmark: str | None = None) -> str:
    """A module's source as a module of the export (`benchmark`: the benchmark core it belongs to, if any)."""
    shared = shared_package(harness)
    for prefix in (f"{ROOT}.adapters.core", f"{ROOT}.adapters.glue"):
        source = re.sub(rf"\bfrom {re.escape(prefix)}\.(\w+) import", rf"from {shared}.\1 import", source)
        source = re.sub(rf"\bfrom {re.escape(prefix)} import", f"from {shared} import", source)
    if benchmark is not None:
        own, target = f"{ROOT}.tasks.{benchmark}.core", f"{HARNESS_PACKAGES[harness]}.tasks.{benchmark}"
        source = re.sub(rf"\bfrom {re.escape(own)}\.(\w+) import", rf"from {target}.\1 import", source)
        source = re.sub(rf"\bfrom {re.escape(own)} import", f"from {target} import", source)
    source = re.sub(r"\s*\(?\btests/[\w/]+\.py\b( checks [^)]*)?\)?", "", source)
    source = re.sub(r"`?\b(?:adapters/(?:core|glue)|tasks/[\w<>]+/core)/(\w+\.py)`?", r"`\1`", source)
    source = re.sub(r"`?\btasks/<benchmark>/core/?`?", "a benchmark's task folder", source)
    source = re.sub(r"`?\badapters/core/?`?", "this shared module", source)
    source = re.sub(r"\b(?:adapters\.(?:core|glue)|tasks\.\w+\.core)\.(\w)", r"\1", source)
    source = re.sub(r"`(?:adapters\.core|adapters\.glue)`", "this shared module", source)
    source = re.sub(r"\bcore/task\.py\b", "task.py", source)
    source = re.sub(r"\s*\(`adapters\.\w+`\)", "", source)
    source = re.sub(r",?\s*\(?`?\btasks/\w+/(?!core/)\w+\.py`?\)?", "", source)
    source = re.sub(r"\btasks/\w+/README\.md\b", "README.md", source)
    source = re.sub(r",?\s*`judges\.[\w.]+`", "", source)
    source = re.sub(r"\b(?:the|a) plugin's\b", "the harness side's", source)
    source = re.sub(r"\b(?:the|a) plugin\b", "the harness side", source)
    source = re.sub(r"`?\badapters\.(?!core\b|glue\b)\w+`?", "the harness glue", source)
    return source


def checked(name: str, text: str) -> str:
    """`text`, or an error naming the line where this project is still mentioned."""
    left = FORBIDDEN.search(text)
    if left:
        line = text[: left.start()].count("\n") + 1
        raise SharedExportError(f"{name} still mentions {left.group(0)!r} at line {line} after the export's "
                                "rewrites; reword it there")
    return text


def shared_files(harness: str) -> dict[str, str]:
    """file name -> text of every file of the shared module of `harness`."""
    files = {"__init__.py": INIT.format(harness=harness, glue=GLUE_CLASSES[harness][0])}
    folders = ((Path(shared_core.__file__).parent, CORE_MODULES), (Path(glue.__file__).parent, GLUE_MODULES[harness]))
    for folder, names in folders:
        for name in names:
            text = rewrite((folder / f"{name}.py").read_text(encoding="utf-8"), harness)
            files[f"{name}.py"] = checked(f"{folder.name}/{name}.py", text)
    return files
