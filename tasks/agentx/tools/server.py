"""HTTP tool server: runs Agent-X tools for evaluations on other nodes (the `remote` backend's other end).

    python -m lmms_agentic.tasks.agentx.tools.server --host 0.0.0.0 --port 8765   # on the GPU node
    LMMS_AGENTIC_AGENTX_TOOLS="*=remote" LMMS_AGENTIC_AGENTX_TOOL_SERVER=http://gpu-node:8765 lmms-eval ...

The server executes with its own runtime (its `LMMS_AGENTIC_AGENTX_TOOLS`, default: local tools local, the model
tools on `model` when their settings are present); `remote` on the server side is refused.  Protocol (JSON):
`GET /v1/tools` -> `{"tools": {tool: backend}}`; `POST /v1/tools/<Tool>` with `{"arguments": {...}, "images":
{argument: base64 PNG}}` -> `{"text", "image": base64 PNG | null, "error": str | null}`.  Arguments arrive already
type-checked by the caller and are checked again here.  With `LMMS_AGENTIC_AGENTX_TOOL_TOKEN` set, both sides use
it as a bearer token.  It binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image

from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, CallError, bind
from lmms_agentic.tasks.agentx.tools.remote import ENV_TOKEN, decode_image, encode_image
from lmms_agentic.tasks.agentx.tools.runtime import RuntimeConfig, ToolRuntime

MAX_BODY = 64 << 20


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _reply(self, status: int, payload: Mapping[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _authorised(self) -> bool:
        token = self.server.token
        if token and self.headers.get("Authorization", "") != f"Bearer {token}":
            self._reply(401, {"error": "missing or wrong bearer token"})
            return False
        return True

    def do_GET(self) -> None:
        if not self._authorised():
            return
        if self.path.rstrip("/") == "/v1/tools":
            self._reply(200, {"tools": dict(self.server.runtime.config.backends)})
        else:
            self._reply(404, {"error": f"no such path {self.path}"})

    def do_POST(self) -> None:
        if not self._authorised():
            return
        prefix = "/v1/tools/"
        length = int(self.headers.get("Content-Length", "0"))
        if not self.path.startswith(prefix) or length > MAX_BODY:
            self._reply(404 if length <= MAX_BODY else 413, {"error": "POST /v1/tools/<Tool> with a JSON body"})
            return
        try:
            data = json.loads(self.rfile.read(length))
            images = [decode_image(text) for text in data.get("images", {}).values()]
            names = list(data.get("images", {}))
        except (ValueError, OSError) as err:
            self._reply(400, {"error": f"bad request body ({err})"})
            return
        arguments = dict(data.get("arguments") or {})
        for index, name in enumerate(names):
            arguments[name] = f"image_{index + 1}"
        bound = bind(self.path[len(prefix):], arguments, len(images), len(images))
        if isinstance(bound, CallError):
            self._reply(200, {"error": bound.message, "text": "", "image": None})
            return
        self._reply(200, self.server.execute(bound, images))


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], runtime: ToolRuntime, token: str) -> None:
        super().__init__(address, _Handler)
        self.runtime, self.token = runtime, token

    def execute(self, call: BoundCall, images: Sequence[Image.Image]) -> dict[str, Any]:
        observed = self.runtime.execute({"gt_steps_flat_json": "[]"}, call, list(images))
        if observed.status != "ok":
            return {"text": "", "image": None, "error": observed.text}
        text = observed.text
        return {"text": text, "image": encode_image(observed.image) if observed.image is not None else None,
                "error": None}


class ToolServer:
    """The server in a background thread (tests, notebooks); `serve_forever` for the command line."""

    def __init__(self, runtime: ToolRuntime, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        if "remote" in runtime.config.backends.values():
            raise ValueError("a tool server cannot forward to another tool server: set its tools to local/model")
        self.httpd = _Server((host, port), runtime, token if token is not None else os.environ.get(ENV_TOKEN, ""))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}" if isinstance(host, str) else f"http://{host.decode()}:{port}"

    def start(self) -> ToolServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="agentx-tool-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmms_agentic.tasks.agentx.tools.server",
                                     description="Serve Agent-X tools over HTTP for the `remote` backend.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    server = ToolServer(ToolRuntime(RuntimeConfig.from_env(server_side=True)), args.host, args.port)
    print(f"Agent-X tool server on {server.url}: {json.dumps(dict(server.httpd.runtime.config.backends))}",
          flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.httpd.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
