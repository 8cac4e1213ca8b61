"""The `remote` backend's client: one bound call sent to a benchmark's tool server over HTTP (stdlib only).

Owns the wire format both sides share (images as base64 PNG under their argument names, decoded only after the
PNG header's size passes `MAX_IMAGE_PIXELS`; `MAX_MESSAGE_BYTES` for a request or a reply body) and the client.
`ServerAccess` is what the benchmark gives: the bearer token (sent when set), the variable it comes from (named in
messages) and its secret scrubber.

Client limits: the tool's wall-clock limit is a total deadline for the call (connect, send, headers and body:
every socket read waits at most for the time left, so a server dripping its reply byte by byte is cut off at the
deadline), the reply is refused past `MAX_MESSAGE_BYTES` before it is parsed, and it must be a JSON object with a
string `text` and an `image` that is null or a base64 PNG within the pixel cap.  A server that is down, slow, too
big, refuses the token or answers garbage is a `ToolInfrastructureError` (the runtime answers "unavailable"), the
tool's own failure a `ToolError`; never an exception out of the run.  Error texts name the server without the
URL's user-info and pass through the caller's scrubber (no token, no password).  A URL with user-info is refused:
the token is the one credential the server knows.  `server_tools` reads `GET /v1/tools` (the start-up check).
"""

from __future__ import annotations

import base64
import binascii
import http.client
import io
import json
import socket
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from PIL import Image

from lmms_agentic.adapters.agentic.tool_io import ToolCall, ToolError, ToolInfrastructureError, ToolOutput

MAX_IMAGE_PIXELS = 40_000_000
MAX_DECODED_BYTES = 4 * MAX_IMAGE_PIXELS
MAX_MESSAGE_BYTES = 64 << 20
_CHUNK = 1 << 16
CHECK_TIMEOUT_S = 30.0
"""Total deadline of the start-up check (`server_tools`)."""
CALLER_STATUSES = (400, 413, 422)
"""Refusals of the call itself (its arguments or images), answered to the model as tool errors."""


@dataclass(frozen=True)
class ServerAccess:
    """How a benchmark reaches its tool server: the bearer token ("" for none), the variable that holds it (named
    in messages) and the scrubber every error text passes through (the token, URL credentials, other secrets)."""

    token: str
    token_env: str
    redact: Callable[[str], str]


