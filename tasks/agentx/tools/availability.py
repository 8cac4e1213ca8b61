"""What can run where, checked before the first call, and what failed for reasons outside the calls.

- `unready`: the tool server's check of its own tools at start-up (a model tool's settings and package, the sandbox
  for the code tools, rapidocr for OCR; `replay` never runs on a server, which holds no reference trace).  The
  server offers only the others and refuses a call to these with a 503 JSON error naming the reason.
- `check_server`: the evaluation's check of its tool server when some tool is `remote` (`GET /v1/tools` with the
  token, a total deadline): unreachable, a refused token or a `remote` tool the server does not run raises
  `ToolServerError`, one line naming the tools, the reason and the fix (the process exits 1 with it).
- `Failures`: infrastructure failures per tool and reason (the first of each logged as a warning), for the results
  file and the warning at the end of a run (`summary`).
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Callable, Mapping

from lmms_agentic.tasks.agentx.tools.errors import ToolInfrastructureError, ToolServerError
from lmms_agentic.tasks.agentx.tools.local import SANDBOXED_TOOLS
from lmms_agentic.tasks.agentx.tools.model_tools import ModelTools
from lmms_agentic.tasks.agentx.tools.remote import CHECK_TIMEOUT_S, server_label, server_tools
from lmms_agentic.tasks.agentx.tools.runtime_config import ENV_BACKENDS, ENV_SERVER, RuntimeConfig
from lmms_agentic.tasks.agentx.tools.sandbox import Sandbox, unavailable_text

MAX_REASONS = 20
"""Distinct reasons kept per tool; later ones are counted under `OTHER`."""
OTHER = "(other reasons)"
log = logging.getLogger(__name__)


def unready(config: RuntimeConfig, models: ModelTools, sandbox: Callable[[], Sandbox]) -> dict[str, str]:
    """The tools of `config` that cannot run in this process -> why (checked without loading any model)."""
    out: dict[str, str] = {}
    for tool, backend in config.backends.items():
        reason: str | None = None
        if backend == "model":
            reason = models.missing(tool)
        elif backend == "replay":
            reason = "a tool server has no reference trace to replay"
        elif backend == "local" and tool in SANDBOXED_TOOLS:
            box = sandbox()
            reason = None if box.available() else unavailable_text(box.reason or "unknown")
        elif backend == "local" and tool == "OCR" and importlib.util.find_spec("rapidocr_onnxruntime") is None:
            reason = "OCR needs rapidocr-onnxruntime (pip install -e '.[tools]' in a checkout)"
        if reason is not None:
            out[tool] = f"{backend}: {reason}"
    return out


def _line(text: str) -> str:
    return " ".join(text.split())


def check_server(config: RuntimeConfig, timeout: float = CHECK_TIMEOUT_S) -> dict[str, str]:
    """The server's backend for every `remote` tool of `config` ({} when there is none); `ToolServerError` when
    the server cannot serve them all."""
    remote = [tool for tool, backend in config.backends.items() if backend == "remote"]
    if not remote or config.server_url is None:
        return {}
    shown = server_label(config.server_url)
    try:
        served, missing = server_tools(config.server_url, timeout)
    except ToolInfrastructureError as err:
        raise ToolServerError(_line(
            f"agentx_tools: {', '.join(remote)} run on a tool server ({ENV_BACKENDS}), but {err}; start it "
            f"(python -m lmms_agentic tool-server) or fix {ENV_SERVER}")) from None
    absent = [tool for tool in remote if tool not in served]
    if absent:
        reasons = "; ".join(f"{tool}: {missing.get(tool, 'not offered')}" for tool in absent) if len(absent) > 1 \
            else missing.get(absent[0], "not offered")
        others = ",".join(f"{tool}=replay" for tool in absent)
        raise ToolServerError(_line(
            f"agentx_tools: the tool server at {shown} cannot run {', '.join(absent)} ({reasons}); set it up there "
            f"and restart the server, or give them another backend ({ENV_BACKENDS}=\"...,{others}\")"))
    return {tool: served[tool] for tool in remote}


class Failures:
    """Infrastructure failures per tool and reason (thread-safe); the first of each reason is logged."""

    def __init__(self) -> None:
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
            log.warning("agentx_tools: %s is unavailable (%s); the model is told only that it is unavailable and the "
                        "call counts in tool_unavailable_rate", tool, reason)

    def counts(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {tool: dict(reasons) for tool, reasons in self._counts.items()}


def summary(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """One warning line per tool that failed for infrastructure reasons: the count and the reasons."""
    lines = []
    for tool, reasons in sorted(counts.items()):
        total = sum(reasons.values())
        shown = "; ".join(f"{reason} ({count}x)" for reason, count in sorted(reasons.items(), key=lambda r: -r[1]))
        lines.append(f"agentx_tools: {tool} was unavailable for {total} call(s) for reasons outside the model "
                     f"({shown}); they count in tool_unavailable_rate, not tool_error_rate: fix its backend and "
                     "re-run")
    return lines
