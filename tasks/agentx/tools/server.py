"""HTTP tool server: runs Agent-X tools for evaluations on other nodes (the `remote` backend's other end).

    LMMS_AGENTIC_AGENTX_TOOL_TOKEN=... python -m lmms_agentic tool-server --host 0.0.0.0 --port 8765  # GPU node
    LMMS_AGENTIC_AGENTX_TOOLS="*=remote" LMMS_AGENTIC_AGENTX_TOOL_SERVER=http://gpu-node:8765 lmms-eval ...

Owns the socket side: the handler, the threaded server with its connection cap, worker slots and body budget
(`ServerLimits` of the shared `adapters/agentic/tool_server_http.py`), `ToolServer` (a background thread, for tests
and notebooks) and `serve` (the command).  The server executes with its own runtime (its
`LMMS_AGENTIC_AGENTX_TOOLS`, default: local tools local, the model tools on `model`); `remote` on the server side is
refused.  At start-up it checks what it can run (`toolset.AgentXTools.unready`: settings, packages, the sandbox;
`replay` never runs here) and offers only that: the others are printed with their reason, listed under
`unavailable`, and a call to one gets a 503 JSON error.

Security: the Solver and CodePlotter tools run code, so the server binds 127.0.0.1 unless told otherwise and
refuses a non-loopback address without a bearer token (`LMMS_AGENTIC_AGENTX_TOOL_TOKEN` or `--token-file`; never
on the command line, where `ps` shows it), compared in constant time.  Every request is bounded before it is
read (see `tool_server_http`), every malformed one gets a 4xx JSON `{"error": ...}` and every failure a 500
JSON, and every reply's text passes through the project's redactor.

Protocol (JSON): `GET /v1/tools` -> `{"tools": {tool: backend}, "unavailable": {tool: reason}}`; `POST
/v1/tools/<Tool>` with `{"arguments": {...}, "images": {argument: base64 PNG}}` -> `{"text", "image": base64 PNG |
null, "error": str | null}` (200: the tool ran, `error` is its failure; 422: the arguments do not type-check; 503:
the tool cannot run here, or its backend failed for a reason outside the call).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from PIL import Image

from lmms_agentic.adapters.agentic.tool_client import DeadlineReader, ImageRefused, decode_image, encode_image
from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.adapters.agentic.tool_server_http import (
    Budget,
    HttpError,
    ServerLimits,
    authorised,
    check_bind,
    check_token,
    declared_length,
    load_token,
    parse_call,
)
from lmms_agentic.judges.secrets import Redactor, redactor
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, CallError, bind, catalogue
from lmms_agentic.tasks.agentx.tools.remote import ENV_TOKEN, TOKEN_RULE
from lmms_agentic.tasks.agentx.tools.toolset import agentx_runtime, config_from_env

DEFAULT_PORT = 8765
_LINGER_S, _LINGER_BYTES = 2.0, 8 << 20
_PREFIX = "/v1/tools"
Reply = tuple[int, Mapping[str, Any]]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # one request per connection
    timeout = 10.0  # per socket operation until the deadline reader takes over (setup)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def setup(self) -> None:
        super().setup()
        self._reader = DeadlineReader(self.connection, time.monotonic() + self.server.limits.header_timeout_s)
        self.rfile = io.BufferedReader(self._reader, 1 << 16)

    def _reply(self, status: int, payload: Mapping[str, Any]) -> None:
        clean = {key: value if key == "image" else self.server.redact.data(value) for key, value in payload.items()}
        body = json.dumps(clean).encode()
        self.close_connection = True
        if getattr(self, "request_version", "") == "HTTP/0.9":  # an unparsable request line: reply with headers
            self.request_version = "HTTP/1.0"
        try:
            self.connection.settimeout(self.server.limits.write_timeout_s)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            if status >= 400:
                self._linger()
        except OSError:  # the client is gone or does not read its reply
            return

    def _linger(self) -> None:
        """After a refusal, read and drop what the client is still sending (bounded in bytes and time) before the
        close: closing on unread bytes resets the connection, and the reset can destroy the reply in transit."""
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_WR)
        ends, left = time.monotonic() + _LINGER_S, _LINGER_BYTES
        while left > 0 and (wait := ends - time.monotonic()) > 0:
            self.connection.settimeout(wait)
            chunk = self.connection.recv(min(left, 1 << 16))
            if not chunk:
                return
            left -= len(chunk)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (bad request line, oversized headers, unknown method) as JSON."""
        if code == HTTPStatus.NOT_IMPLEMENTED:
            code, message = HTTPStatus.METHOD_NOT_ALLOWED, f"method {str(self.command)[:20]!r} is not allowed"
        self._reply(code, {"error": message or HTTPStatus(code).phrase})

    def _guarded(self, action: Callable[[], Reply]) -> None:
        try:
            status, payload = action()
        except HttpError as err:
            status, payload = err.status, {"error": err.message}
        except Exception as err:  # nothing escapes without a reply
            status, payload = 500, {"error": f"internal error ({err.__class__.__name__})"}
        self._reply(status, payload)

    def _authorise(self) -> None:
        if not authorised(self.headers.get("Authorization"), self.server.token):
            raise HttpError(401, "missing or wrong bearer token")

    def _path(self) -> str:
        return urllib.parse.urlsplit(self.path).path.rstrip("/")

    def do_GET(self) -> None:
        self._guarded(self._get)

    def do_POST(self) -> None:
        self._guarded(self._post)

    def do_PUT(self) -> None:
        self.send_error(HTTPStatus.NOT_IMPLEMENTED)

    do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_PUT

    def _get(self) -> Reply:
        self._authorise()
        if self._path() != _PREFIX:
            raise HttpError(404, "no such path; GET /v1/tools or POST /v1/tools/<Tool>")
        return 200, {"tools": self.server.offered(), "unavailable": dict(self.server.unready)}

    def _tool(self) -> str:
        path = self._path()
        tool = urllib.parse.unquote(path[len(_PREFIX) + 1:]) if path.startswith(_PREFIX + "/") else ""
        if not tool or tool not in catalogue():
            raise HttpError(404, f"no such tool; POST {_PREFIX}/<Tool> with one of {', '.join(catalogue())}")
        return tool

    def _read_body(self, length: int) -> bytes:
        limits = self.server.limits
        self._reader.deadline = time.monotonic() + limits.header_timeout_s + length / limits.min_body_rate
        try:
            body = self.rfile.read(length)
        except TimeoutError:
            raise HttpError(408, "the body did not arrive in time") from None
        if len(body) != length:
            raise HttpError(400, f"the body ended after {len(body)} of {length} bytes")
        return body

    def _post(self) -> Reply:
        self._authorise()
        tool = self._tool()
        if tool in self.server.unready:
            raise HttpError(503, f"{tool} cannot run on this tool server ({self.server.unready[tool]})")
        limits = self.server.limits
        length = declared_length(self.headers, limits.max_body)
        with self.server.budget.hold(length, limits.queue_wait_s):
            arguments, encoded = parse_call(self._read_body(length), limits)
            with self.server.worker(limits.queue_wait_s):
                try:
                    images = [decode_image(text, limits.max_pixels, limits.max_body) for text in encoded.values()]
                except ImageRefused as err:
                    raise HttpError(413 if err.too_large else 400, str(err)) from None
                arguments = dict(arguments)
                for index, name in enumerate(encoded):
                    arguments[name] = f"image_{index + 1}"
                bound = bind(tool, arguments, len(images), len(images))
                if isinstance(bound, CallError):
                    raise HttpError(422, bound.message)
                return 200, self.server.execute(bound, images)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the listen backlog: a burst of connections is queued, not dropped

    def __init__(self, address: tuple[str, int], runtime: ToolRuntime, token: str, limits: ServerLimits) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.runtime, self.token, self.limits = runtime, token, limits
        self.unready = runtime.unready()
        self.redact: Redactor = redactor(token)
        self.budget = Budget(limits.inflight_bytes)
        self._connections = threading.BoundedSemaphore(limits.max_connections)
        self._workers = threading.BoundedSemaphore(limits.max_workers)
        super().__init__(address, _Handler)

    def offered(self) -> dict[str, str]:
        """The tools this server runs -> their backend (those it cannot run are in `unready`)."""
        return {tool: backend for tool, backend in self.runtime.backends.items() if tool not in self.unready}

    @contextlib.contextmanager
    def worker(self, wait_s: float) -> Iterator[None]:
        if not self._workers.acquire(timeout=wait_s):
            raise HttpError(503, "the tool server is busy; try again")
        try:
            yield
        finally:
            self._workers.release()

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._connections.acquire(blocking=False):
            self._refuse(request, "too many open connections; try again")
            return
        try:
            super().process_request(request, client_address)
        except RuntimeError:  # no thread can be started (a process or cgroup thread limit)
            self._connections.release()
            self._refuse(request, "the tool server cannot take another connection now; try again")
        except BaseException:
            self._connections.release()
            raise

    def _refuse(self, request: Any, message: str) -> None:
        """A 503 JSON written from the accepting thread (a few bytes into an empty socket buffer), then close."""
        body = json.dumps({"error": message}).encode()
        with contextlib.suppress(OSError):
            request.settimeout(1.0)
            request.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        self.shutdown_request(request)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a connection that broke mid-request; the handler has answered whatever it could

    def execute(self, call: BoundCall, images: Sequence[Image.Image]) -> dict[str, Any]:
        observed = self.runtime.execute({"gt_steps_flat_json": "[]"}, call, list(images))
        if observed.status == "unavailable":  # not the call's fault: the client counts it as unavailable
            raise HttpError(503, f"{call.tool} is unavailable on the tool server ({observed.reason or observed.text})")
        if observed.status != "ok":
            return {"text": "", "image": None, "error": observed.text}
        return {"text": observed.text,
                "image": encode_image(observed.image) if observed.image is not None else None, "error": None}


