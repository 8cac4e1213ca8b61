"""What a benchmark declares for its upstream export: the interface of `tasks/<name>/upstream.py`.

An upstream export (`python -m lmms_agentic export`) is a task folder for lmms-eval or lm-evaluation-harness built
from the benchmark's harness-neutral core: for a core with `task.py` (`adapters.core.task`), the core's modules
copied next to a `utils.py` the exporter generates from the shared glue and the core's tables; for a core without
one yet, next to a thin `utils.py` that the benchmark writes itself (`utils_source`, optional). The exporter writes
a README and a test file from the facts below. Everything that only one benchmark knows (its citation and licences,
the notes for the README and the pull request, the tasks left out) lives in its own folder, so that adding a
benchmark touches nothing here or in the exporter.

Also here, for a `utils_source` of a core without `task.py`: lm-eval's per-task settings table (`lm_eval_docs`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from lmms_agentic.adapters.interface import InterfaceError

if TYPE_CHECKING:
    from lmms_agentic.adapters.benchmarks import Benchmark


@dataclass(frozen=True)
class Origin:
    """A benchmark's citation and the provenance of its verbatim material (copied from the authors' own channel)."""

    bibtex: str
    bibtex_source: str
    verbatim: tuple[tuple[str, str, str], ...]
    """(what, where it comes from, its licence) for every verbatim prompt, parser or table."""
    paper_title: str = ""
    """The paper's title (empty: the benchmark manifest's description is used)."""
    reference_check: str = ("The parsers and prompts are the reference runner's; a full run reproducing the table "
                            "above is still to be done.")
    """What the README's checklist says about checking against the reference implementation."""


@dataclass(frozen=True)
class HooksRequest:
    """What the exporter knows when it asks a benchmark for its `utils.py`."""

    harness: str
    """"lmms-eval" or "lm-eval"."""
    package: str
    """The harness's top-level package (`lmms_eval`, `lm_eval`): the copied core is `<package>.tasks.<name>.*`."""
    hub_id: str
    revision: str | None
    """The dataset commit the YAMLs pin (None: not pinned yet; the hooks read `main` and mark it to pin)."""
    metric_names: tuple[str, ...] = ()
    """Every metric the exported tasks report (the aggregation functions the YAMLs name)."""
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per exported task: its prompt settings (`lmms_eval_specific_kwargs.default`); lm-eval bakes them in."""
    rows_by_task: Mapping[str, str] = field(default_factory=dict)
    """Per exported task: the name of the `process_docs` function that selects its rows."""

    @property
    def rows_functions(self) -> list[str]:
        """The distinct rows functions, sorted."""
        return sorted(set(self.rows_by_task.values()))

    def require_frames(self) -> None:
        """lm-eval has no video input: every exported task's prompt settings must ask for sampled frames."""
        if self.harness != "lm-eval":
            return
        for task, values in self.settings.items():
            if values.get("video_mode") != "frames":
                raise ValueError(f"{task}: lm-eval has no video input; its prompt settings need video_mode: frames")

    @property
    def revision_or_main(self) -> str:
        return self.revision or "main"

    @property
    def revision_todo(self) -> str:
        """The comment after a `REVISION = ...` constant while the dataset commit is not pinned."""
        return "" if self.revision else "  # TODO: pin the dataset commit (the same as in _default_template_yaml)"


