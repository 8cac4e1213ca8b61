"""A hint under the report's tables when a run's format errors have one known cause: Agent-X replies that name a
step's tool under ``"tool"``.

Agent-X's released format check (``failure_rules.invalid_json_format``, the authors' error-analysis notebook)
requires every reasoning step to hold ``tool_used``, while the released prompt's own example writes ``"tool"`` in its
first step. A model that copies the example fails the check on every reply, and ``format_error_rate`` reads 100%
although the traces are well formed. The scoring stays as released; the report counts, among the replies that fail
the check, those that would pass it with ``"tool"`` read as ``"tool_used"``, and prints a hint when they are most of
them. The reply is read from the sample line (``resps``, else ``filtered_resps``), as Agent-X's parser reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lmms_agentic.report.run_files import top_level

AGENTX = "agentx"


def _reply(line: Mapping[str, Any]) -> str | None:
    value: Any = line.get("resps", line.get("filtered_resps"))
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _record(line: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for value in line.values():
        if isinstance(value, Mapping) and value.get("benchmark") == AGENTX and "format_ok" in value:
            return value
    return None


def _with_tool_used(step: Any) -> Any:
    if isinstance(step, Mapping) and "tool" in step and "tool_used" not in step:
        return {("tool_used" if key == "tool" else key): value for key, value in step.items()}
    return step


def tool_key_cause(reply: str) -> bool:
    """Whether ``reply`` fails Agent-X's format check only because its steps say ``"tool"`` for ``"tool_used"``."""
    from lmms_agentic.adapters.core.text import answer_text
    from lmms_agentic.tasks.agentx.core.failure_rules import invalid_json_format
    from lmms_agentic.tasks.agentx.core.trace_search import find_trace_object

    found = find_trace_object(answer_text(reply, fallback_to_thinking=True).strip())
    if found is None:
        return False
    record = {"query": "", "filename": "", **found[0]}
    steps = record.get("reasoning_steps")
    if not invalid_json_format(record) or not isinstance(steps, list):
        return False
    return not invalid_json_format({**record, "reasoning_steps": [_with_tool_used(step) for step in steps]})


def tool_key_counts(lines: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(replies failing the format check because of ``"tool"``, replies failing it) over Agent-X sample lines."""
    caused = failed = 0
    for line in lines:
        record = _record(line)
        if record is None or record.get("format_ok") is not False:
            continue
        failed += 1
        reply = _reply(line)
        caused += reply is not None and tool_key_cause(reply)
    return caused, failed


def hint(task: str, caused: int, failed: int) -> str | None:
    """The hint line for one task, when most of its format errors come from the ``"tool"`` key (else None)."""
    if not failed or 2 * caused <= failed:
        return None
    return (f"**Format errors of `{task}`: {caused} of {failed} come from the \"tool\" key.** Those replies name a "
            "step's tool under \"tool\", as the first step of the released prompt's own example does, while the "
            "released format check requires \"tool_used\"; `format_error_rate` counts them as released (the "
            "tool-use metrics read \"tool\" too). The traces are otherwise well formed: tell the model to write "
            "\"tool_used\" (or compare runs on the other metrics).")


def format_hints(results: Mapping[str, Any], shown: set[str],
                 lines_of: Callable[[str], Iterable[Mapping[str, Any]]]) -> list[str]:
    """Hint lines (markdown, after a blank line) for the run's top-level tasks that report ``format_error_rate``."""
    found: list[str] = []
    for name in sorted(n for n in top_level(results) if n not in shown):
        row = results["results"].get(name)
        if not isinstance(row, Mapping) or "format_error_rate,none" not in row:
            continue
        text = hint(name, *tool_key_counts(lines_of(name)))
        if text is not None:
            found += ["", text]
    return found