class ToolServer:
    """The server in a background thread (tests, notebooks); `serve` for the command line.  `token` None reads
    `LMMS_AGENTIC_AGENTX_TOOL_TOKEN`; a non-loopback `host` without a token raises before anything is bound."""

    def __init__(self, runtime: ToolRuntime, host: str = "127.0.0.1", port: int = 0, token: str | None = None,
                 limits: ServerLimits | None = None) -> None:
        if "remote" in runtime.backends.values():
            raise ValueError("a tool server cannot forward to another tool server: set its tools to local/model")
        secret = (os.environ.get(ENV_TOKEN, "") if token is None else token).strip()
        check_token(secret, TOKEN_RULE)
        check_bind(host, secret, TOKEN_RULE)
        try:
            self.httpd = _Server((host, port), runtime, secret, limits or ServerLimits())
        except OSError as err:
            raise ValueError(f"cannot listen on {host}:{port} ({err.strerror or err})") from None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        name = host if isinstance(host, str) else host.decode()
        return f"http://[{name}]:{port}" if ":" in name else f"http://{name}:{port}"

    @property
    def token_required(self) -> bool:
        return bool(self.httpd.token)

    def start(self) -> ToolServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True,
                                        name="agentx-tool-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def serve(host: str = "127.0.0.1", port: int = DEFAULT_PORT, token_file: Path | None = None,
          max_workers: int = ServerLimits.max_workers) -> int:
    """The command: serve until interrupted.  Bad settings raise `ValueError` (one line) before binding."""
    token = load_token(token_file, TOKEN_RULE)
    check_bind(host, token, TOKEN_RULE)
    limits = ServerLimits(max_workers=max_workers)
    server = ToolServer(agentx_runtime(config_from_env(server_side=True)), host, port, token, limits)
    access = "bearer token required" if server.token_required else "no token (loopback only)"
    print(f"Agent-X tool server on {server.url} ({access}; {limits.max_workers} workers, bodies up to "
          f"{limits.max_body >> 20} MiB, images up to {limits.max_pixels // 1_000_000} MP)", flush=True)
    print(f"tool backends: {json.dumps(server.httpd.offered())}", flush=True)
    for tool, reason in server.httpd.unready.items():
        print(f"not offered: {tool} ({reason})", flush=True)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            server.httpd.serve_forever()
    finally:
        server.httpd.server_close()
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options (`lmms_agentic.cli.tool_server` declares the same ones for `lmms-agentic`)."""
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; any other needs a token)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)")
    parser.add_argument("--token-file", type=Path, default=None,
                        help=f"file whose first line is the bearer token (else ${ENV_TOKEN})")
    parser.add_argument("--max-workers", type=int, default=ServerLimits.max_workers,
                        help=f"tool calls at once (default {ServerLimits.max_workers})")


def main(argv: list[str] | None = None) -> int:
    prog = "python -m lmms_agentic.tasks.agentx.tools.server"
    parser = argparse.ArgumentParser(prog=prog, description="Serve Agent-X tools over HTTP for the `remote` "
                                                            "backend (same as `python -m lmms_agentic tool-server`).")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return serve(args.host, args.port, args.token_file, args.max_workers)
    except ValueError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
