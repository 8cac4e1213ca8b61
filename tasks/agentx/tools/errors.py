"""Failures that are not the model's: a tool's infrastructure (a backend's setting, model, endpoint or tool server)
and a tool server the evaluation cannot use (`ToolServerError`, which stops the process).

A `ToolInfrastructureError` is answered to the model with `unavailable_text` (status `unavailable`); its message,
the reason, goes to the run's log and results instead.  A `ToolServerError` stops the run before the first call:
its message is one line naming the tools, the server's reason and the fix.
"""

from __future__ import annotations

from lmms_agentic.tasks.agentx.tools.local import ToolError


class ToolInfrastructureError(ToolError):
    """The tool could not run for a reason outside the call: a missing setting, a model that does not load, an
    endpoint or tool server that is down, slow, refuses the credentials or answers garbage."""


class ToolServerError(SystemExit):
    """The configured tool server cannot serve this evaluation (start-up check); the message is one line.

    A `SystemExit`: lmms-eval catches an `Exception` from its evaluation, logs it and exits 0 with no results; this
    one passes through, so the run stops at once with status 1 and the line on stderr (no traceback)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def unavailable_text(tool: str) -> str:
    """The observation the model gets for an infrastructure failure: the same for every reason."""
    return f"{tool} is unavailable right now."
