"""Agent-X's side of the `remote` backend and its tool server: its token variable and the project's secret scrubber,
bound to the shared client (`adapters/agentic/tool_client.py`, which owns the wire format, its limits and the
client) and to the server's token checks (`TOKEN_RULE`, `adapters/agentic/tool_server_http.py`).

`LMMS_AGENTIC_AGENTX_TOOL_TOKEN`, when set, is sent as a bearer token; every error text passes through
`judges.secrets` (the server URL's credentials, the token, every secret of the environment).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from PIL import Image

from lmms_agentic.adapters.agentic import tool_client
from lmms_agentic.adapters.agentic.tool_client import CHECK_TIMEOUT_S, MAX_MESSAGE_BYTES, ServerAccess
from lmms_agentic.adapters.agentic.tool_io import ToolCall, ToolOutput
from lmms_agentic.adapters.agentic.tool_server_http import TokenRule

ENV_TOKEN = "LMMS_AGENTIC_AGENTX_TOOL_TOKEN"
TOKEN_RULE = TokenRule(ENV_TOKEN, "Agent-X tools", "the Solver tool")
"""The tool server's token rule (`tool_server_http`): its variable and what a missing token exposes."""


def access(url: str, environ: Mapping[str, str] | None = None) -> ServerAccess:
    """The token (from `LMMS_AGENTIC_AGENTX_TOOL_TOKEN`) and the scrubber for the tool server at `url`."""
    token = (os.environ if environ is None else environ).get(ENV_TOKEN, "").strip()

    def redact(text: str) -> str:
        # imported here: `lmms_agentic.judges` loads httpx, which a runtime without a tool server does not need
        from lmms_agentic.judges.secrets import redactor

        return redactor(url, token).text(text)

    return ServerAccess(token, ENV_TOKEN, redact)


def call_remote(url: str, call: ToolCall, images: Mapping[str, Image.Image], timeout: float,
                max_reply: int = MAX_MESSAGE_BYTES) -> ToolOutput:
    """`tool_client.call_remote` with Agent-X's token and scrubber."""
    return tool_client.call_remote(url, call, images, timeout, access(url), max_reply)


def server_tools(url: str, timeout: float = CHECK_TIMEOUT_S) -> tuple[dict[str, str], dict[str, str]]:
    """`tool_client.server_tools` with Agent-X's token and scrubber."""
    return tool_client.server_tools(url, access(url), timeout)
