"""The `remote` backend: one bound call sent to an Agent-X tool server (`server.py`) over HTTP (stdlib only).

Images travel as base64 PNG under their argument names; `LMMS_AGENTIC_AGENTX_TOOL_TOKEN`, when set, is sent as a
bearer token.  A server that is down, slow past the tool's limit or answers garbage is a `ToolError` (an
observation for the model), never an exception out of the run.
"""

from __future__ import annotations

import base64
import io
import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping

from PIL import Image

from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall
from lmms_agentic.tasks.agentx.tools.local import ToolError, ToolOutput

ENV_TOKEN = "LMMS_AGENTIC_AGENTX_TOOL_TOKEN"


def encode_image(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def decode_image(text: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(text))).convert("RGB")


def call_remote(url: str, call: BoundCall, images: Mapping[str, Image.Image], timeout: float) -> ToolOutput:
    """The `remote` backend: one call sent to a tool server; transport failures are `ToolError`s."""
    body = json.dumps({"arguments": dict(call.arguments),
                       "images": {name: encode_image(image) for name, image in images.items()}}).encode()
    headers = {"Content-Type": "application/json"}
    token = os.environ.get(ENV_TOKEN, "")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{url.rstrip('/')}/v1/tools/{call.tool}", body, headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise ToolError(f"the tool server at {url} did not answer ({err})") from None
    if data.get("error"):
        raise ToolError(str(data["error"]))
    return ToolOutput(str(data.get("text", "")), decode_image(data["image"]) if data.get("image") else None)