@runtime_checkable
class UpstreamHooks(Protocol):
    """`tasks/<name>/upstream.py`: constants and one function; nothing runs at import."""

    ORIGIN: Origin
    LEFT_OUT_CORE: tuple[str, ...]
    """Benchmark-core modules the export does not need (an error if a copied module imports one)."""
    DATA_FILES: tuple[str, ...]
    """Files next to the core's modules that they read (copied next to them)."""
    NOT_EXPORTED: tuple[str, ...]
    """Task-name prefixes left out of the export (besides the generated permutation variants)."""
    RUNNING_NOTES: Mapping[str, str]
    """README "Running" lines: key "both", "lmms-eval" or "lm-eval"."""
    DEPENDENCY_NOTES: Mapping[str, str]
    """Per harness: what `UPSTREAM_PR.md` adds after the harness's dependencies line."""
    MEDIA_AT_REVISION: str
    """What `utils.py` reads from the dataset repository at its own `REVISION` constant ("" when nothing)."""
    PR_STEPS: str
    """Benchmark-specific lines of the pull request's still-needed list (markdown items, each ending in a newline)."""


OPTIONAL = ("REPORTED_METRICS", "NOT_GROUPED_UNDER_LM_EVAL", "SCRIPTS", "hard_replies", "sample_rows")
"""Optional, for a core with `task.py`: `REPORTED_METRICS`, the core's metrics the exported tasks declare (default:
all; the first of each kind carries the record, `adapters.core.task.ReportedCore`); `NOT_GROUPED_UNDER_LM_EVAL`,
metrics the lm-eval export's groups do not average (every row reports every metric, None where it does not count,
so a subtask without any counting item is NaN there, which lm-eval's group mean cannot skip); `SCRIPTS`, files next to
`upstream.py` shipped in the task folder (imports of the core rewritten as the core's), e.g. a step that scores
the logged samples, each with `<stem>_checks.py` beside it: pytest functions appended to the export's own test
(after its `# export:` line; they get the script as a fixture named after it); `hard_replies(doc)`, replies the
export's own test scores besides the example replies (the benchmark's parser's hard cases); `sample_rows(rows)`,
rows derived from the mini split's that the export's own test samples first (records the release can hold that the
mini split lacks)."""
OWN_UTILS = ("utils_source", "SHARED_MODULES")
"""Optional, for a core without `task.py`: `utils_source(request) -> str`, the complete `utils.py` the benchmark
writes itself, and `SHARED_MODULES`, the `adapters/core` modules it imports beyond those the core imports."""


class UpstreamError(InterfaceError):
    """`tasks/<name>/upstream.py` does not provide the interface; the message names the member."""


MEMBERS = ("ORIGIN", "LEFT_OUT_CORE", "DATA_FILES", "NOT_EXPORTED", "RUNNING_NOTES", "DEPENDENCY_NOTES",
           "MEDIA_AT_REVISION", "PR_STEPS")


def check_hooks(benchmark: str, module: object) -> UpstreamHooks:
    """`module` as `UpstreamHooks`, or an `UpstreamError` naming every missing member."""
    missing = [name for name in MEMBERS if not hasattr(module, name)]
    if missing or not isinstance(module, UpstreamHooks):
        raise UpstreamError(f"tasks/{benchmark}/upstream.py must provide {', '.join(missing or MEMBERS)} "
                            "(see adapters/upstream.py)")
    return module


def hooks_of(benchmark: Benchmark) -> UpstreamHooks:
    """The benchmark's `upstream.py` (its package's `export_hooks()`), checked by `check_hooks`."""
    return check_hooks(benchmark.name, benchmark.package().export_hooks())


def lm_eval_docs(settings: Mapping[str, Mapping[str, Any]], rows_by_task: Mapping[str, str]) -> str:
    """lm-eval's `SETTINGS` table (each task's prompt settings) and one `process_docs` per task: its rows, then its
    settings written into every document (lm-eval's prompt hooks see only the document)."""
    table = "SETTINGS = " + json.dumps({task: dict(s) for task, s in settings.items()}, indent=4, sort_keys=True)
    table = table.replace(": true", ": True").replace(": false", ": False").replace(": null", ": None")
    blocks = [f"def {task}_docs(dataset):\n    return _with_settings({rows}(dataset), SETTINGS[{task!r}])\n"
              for task, rows in rows_by_task.items()]
    return "\n\n".join([table + "\n", *blocks])
