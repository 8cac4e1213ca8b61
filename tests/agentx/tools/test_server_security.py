"""The Agent-X tool server and its client under abuse, on 127.0.0.1 only: the bind rule and the token, malformed
requests (each a 4xx JSON, the server still serving), bodies and images bounded before they are read or decoded
(peak RSS of a server process), idle and slow connections, and the client's total deadline, reply cap and error
texts (no credentials)."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PIL import Image

from lmms_agentic.adapters.agentic.tool_runtime import Observation, ToolRuntime
from lmms_agentic.adapters.agentic.tool_server_http import ServerLimits, check_bind, is_loopback
from lmms_agentic.judges.secrets import redactor
from lmms_agentic.tasks.agentx.tools import server as server_module
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, bind
from lmms_agentic.tasks.agentx.tools.local import ToolError
from lmms_agentic.tasks.agentx.tools.remote import ENV_TOKEN, TOKEN_RULE, call_remote
from lmms_agentic.tasks.agentx.tools.server import ToolServer
from lmms_agentic.tasks.agentx.tools.toolset import agentx_runtime, config_from_env

TOKEN = "test-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[3]


def _call(tool: str = "Calculator", arguments: dict[str, object] | None = None, n_images: int = 0) -> BoundCall:
    bound = bind(tool, arguments if arguments is not None else {"expression": "6*7"}, n_images, n_images)
    assert isinstance(bound, BoundCall)
    return bound


def _runtime() -> ToolRuntime:
    return agentx_runtime(config_from_env({}, server_side=True), sandbox_warm=0)


def _exchange(port: int, request: bytes, timeout: float = 15.0,
              half_close: bool = False) -> tuple[int, dict[str, object]]:
    """Send raw bytes (then end the sending side if `half_close`), read until the server closes; (status, JSON
    body).  Fails if nothing comes back."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(request)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        chunks = []
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    reply = b"".join(chunks)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/"), f"no HTTP reply: {reply[:200]!r}"
    return int(head.split()[1]), json.loads(body)


