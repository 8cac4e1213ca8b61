"""What a tool call is, returns and raises, for any benchmark's executed tools (`tool_runtime.py` runs them).

- `ToolCall`: the runtime's view of a call that type-checked (the benchmark's binder makes it): the tool's name, its
  arguments, and its image arguments as indices into the episode's visuals.
- `ToolOutput`: what a backend returns (text, and an image when the tool produced one); `Limits`: one tool's
  per-call limits (a wall-clock limit for every backend; CPU seconds and memory for a subprocess).
- Failures, each an observation rather than the end of a run: `ToolError` (the call ran and failed: "Error: ..."),
  `ToolUnavailable` (the tool cannot run here), `ToolInfrastructureError` (a reason outside the call: a backend's
  setting, model, endpoint or tool server; the model is told only `unavailable_text`, the reason goes to the log
  and the results file).  `ToolServerError` stops the run before the first call: one line naming the tools, the
  server's reason and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from PIL import Image


class ToolCall(Protocol):
    """A type-checked call: image arguments name indices into the episode's visuals (0-based)."""

    @property
    def tool(self) -> str: ...

    @property
    def arguments(self) -> Mapping[str, Any]: ...

    @property
    def images(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class ToolOutput:
    text: str
    image: Image.Image | None = None


@dataclass(frozen=True)
class Limits:
    """Per-call limits of one tool (CPU seconds and memory apply where it runs in a subprocess)."""

    wall_s: float = 10.0
    cpu_s: int = 5
    mem_mb: int = 1024


class ToolError(Exception):
    """A call that ran but failed; the message becomes the observation ("Error: ...")."""


class ToolUnavailable(ToolError):
    """The tool cannot run here (no sandbox); the message starts "unavailable: no sandbox (...)"."""


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
