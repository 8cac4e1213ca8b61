"""What failed for reasons outside the calls, and whether the tool server can serve the `remote` tools.

- `check_server`: the evaluation's check of its tool server when some tool is `remote` (`GET /v1/tools` with the
  token, a total deadline): unreachable, a refused token or a `remote` tool the server does not run raises
  `ToolServerError`, one line naming the tools, the reason and the fix (the process exits 1 with it).
- `Failures`: infrastructure failures per tool and reason (the first of each logged as a warning), for the results
  file and the warning at the end of a run (`summary`).
What a tool server can run itself (its start-up check) is the benchmark's to say (`Toolset.unready`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from lmms_agentic.adapters.agentic.tool_client import CHECK_TIMEOUT_S, ServerAccess, server_label, server_tools
from lmms_agentic.adapters.agentic.tool_config import RuntimeConfig, ToolsSpec
from lmms_agentic.adapters.agentic.tool_io import ToolInfrastructureError, ToolServerError

MAX_REASONS = 20
"""Distinct reasons kept per tool; later ones are counted under `OTHER`."""
OTHER = "(other reasons)"
log = logging.getLogger(__name__)


def _line(text: str) -> str:
    return " ".join(text.split())


def check_server(config: RuntimeConfig, spec: ToolsSpec, access: ServerAccess,
                 timeout: float = CHECK_TIMEOUT_S) -> dict[str, str]:
    """The server's backend for every `remote` tool of `config` ({} when there is none); `ToolServerError` when
    the server cannot serve them all."""
    remote = [tool for tool, backend in config.backends.items() if backend == "remote"]
    if not remote or config.server_url is None:
        return {}
    shown = server_label(config.server_url)
    try:
        served, missing = server_tools(config.server_url, access, timeout)
    except ToolInfrastructureError as err:
        raise ToolServerError(_line(
            f"{spec.label}: {', '.join(remote)} run on a tool server ({spec.env_backends}), but {err}; start it "
            f"(python -m lmms_agentic tool-server) or fix {spec.env_server}")) from None
    absent = [tool for tool in remote if tool not in served]
    if absent:
        reasons = "; ".join(f"{tool}: {missing.get(tool, 'not offered')}" for tool in absent) if len(absent) > 1 \
            else missing.get(absent[0], "not offered")
        others = ",".join(f"{tool}=replay" for tool in absent)
        raise ToolServerError(_line(
            f"{spec.label}: the tool server at {shown} cannot run {', '.join(absent)} ({reasons}); set it up there "
            f"and restart the server, or give them another backend ({spec.env_backends}=\"...,{others}\")"))
    return {tool: served[tool] for tool in remote}


class Failures:
    """Infrastructure failures per tool and reason (thread-safe); the first of each reason is logged."""

    def __init__(self, label: str = "tools") -> None:
        self.label = label
        self._counts: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()

    def add(self, tool: str, reason: str) -> None:
        reason = _line(reason)[:500]
        with self._lock:
            counts = self._counts.setdefault(tool, {})
            if reason not in counts and len(counts) >= MAX_REASONS:
                reason = OTHER
            first = reason not in counts
            counts[reason] = counts.get(reason, 0) + 1
        if first:
            log.warning("%s: %s is unavailable (%s); the model is told only that it is unavailable and the call "
                        "counts in tool_unavailable_rate", self.label, tool, reason)

    def counts(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {tool: dict(reasons) for tool, reasons in self._counts.items()}


def summary(counts: Mapping[str, Mapping[str, int]], label: str) -> list[str]:
    """One warning line per tool that failed for infrastructure reasons: the count and the reasons."""
    lines = []
    for tool, reasons in sorted(counts.items()):
        total = sum(reasons.values())
        shown = "; ".join(f"{reason} ({count}x)" for reason, count in sorted(reasons.items(), key=lambda r: -r[1]))
        lines.append(f"{label}: {tool} was unavailable for {total} call(s) for reasons outside the model "
                     f"({shown}); they count in tool_unavailable_rate, not tool_error_rate: fix its backend and "
                     "re-run")
    return lines