def _post(path: str, body: bytes, token: str | None = TOKEN, length: str | None = None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token is not None else ""
    size = f"Content-Length: {len(body) if length is None else length}\r\n" if length != "" else ""
    return f"POST {path} HTTP/1.1\r\nHost: x\r\n{auth}{size}Content-Type: application/json\r\n\r\n".encode() + body


def _good_call_works(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    assert call_remote(url, _call(), {}, timeout=30).text == "42"


def _png(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def _png_bomb(width: int, height: int) -> str:
    """A valid 1-bit PNG of width x height black pixels: tens of KB on the wire, gigabytes once decoded to RGB."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    packer = zlib.compressobj(9)
    row = bytes(1 + (width + 7) // 8)
    idat = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    return base64.b64encode(raw).decode()


def _warm_up(url: str) -> None:
    """One call through, so that the sandbox's start (Calculator runs there) is not timed by a test."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV_TOKEN, TOKEN)
        for _ in range(5):
            with contextlib.suppress(ToolError):
                if call_remote(url, _call(), {}, timeout=30).text == "42":
                    return
        raise AssertionError("the tool server never answered 6*7")


@pytest.fixture(scope="module")
def served() -> Iterator[ToolServer]:
    server = ToolServer(_runtime(), token=TOKEN).start()
    try:
        _warm_up(server.url)
        yield server
    finally:
        server.stop()


def _port(server: ToolServer) -> int:
    return int(server.httpd.server_address[1])


# ---------------------------------------------------------------------------------------------- bind rule, token


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.5.6.7", True), ("::1", True), ("[::1]", True), ("localhost", True),
    ("::ffff:127.0.0.1", True), ("0.0.0.0", False), ("::", False), ("", False), ("192.0.2.10", False),
    ("10.1.2.3", False), ("gpu-node", False)])
def test_only_loopback_binds_without_a_token(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    if loopback:
        check_bind(host, "", TOKEN_RULE)
    else:
        with pytest.raises(ValueError, match=r"LMMS_AGENTIC_AGENTX_TOOL_TOKEN.*--token-file"):
            check_bind(host, "", TOKEN_RULE)
    check_bind(host, TOKEN, TOKEN_RULE)


def test_tool_server_refuses_a_public_address_without_a_token_before_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_TOKEN, raising=False)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("bound a socket")

    monkeypatch.setattr(server_module, "_Server", never)
    for host in ("0.0.0.0", "192.0.2.10", "::"):
        with pytest.raises(ValueError, match="without a token"):
            ToolServer(_runtime(), host=host)
    with pytest.raises(ValueError, match="at least 16"):
        ToolServer(_runtime(), token="short")


def test_a_token_is_required_and_compared(served: ToolServer) -> None:
    port = _port(served)
    for header in ("", "Authorization: Bearer wrong-token-0123456789\r\n", f"Authorization: Basic {TOKEN}\r\n",
                   f"Authorization: Bearer {TOKEN}x\r\n"):
        status, body = _exchange(port, f"GET /v1/tools HTTP/1.1\r\nHost: x\r\n{header}\r\n".encode())
        assert status == 401 and "token" in str(body["error"])
    status, body = _exchange(port, _post("/v1/tools/Calculator", b'{"arguments": {"expression": "1"}}', None))
    assert status == 401
    status, body = _exchange(port, f"GET /v1/tools HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    assert status == 200 and body["tools"]["Calculator"] == "local"  # type: ignore[index]


# -------------------------------------------------------------------------------------------- malformed requests

_GIF = base64.b64encode(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;").decode()
_MALFORMED: list[tuple[str, bytes]] = [
    ("garbage JSON", _post("/v1/tools/Calculator", b"{not json")),
    ("a list body", _post("/v1/tools/Calculator", b"[1, 2, 3]")),
    ("string arguments", _post("/v1/tools/Calculator", b'{"arguments": "6*7"}')),
    ("list arguments", _post("/v1/tools/Calculator", b'{"arguments": [1]}')),
    ("images a list", _post("/v1/tools/OCR", b'{"arguments": {}, "images": ["abc"]}')),
    ("an integer image", _post("/v1/tools/OCR", b'{"arguments": {}, "images": {"image": 7}}')),
    ("base64 garbage", _post("/v1/tools/OCR", b'{"arguments": {}, "images": {"image": "@@not base64!!"}}')),
    ("not a PNG", _post("/v1/tools/OCR", json.dumps({"images": {"image": _GIF}}).encode())),
    ("an unknown field", _post("/v1/tools/Calculator", b'{"arguments": {}, "code": "import os"}')),
    ("a bad argument type", _post("/v1/tools/Calculator", b'{"arguments": {"expression": [1]}}')),
    ("an unknown argument", _post("/v1/tools/Calculator", b'{"arguments": {"expression": "1", "x": 1}}')),
    ("deep nesting", _post("/v1/tools/Calculator", b"[" * 100_000 + b"]" * 100_000)),
    ("an unknown tool", _post("/v1/tools/RunShell", b'{"arguments": {}}')),
    ("an unknown path", _post("/v2/anything", b"{}")),
    ("GET of an unknown path", f"GET /etc/passwd HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()),
    ("an unknown method", f"BREW /v1/tools HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()),
    ("PUT", f"PUT /v1/tools HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: 0\r\n\r\n".encode()),
    ("a garbage request line", b"\x16\x03\x01\x02\x00garbage\r\n\r\n"),
    ("a garbage Content-Length", _post("/v1/tools/Calculator", b"{}", length="12abc")),
    ("a negative Content-Length", _post("/v1/tools/Calculator", b"{}", length="-1")),
    ("no Content-Length", _post("/v1/tools/Calculator", b"", length="")),
    ("a huge Content-Length", _post("/v1/tools/Calculator", b"{}", length=str(10**15))),
    ("a short body", _post("/v1/tools/Calculator", b"{}", length="50")),
]


@pytest.mark.parametrize("request_bytes", [r for _, r in _MALFORMED], ids=[n for n, _ in _MALFORMED])
def test_every_malformed_request_gets_a_4xx_json_and_the_server_keeps_serving(
        served: ToolServer, request_bytes: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    # (a body that ends early: the sender stops sending; the server must not wait for the rest)
    status, body = _exchange(_port(served), request_bytes, half_close=b"Content-Length: 50" in request_bytes)
    assert 400 <= status < 500 and isinstance(body["error"], str) and body["error"]
    _good_call_works(served.url, monkeypatch)


def test_an_exception_in_a_handler_is_a_500_json_and_replies_are_redacted(
        served: ToolServer, monkeypatch: pytest.MonkeyPatch) -> None:
    def leaky(doc: object, call: BoundCall, visuals: object, used: object = ()) -> Observation:
        return Observation(f"the token is {TOKEN} and the env is {os.environ.get('SOME_API_KEY')}", "ok", "local", 0)

    monkeypatch.setenv("SOME_API_KEY", "sk-very-secret-value-123")
    monkeypatch.setattr(served.httpd, "redact", redactor(TOKEN))  # as if started with this env
    monkeypatch.setattr(served.httpd.runtime, "execute", leaky)
    status, body = _exchange(_port(served), _post("/v1/tools/Calculator", b'{"arguments": {"expression": "1"}}'))
    assert status == 200 and TOKEN not in json.dumps(body) and "sk-very-secret" not in json.dumps(body)

    def broken(doc: object, call: BoundCall, visuals: object, used: object = ()) -> Observation:
        raise RuntimeError(f"boom {TOKEN}")

    monkeypatch.setattr(served.httpd.runtime, "execute", broken)
    status, body = _exchange(_port(served), _post("/v1/tools/Calculator", b'{"arguments": {"expression": "1"}}'))
    assert status == 500 and "RuntimeError" in str(body["error"]) and TOKEN not in json.dumps(body)
    monkeypatch.undo()
    _good_call_works(served.url, monkeypatch)


# ----------------------------------------------------------------------- bodies, images, connections: a process


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@contextlib.contextmanager
def _abuse(url: str, pid: int, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Around abusive requests: the server answers a good call before and after, and its peak RSS grows < 100 MB."""
    _good_call_works(url, monkeypatch)
    before = _peak_rss_mb(pid)
    yield
    grown = _peak_rss_mb(pid) - before
    assert grown < 100, f"peak RSS grew by {grown:.0f} MB"
    _good_call_works(url, monkeypatch)


@pytest.fixture(scope="module")
def process_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, int]]:
    """`python -m lmms_agentic tool-server` in its own process (its peak RSS is its own): (url, port, pid)."""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc for the server's peak RSS")
    token_file = tmp_path_factory.mktemp("token") / "token"
    token_file.write_text(TOKEN + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LMMS_AGENTIC_AGENTX_")}
    process = subprocess.Popen([sys.executable, "-m", "lmms_agentic", "tool-server", "--port", "0", "--token-file",
                                str(token_file), "--max-workers", "2"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 120)
        line = process.stdout.readline() if ready else ""
        assert "http://127.0.0.1:" in line and "bearer token required" in line, line
        url = line.split(" on ", 1)[1].split()[0]
        _warm_up(url)
        yield url, int(url.rsplit(":", 1)[1]), process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_bad_lengths_are_refused_without_reading_the_body(process_server: tuple[str, int, int],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    url, port, pid = process_server
    with _abuse(url, pid, monkeypatch):
        for length, expected in (("-1", 400), ("abc", 400), ("1e9", 400), ("5, 7", 400), ("", 411),
                                 (str(2**63), 413), (str(200 << 20), 413)):
            for _ in range(3):
                status, body = _exchange(port, _post("/v1/tools/Calculator", b'{"arguments": {', length=length))
                assert status == expected, (length, body)


def test_decompression_bombs_are_refused_before_decoding(process_server: tuple[str, int, int],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    url, port, pid = process_server
    with _abuse(url, pid, monkeypatch):
        for width, height in ((20_000, 20_000), (9_000, 9_000)):  # over Pillow's own bomb limit / only over ours
            body = json.dumps({"arguments": {}, "images": {"image": _png_bomb(width, height)}}).encode()
            assert len(body) < 200_000
            for _ in range(4):
                status, reply = _exchange(port, _post("/v1/tools/OCR", body))
                assert status == 413 and ("limit" in str(reply["error"]) or "bomb" in str(reply["error"])), reply


def test_idle_connections_do_not_starve_a_real_request(process_server: tuple[str, int, int],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    url, port, _ = process_server
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(130)]
    try:
        idle[0].sendall(b"POST /v1/tools/Calculator HTTP/1.1\r\n")  # and a few that started a request
        idle[1].sendall(_post("/v1/tools/Calculator", b"", length="100"))
        started = time.monotonic()
        _good_call_works(url, monkeypatch)
        assert time.monotonic() - started < 8.0  # the idle ones are only closed after 10 s
        for sock in idle:  # ... and then they are (idle[1] gets its 408 first): no thread is held for ever
            sock.settimeout(max(1.0, started + 25.0 - time.monotonic()))
            while sock.recv(65536):
                pass
    finally:
        for sock in idle:
            sock.close()


def test_slow_and_surplus_connections_are_cut_off() -> None:
    limits = ServerLimits(max_connections=4, header_timeout_s=1.0, min_body_rate=1000.0)
    server = ToolServer(_runtime(), token=TOKEN, limits=limits).start()
    try:
        port = _port(server)
        held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(4)]
        time.sleep(0.3)
        status, body = _exchange(port, b"GET /v1/tools HTTP/1.1\r\n\r\n")  # a fifth: answered at once
        assert status == 503 and "connections" in str(body["error"])
        started = time.monotonic()
        for sock in held:  # idle ones are closed after header_timeout_s
            assert sock.recv(10) == b""
        assert time.monotonic() - started < 6.0
        # a closed socket is seen before the server's handler thread gives its connection slot back: wait for it
        authorised = f"GET /v1/tools HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()
        deadline = time.monotonic() + 10.0
        while _exchange(port, authorised)[0] == 503 and time.monotonic() < deadline:
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:  # a body dripping too slowly
            sock.sendall(_post("/v1/tools/Calculator", b"", length="5000") + b"{")
            started = time.monotonic()
            with contextlib.suppress(OSError):
                for _ in range(40):
                    time.sleep(0.25)
                    sock.sendall(b" ")
            reply = sock.recv(65536)
        assert b" 408 " in reply.split(b"\r\n")[0] and time.monotonic() - started < 15.0
        deadline = time.monotonic() + 10.0
        while (status := _exchange(port, authorised)[0]) == 503 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert status == 200
    finally:
        server.stop()


# ------------------------------------------------------------------------------------------------------ client


def _read_request(connection: socket.socket) -> bytes:
    """The whole request (headers and the body its Content-Length declares): closing on unread bytes resets."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := connection.recv(65536)):
        data += chunk
    head = data.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
    length = next((int(line.split(":", 1)[1]) for line in head.split("\r\n") if line.startswith("content-length:")),
                  0)
    while len(data.partition(b"\r\n\r\n")[2]) < length and (chunk := connection.recv(65536)):
        data += chunk
    return data


@contextlib.contextmanager
def _fake_server(answer: Callable[[socket.socket, bytes], None]) -> Iterator[int]:
    """A one-connection-at-a-time loopback server: reads the request, then `answer(connection, request)`."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection, contextlib.suppress(OSError):
                connection.settimeout(5)
                answer(connection, _read_request(connection))
                connection.shutdown(socket.SHUT_WR)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join(30)
        listener.close()


def _drip(head: bytes, limit_s: float = 20.0) -> Callable[[socket.socket, bytes], None]:
    def answer(connection: socket.socket, request: bytes) -> None:
        ended = time.monotonic() + limit_s
        for byte in head:
            connection.sendall(bytes([byte]))
            time.sleep(0.5)
            if time.monotonic() > ended:
                return
    return answer


def _drip_body(head: bytes) -> Callable[[socket.socket, bytes], None]:
    headers, _, body = head.partition(b"\r\n\r\n")

    def answer(connection: socket.socket, request: bytes) -> None:
        connection.sendall(headers + b"\r\n\r\n")
        _drip(body)(connection, request)
    return answer


@pytest.mark.parametrize("answer", [_drip_body(b"HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\n" + b" " * 100),
                                    _drip(b"HTTP/1.0 200 OK\r\nX-Slow: " + b"a" * 100)], ids=["body", "headers"])
def test_the_client_gives_up_at_its_total_deadline(answer: Callable[[socket.socket, bytes], None]) -> None:
    with _fake_server(answer) as port:
        started = time.monotonic()
        with pytest.raises(ToolError, match="deadline"):
            call_remote(f"http://127.0.0.1:{port}", _call(), {}, timeout=2.0)
        took = time.monotonic() - started
    assert 1.5 < took < 6.0, took


def _reply_with(status: str, body: bytes, length: int | None = None) -> Callable[[socket.socket, bytes], None]:
    def answer(connection: socket.socket, request: bytes) -> None:
        size = f"Content-Length: {len(body) if length is None else length}\r\n" if length != -1 else ""
        connection.sendall(f"HTTP/1.0 {status}\r\nContent-Type: application/json\r\n{size}\r\n".encode() + body)
    return answer


def test_the_client_refuses_an_oversized_or_malformed_reply() -> None:
    cases: list[tuple[Callable[[socket.socket, bytes], None], str, int]] = [
        (_reply_with("200 OK", b"{}", length=10**12), "limit", 1 << 30),
        (_reply_with("200 OK", b'{"text": "' + b"x" * (3 << 20) + b'"}', length=-1), "limit", 1 << 20),
        (_reply_with("200 OK", b"[1, 2]"), "object", 1 << 20),
        (_reply_with("200 OK", b'{"text": 5}'), "string", 1 << 20),
        (_reply_with("200 OK", b'{"text": "", "image": "@@@"}'), "image", 1 << 20),
        (_reply_with("200 OK", json.dumps({"text": "", "image": _png_bomb(20_000, 20_000)}).encode()), "bomb",
         1 << 20),
        (_reply_with("200 OK", json.dumps({"text": "", "image": _png_bomb(9_000, 9_000)}).encode()), "limit",
         1 << 20),
        (_reply_with("200 OK", b"not json"), "JSON", 1 << 20),
    ]
    for answer, message, cap in cases:
        with _fake_server(answer) as port, pytest.raises(ToolError, match=message):
            call_remote(f"http://127.0.0.1:{port}", _call(), {}, timeout=20.0, max_reply=cap)
    good = _reply_with("200 OK", json.dumps({"text": "ok", "image": _png(Image.new("RGB", (4, 4), "red"))}).encode())
    with _fake_server(good) as port:
        output = call_remote(f"http://127.0.0.1:{port}", _call(), {}, timeout=20.0)
    assert output.text == "ok" and output.image is not None and output.image.getpixel((0, 0)) == (255, 0, 0)


def test_client_errors_never_show_url_credentials_or_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_TOKEN, TOKEN)

    def echo(connection: socket.socket, request: bytes) -> None:  # a server that quotes the request back
        _reply_with("401 Unauthorized", json.dumps({"error": request.decode("latin-1")}).encode())(connection, b"")

    with _fake_server(echo) as port:
        with pytest.raises(ToolError) as refused:
            call_remote(f"http://127.0.0.1:{port}", _call(), {}, timeout=20.0)
        assert "401" in str(refused.value) and TOKEN not in str(refused.value)
        for url in (f"http://admin:hunter2-password@127.0.0.1:{port}", f"http://tok-1234567890abcdef@127.0.0.1:{port}"):
            with pytest.raises(ToolError) as failed:
                call_remote(url, _call(), {}, timeout=20.0)
            text = str(failed.value)
            assert "hunter2" not in text and "tok-1234567890" not in text and "admin" not in text
            assert f"127.0.0.1:{port}" in text
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    closed_port = free.getsockname()[1]
    free.close()
    with pytest.raises(ToolError, match="did not answer") as down:
        call_remote(f"http://127.0.0.1:{closed_port}/?token=query-secret-123456", _call(), {}, timeout=5.0)
    assert "query-secret" not in str(down.value)


# ------------------------------------------------------------------------------------------------------- the CLI


def _cli(*args: str, module: str = "lmms_agentic") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENV_TOKEN}
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)


@pytest.mark.parametrize("module", ["lmms_agentic", "lmms_agentic.tasks.agentx.tools.server"])
def test_the_command_refuses_a_public_address_without_a_token_in_one_line(module: str) -> None:
    args = ("tool-server",) if module == "lmms_agentic" else ()
    done = _cli(*args, "--host", "0.0.0.0", "--port", "0", module=module)
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and ENV_TOKEN in lines[0] and "--token-file" in lines[0], done.stderr


def test_the_command_help_and_its_options_match_the_module_entry_point(tmp_path: Path) -> None:
    done = _cli("tool-server", "--help")
    assert done.returncode == 0 and "--token-file" in done.stdout and "--max-workers" in done.stdout
    assert "--token " not in done.stdout  # the token never goes on the command line
    empty = tmp_path / "empty"
    empty.write_text("")
    refused = _cli("tool-server", "--token-file", str(empty))
    assert refused.returncode == 1 and "empty" in refused.stderr
    import argparse

    from lmms_agentic.cli import tool_server

    ours, theirs = argparse.ArgumentParser(), argparse.ArgumentParser()
    tool_server.add_arguments(ours)
    server_module.add_arguments(theirs)
    assert {a.dest: a.default for a in ours._actions} == {a.dest: a.default for a in theirs._actions}


def test_the_client_reads_an_early_refusal_of_a_large_body(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = ServerLimits(max_body=1 << 20, inflight_bytes=1 << 20)
    server = ToolServer(_runtime(), token=TOKEN, limits=limits).start()
    try:
        noise = Image.frombytes("RGB", (1000, 1000), os.urandom(3_000_000))  # a PNG of about 3 MB
        for token, status in ((TOKEN, "413"), ("wrong-token-0123456789", "401")):
            monkeypatch.setenv(ENV_TOKEN, token)
            with pytest.raises(ToolError, match=f"answered {status}"):
                call_remote(server.url, _call("OCR", {"image": "image_1"}, 1), {"image": noise}, timeout=20.0)
    finally:
        server.stop()