class ImageRefused(ValueError):
    """An image on the wire that is not a base64 PNG within the caps (its pixels were never decoded);
    `too_large` when it is a valid image over a cap rather than garbage."""

    def __init__(self, message: str, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large


def encode_image(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def _bytes_per_pixel(image: Image.Image) -> int:
    per_band = 4 if image.mode in ("I", "F") else 2 if image.mode.startswith("I;16") else 1
    return max(1, len(image.getbands()) * per_band)


def decode_image(text: object, max_pixels: int = MAX_IMAGE_PIXELS, max_chars: int = MAX_MESSAGE_BYTES) -> Image.Image:
    """A base64 PNG -> RGB image; its size is read from the header and checked before any pixel is decoded."""
    if not isinstance(text, str):
        raise ImageRefused(f"an image must be a base64 PNG string, not {type(text).__name__}")
    if len(text) > max_chars:
        raise ImageRefused(f"an image of {len(text)} base64 characters is over the limit of {max_chars}", True)
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ImageRefused("an image is not valid base64") from None
    try:
        with Image.open(io.BytesIO(raw), formats=["PNG"]) as image:
            width, height = image.size
            if width * height > max_pixels:
                raise ImageRefused(f"an image of {width}x{height} pixels is over the limit of {max_pixels}", True)
            if width * height * _bytes_per_pixel(image) > 4 * max_pixels:
                raise ImageRefused(f"an image of {width}x{height} {image.mode} pixels decodes past the limit", True)
            return image.convert("RGB")
    except Image.DecompressionBombError:
        raise ImageRefused("an image is a decompression bomb", True) from None
    except (OSError, SyntaxError, ValueError, EOFError) as err:
        if isinstance(err, ImageRefused):
            raise
        raise ImageRefused(f"an image is not a readable PNG ({err.__class__.__name__})") from None


def server_label(url: str) -> str:
    """`url` as it may be shown: scheme, host and port only (no user-info, path or query)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<unparsable URL>"
    return f"{parts.scheme or 'http'}://{f'[{host}]' if ':' in host else host}{port}"


class DeadlineReader(io.RawIOBase):
    """Socket reads that each wait at most for the time left before `deadline` (a `time.monotonic()` value that
    the owner may move), then fail with `TimeoutError`; wrap it in an `io.BufferedReader`."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the deadline passed")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


class _DeadlineSocket:
    """The connection's socket as http.client sees it: writes and reads bounded by the call's deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock, self._deadline = sock, deadline

    def sendall(self, data: bytes) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the call's deadline passed")
        self._sock.settimeout(left)
        self._sock.sendall(data)

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BufferedReader:
        return io.BufferedReader(DeadlineReader(self._sock, self._deadline), _CHUNK)

    def close(self) -> None:
        """Nothing: http.client closes the connection before the reply is read (`call_remote` closes the socket)."""


def _guard(connection: _Connection | _TlsConnection) -> None:
    """Keep the connected socket as `raw` and let http.client read through the call's deadline."""
    connection.raw = connection.sock
    connection.sock = cast(socket.socket, _DeadlineSocket(connection.sock, connection.deadline))


class _Connection(http.client.HTTPConnection):
    deadline = 0.0
    raw: socket.socket | None = None

    def connect(self) -> None:
        super().connect()
        _guard(self)


class _TlsConnection(http.client.HTTPSConnection):
    deadline = 0.0
    raw: socket.socket | None = None

    def connect(self) -> None:
        super().connect()
        _guard(self)


def _connection(parts: urllib.parse.SplitResult, deadline: float) -> _Connection | _TlsConnection:
    kind = _TlsConnection if parts.scheme == "https" else _Connection
    connection = kind(parts.hostname or "", parts.port, timeout=max(0.001, deadline - time.monotonic()))
    connection.deadline = deadline
    return connection


def _read_reply(response: http.client.HTTPResponse, deadline: float, limit: int) -> bytes:
    declared = response.getheader("Content-Length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise ToolError(f"a reply of {int(declared)} bytes is over the limit of {limit}")
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError("the call's deadline passed")
        chunk = response.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise ToolError(f"a reply over the limit of {limit} bytes")
        chunks.append(chunk)


def _error_text(body: bytes) -> str:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return "no JSON error"
    error = data.get("error") if isinstance(data, dict) else None
    return str(error)[:2000] if error else "no error message"


def _output(body: bytes) -> ToolOutput:
    """A 200 reply: the tool's output, or its failure (`error`: a `ToolError`); a reply that is not the server's
    shape is a `ToolInfrastructureError`."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise ToolInfrastructureError("the reply is not JSON") from None
    if not isinstance(data, dict):
        raise ToolInfrastructureError("the reply is not a JSON object")
    if data.get("error"):
        raise ToolError(str(data["error"]))
    text, image = data.get("text", ""), data.get("image")
    if not isinstance(text, str) or not (image is None or isinstance(image, str)):
        raise ToolInfrastructureError("the reply's text must be a string and its image null or a base64 PNG")
    try:
        return ToolOutput(text, decode_image(image) if image else None)
    except ImageRefused as err:
        raise ToolInfrastructureError(f"the reply's image was refused: {err}") from None


def _send(connection: _Connection | _TlsConnection, method: str, path: str, body: bytes | None,
          headers: Mapping[str, str]) -> None:
    """Send the request; a server that refuses it early (401, 413) and closes while the body is still going out
    has its reply read all the same (`getresponse` raises the original error if there is none)."""
    try:
        connection.request(method, path, body, dict(headers))
    except (BrokenPipeError, ConnectionResetError):
        if connection.raw is None:
            raise


def _server(url: str, token_env: str) -> urllib.parse.SplitResult:
    shown = server_label(url)
    try:
        parts = urllib.parse.urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ToolInfrastructureError(f"the tool server URL {shown} cannot be parsed") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolInfrastructureError(f"the tool server URL must be http://host:port, got {shown}")
    if "@" in parts.netloc:
        raise ToolInfrastructureError(f"the tool server URL {shown} carries user-info: remove it and set {token_env} "
                                      "instead")
    return parts


def _exchange(url: str, method: str, path: str, body: bytes | None, timeout: float, max_reply: int,
              access: ServerAccess) -> tuple[int, bytes]:
    """(status, body) of one request within `timeout` seconds in all; a transport failure is a
    `ToolInfrastructureError` whose text names the server without credentials."""
    deadline = time.monotonic() + timeout
    token, redact = access.token.strip(), access.redact
    shown = server_label(url)
    parts = _server(url, access.token_env)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body or b""))}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection = _connection(parts, deadline)
    try:
        _send(connection, method, f"{parts.path.rstrip('/')}{path}", body, headers)
        response = connection.getresponse()
        reply = _read_reply(response, deadline, max_reply)
    except ToolError as err:
        raise ToolInfrastructureError(redact(f"the tool server at {shown}: {err}")) from None
    except (OSError, http.client.HTTPException, ValueError) as err:
        reason = "no answer within the call's deadline" if isinstance(err, TimeoutError) else \
            f"{err.__class__.__name__}: {err}"
        raise ToolInfrastructureError(redact(f"the tool server at {shown} did not answer ({reason})")) from None
    finally:
        connection.close()
        if connection.raw is not None:
            connection.raw.close()
    return response.status, reply


def call_remote(url: str, call: ToolCall, images: Mapping[str, Image.Image], timeout: float, access: ServerAccess,
                max_reply: int = MAX_MESSAGE_BYTES) -> ToolOutput:
    """The `remote` backend: one call sent to a tool server within `timeout` seconds in all.  The tool's own failure
    and a refusal of the arguments (422, 400, 413) are `ToolError`s; anything else that goes wrong (no answer,
    401, 404, 5xx, a malformed reply) is a `ToolInfrastructureError`.  Texts name the server without credentials."""
    redact = access.redact
    shown = server_label(url)
    body = json.dumps({"arguments": dict(call.arguments),
                       "images": {name: encode_image(image) for name, image in images.items()}}).encode()
    status, reply = _exchange(url, "POST", f"/v1/tools/{urllib.parse.quote(call.tool)}", body, timeout, max_reply,
                              access)
    if status == 422:  # the server's own check of the arguments: its message is for the model
        raise ToolError(redact(_error_text(reply)))
    if status != 200:
        kind = ToolError if status in CALLER_STATUSES else ToolInfrastructureError
        raise kind(redact(f"the tool server at {shown} answered {status}: {_error_text(reply)}"))
    try:
        return _output(reply)
    except ToolError as err:
        kind = type(err) if isinstance(err, ToolInfrastructureError) else ToolError
        raise kind(redact(str(err))) from None


def server_tools(url: str, access: ServerAccess,
                 timeout: float = CHECK_TIMEOUT_S) -> tuple[dict[str, str], dict[str, str]]:
    """`GET /v1/tools`: (the tools the server runs -> its backend, the tools it cannot run -> why).  Any failure
    (no answer, 401, a reply that is not the server's) is a `ToolInfrastructureError` without credentials."""
    redact = access.redact
    shown = server_label(url)
    status, reply = _exchange(url, "GET", "/v1/tools", None, timeout, 1 << 20, access)
    if status == 401:
        raise ToolInfrastructureError(f"the tool server at {shown} refused the token (set {access.token_env} to the "
                                      "token the server was started with)")
    if status != 200:
        raise ToolInfrastructureError(redact(f"the tool server at {shown} answered {status}: {_error_text(reply)}"))
    try:
        data = json.loads(reply)
    except (ValueError, RecursionError):
        data = None
    tools = data.get("tools") if isinstance(data, dict) else None
    missing = data.get("unavailable") or {} if isinstance(data, dict) else None
    if not isinstance(tools, dict) or not isinstance(missing, dict):
        raise ToolInfrastructureError(f"the tool server at {shown} did not answer GET /v1/tools with its tools "
                                      "(is it a tool server of this benchmark?)")
    return ({str(k): str(v) for k, v in tools.items()},
            {str(k): redact(str(v)[:500]) for k, v in missing.items()})
