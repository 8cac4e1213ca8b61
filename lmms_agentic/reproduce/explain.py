"""Why `reproduce --from` compares fewer published numbers than the preset has, and whether the run is the preset's
model at all: lines printed under the comparison table.

- **another model**: the run's model id (``model``/``model_version``/``pretrained`` in its model arguments) is none
  of the preset's weights or API model ids, or the run is another preset's: a warning names both;
- **another task**: the preset's published rows of a protocol are measured on the task that protocol needs for that
  model (``presets.task_for``: GPT-4o's Agent-X rows need ``agentx_script_gpt``, the released GPT script's prompt);
  a run without that task gets none of those rows, so a line names the task, the run's tasks of that benchmark and
  the commands that run it;
- **another judge**: judged rows published under another judge than the run's are left out, with a line saying so.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lmms_agentic.presets import Preset
    from lmms_agentic.report.runs import Run


def model_warning(run: Run, preset: Preset) -> str | None:
    """A warning when the run's model is not ``preset``'s (None when it is, or when the run names no model)."""
    from lmms_agentic.report.labels import model_id

    own = run.preset
    if own is not None and own.name != preset.name:
        return (f"WARNING: this run is preset {own.name} ({own.title}), not {preset.name} ({preset.title}): the table "
                f"compares it with another model's published numbers")
    found = model_id(run.config)
    expected = sorted({backend.weights for backend in preset.backends.values() if backend.weights})
    if own is None and found and expected and found not in expected and found.rstrip("/").rsplit("/", 1)[-1] not in {
            e.rsplit("/", 1)[-1] for e in expected}:
        return (f"WARNING: this run's model is {found!r}, preset {preset.name} is {', '.join(map(repr, expected))}: "
                "the table compares another model with the preset's published numbers")
    return None


def _run_tasks(run: Run) -> set[str]:
    return set(run.results.get("results", {})) | set(run.top_level())


def _commands(preset: Preset, benchmark: str, protocol: str, task: str) -> str:
    from lmms_agentic import presets

    default, _ = presets.protocols(benchmark)
    reproduce = ["python", "-m", "lmms_agentic", "reproduce", "--benchmark", benchmark, "--preset", preset.name]
    if protocol != default:
        reproduce += ["--protocol", protocol]
    return f"`{shlex.join(reproduce)}`, or add `--tasks {task}` to the harness command"


def task_notes(run: Run, preset: Preset, benchmark_names: Sequence[str] = (),
               protocols: Sequence[str] = ()) -> list[str]:
    """One line per (benchmark, protocol) whose published rows need a task the run does not have."""
    from lmms_agentic import presets
    from lmms_agentic.adapters.reference import load_reference

    have = _run_tasks(run)
    lines = []
    for benchmark in list(benchmark_names) or run.benchmarks():
        names = set(preset.reference.get(benchmark, ()))
        if not names:
            continue
        _, table = presets.protocols(benchmark)
        wanted = set(protocols) or set(table)
        rows = Counter(row.protocol for row in load_reference(benchmark)
                       if row.model in names and row.protocol in table and row.protocol in wanted
                       and row.scale != "count")
        for protocol, count in sorted(rows.items()):
            task = presets.task_for(preset, benchmark, protocol)
            if task in have:
                continue
            ran = sorted(t for t in run.top_level() if t == benchmark or t.startswith(f"{benchmark}_")) or ["none"]
            lines.append(f"{benchmark}: the {count} published {preset.title} rows of protocol {protocol} are measured "
                         f"on task {task}, which this run does not have (its {benchmark} tasks: {', '.join(ran)}); "
                         f"run it: {_commands(preset, benchmark, protocol, task)}")
    return lines


def judge_notes(run: Run, preset: Preset, benchmark_names: Sequence[str] = ()) -> list[str]:
    """A line per benchmark whose judged rows were published under another judge than the run's."""
    from lmms_agentic.adapters import benchmarks
    from lmms_agentic.adapters.reference import load_reference
    from lmms_agentic.report.published import run_judge

    lines = []
    judge: Any = None
    for benchmark in list(benchmark_names) or run.benchmarks():
        names = set(preset.reference.get(benchmark, ()))
        if not names or not benchmarks.get(benchmark).judged:
            continue
        judge = run_judge(run) if judge is None else judge
        other = Counter(row.judge for row in load_reference(benchmark)
                        if row.model in names and row.judge and judge and row.judge != judge)
        if other:
            lines.append(f"{benchmark}: left out {sum(other.values())} judged rows published under another judge ("
                         f"{', '.join(f'{j}: {n}' for j, n in sorted(other.items()))}); this run's judge is {judge}")
    return lines


def notes(run: Run, preset: Preset | None, benchmark_names: Sequence[str] = (),
          protocols: Sequence[str] = ()) -> list[str]:
    """Every line above, for printing under the comparison (empty when there is nothing to say)."""
    if preset is None:
        return []
    warning = model_warning(run, preset)
    return ([warning] if warning else []) + task_notes(run, preset, benchmark_names, protocols) + judge_notes(
        run, preset, benchmark_names)
