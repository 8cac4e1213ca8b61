"""Test double: a scripted OpenAI-compatible chat server on 127.0.0.1 (used by the tests and ``bench.py``).

Owns: ``ScriptedJudgeServer``, a stdlib ``ThreadingHTTPServer`` on a free loopback port serving
``POST /v1/chat/completions``.  A *script* (a function of the received call) decides each reply: normal content,
an HTTP error status with headers (429 + Retry-After, 500), a raw malformed body, a truncated body (the connection
closes mid-body), a delay (timeouts, slow replies under concurrency), a body dripped one byte at a time, an OpenAI
``refusal`` field or a finish_reason.  Every call is recorded (body, headers, how often the same body was seen), so
tests can count what reached the server.  It never binds anything but 127.0.0.1 and is not meant for production use.

    with ScriptedJudgeServer(lambda call: ScriptedReply("Score: 4")) as server:
        JudgeConfig(base_url=server.base_url, model="m", ...)
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ScriptedCall", "ScriptedJudgeServer", "ScriptedReply", "fixed"]


@dataclass(frozen=True)
class ScriptedReply:
    """What the server answers to one call."""

    content: str | None = "Score: 3"
    status: int = 200
    delay: float = 0.0
    """Seconds to sleep before answering (on top of the server's latency)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    refusal: str | None = None
    finish_reason: str = "stop"
    model: str | None = None
    """Model reported in the response (default: the server's model)."""
    body: bytes | None = None
    """Raw body to send instead of a completion (e.g. malformed JSON)."""
    truncate: bool = False
    """Announce the full Content-Length, send half the body, close the connection."""
    drip: float = 0.0
    """Seconds between single bytes of the body (a server that never lets a per-read timeout expire)."""


@dataclass(frozen=True)
class ScriptedCall:
    """One request as the server saw it."""

    index: int
    """0-based arrival order over the server's lifetime."""
    body: dict[str, Any]
    headers: dict[str, str]
    path: str
    seen: int
    """How many earlier calls carried exactly the same body (0 on the first try)."""

    @property
    def prompt(self) -> str:
        """All message contents joined by newlines."""
        messages = self.body.get("messages") or []
        return "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))


Script = Callable[[ScriptedCall], ScriptedReply]


def fixed(content: str) -> Script:
    """A script that always answers ``content``."""
    return lambda call: ScriptedReply(content)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    owner: ScriptedJudgeServer

    def handle_error(self, request: Any, client_address: Any) -> None:  # clients that gave up: not an error
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid the 40 ms delayed-ACK stall
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, headers: Mapping[str, str], truncate: bool = False,
              drip: float = 0.0) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.flush()
            payload = body[: len(body) // 2] if truncate else body
            if drip > 0:
                for i in range(len(payload)):
                    self.wfile.write(payload[i:i + 1])
                    self.wfile.flush()
                    time.sleep(drip)
            else:
                self.wfile.write(payload)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        if truncate:
            self.close_connection = True

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        owner = self.server.owner
        if not self.path.split("?")[0].endswith("/chat/completions"):
            self._send(404, b'{"error": "not found"}', {})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send(400, b'{"error": "invalid JSON"}', {})
            return
        call = owner._record(body, dict(self.headers.items()), self.path)
        owner._enter()
        try:
            self._answer(call, owner)
        finally:
            owner._leave()

    def _answer(self, call: ScriptedCall, owner: ScriptedJudgeServer) -> None:
        reply = owner.script(call)
        time.sleep(owner.latency + reply.delay)
        if reply.body is not None or reply.status != 200:
            payload = reply.body if reply.body is not None else json.dumps(
                {"error": {"message": f"scripted status {reply.status}", "type": "scripted"}}).encode()
            self._send(reply.status, payload, reply.headers, reply.truncate, reply.drip)
            return
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.refusal is not None:
            message["refusal"] = reply.refusal
        completion = {
            "id": f"chatcmpl-{call.index}", "object": "chat.completion", "created": int(time.time()),
            "model": reply.model or owner.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        self._send(200, json.dumps(completion).encode(), reply.headers, reply.truncate, reply.drip)


class ScriptedJudgeServer:
    """Loopback OpenAI-compatible server answering from ``script`` (default: always "Score: 3")."""

    def __init__(self, script: Script | None = None, *, latency: float = 0.0,
                 model: str = "scripted-judge-2024-01-01") -> None:
        self.script: Script = script if script is not None else fixed("Score: 3")
        self.latency = latency
        self.model = model
        self._lock = threading.Lock()
        self._calls: list[ScriptedCall] = []
        self._bodies: Counter[str] = Counter()
        self._server: _Server | None = None
        self._in_flight = 0
        self.max_in_flight = 0
        """Most calls being answered at the same time (concurrency actually reached)."""
        self._thread: threading.Thread | None = None

    def _record(self, body: dict[str, Any], headers: dict[str, str], path: str) -> ScriptedCall:
        canonical = json.dumps(body, sort_keys=True)
        with self._lock:
            call = ScriptedCall(len(self._calls), body, headers, path, self._bodies[canonical])
            self._bodies[canonical] += 1
            self._calls.append(call)
        return call

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    @property
    def calls(self) -> list[ScriptedCall]:
        with self._lock:
            return list(self._calls)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._calls)

    def reset(self) -> None:
        """Forget recorded calls."""
        with self._lock:
            self._calls.clear()
            self._bodies.clear()
            self.max_in_flight = 0

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> ScriptedJudgeServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-judge", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedJudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
