"""Request limits and checks of a benchmark's tool server, apart from any socket (shared by every tool server).

Owns `ServerLimits` (body, image, worker, connection and time limits), the bind rule (`check_bind`: a token is
required unless the server binds a loopback address), the token (`load_token`, `check_token`, `authorised`, a
constant-time comparison; `TokenRule`: the benchmark's token variable and what its server runs, both named in
messages), the request body's declared length (`declared_length`) and its validation
(`parse_call`), `Budget` (bytes of request bodies held at once) and `HttpError`, the one way a check refuses a
request (a status and a message for the JSON reply).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any

from lmms_agentic.adapters.agentic.tool_client import MAX_IMAGE_PIXELS, MAX_MESSAGE_BYTES

MIN_TOKEN_CHARS = 16


@dataclass(frozen=True)
class TokenRule:
    """A benchmark's server token: the variable that holds it, what the server serves and the tool through which
    whoever reaches the port could run code (both shown when a token is missing)."""

    env_token: str
    serves: str
    code_tool: str

    @property
    def hint(self) -> str:
        return (f"set {self.env_token} or pass --token-file PATH (a file holding the token, e.g. written by "
                "`python -c \"import secrets; print(secrets.token_urlsafe(32))\"`)")


@dataclass(frozen=True)
class ServerLimits:
    """What one server accepts; past a limit a request gets a 4xx/503 JSON reply, never a dropped connection."""

    max_body: int = MAX_MESSAGE_BYTES
    """Largest request body (bytes); the declared length is checked before anything is read."""
    max_images: int = 4
    max_pixels: int = MAX_IMAGE_PIXELS
    """Per image, checked on the PNG header before any pixel is decoded."""
    max_workers: int = 4
    """Calls decoding images or running a tool at once; the others wait (up to `queue_wait_s`, then 503)."""
    max_connections: int = 256
    """Open connections (one thread each); past it a new connection is answered 503 and closed at once."""
    header_timeout_s: float = 10.0
    """Time from the connection's start to the end of its headers (idle and slow connections are closed)."""
    min_body_rate: float = float(1 << 20)
    """Slowest accepted body upload (bytes/s): the body must arrive within header_timeout_s + length / rate."""
    inflight_bytes: int = 256 << 20
    """Request bodies held at once (read, parsed or decoded); a body that does not fit waits like a call."""
    queue_wait_s: float = 120.0
    write_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if min(self.max_body, self.max_images, self.max_pixels, self.max_workers, self.max_connections) < 1:
            raise ValueError("tool server limits must be positive")
        if self.inflight_bytes < self.max_body:
            raise ValueError("inflight_bytes must hold at least one body of max_body bytes")


class HttpError(Exception):
    """A refused request: `status` (4xx/5xx) and the message of its JSON `{"error": ...}` reply."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def is_loopback(host: str) -> bool:
    """True for `localhost` and addresses in 127.0.0.0/8 or ::1 (an IPv4-mapped one too); false for any other
    name (it may resolve anywhere) and for the wildcard addresses."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def check_token(token: str, rule: TokenRule) -> None:
    if token and len(token) < MIN_TOKEN_CHARS:
        raise ValueError(f"the tool server token has {len(token)} characters; use at least {MIN_TOKEN_CHARS} "
                         f"({rule.hint})")


def check_bind(host: str, token: str, rule: TokenRule) -> None:
    """Refuse a non-loopback address without a token: whoever reaches the port could run code."""
    if not token and not is_loopback(host):
        raise ValueError(f"refusing to serve {rule.serves} on {host or 'every address'} without a token (anyone "
                         f"who reaches the port could run code through {rule.code_tool}): {rule.hint}, or bind "
                         "127.0.0.1")


def load_token(token_file: Path | None, rule: TokenRule, environ: Mapping[str, str] | None = None) -> str:
    """The token from `token_file` (first line, stripped) if given, else from the variable `rule` names."""
    env = os.environ if environ is None else environ
    if token_file is None:
        token = env.get(rule.env_token, "").strip()
    else:
        try:
            lines = token_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"--token-file {token_file}: cannot read it ({err.__class__.__name__})") from None
        token = lines[0].strip() if lines else ""
        if not token:
            raise ValueError(f"--token-file {token_file} is empty")
    check_token(token, rule)
    return token


def authorised(header: str | None, token: str) -> bool:
    """Whether an `Authorization` header carries `token` (always true when there is no token)."""
    if not token:
        return True
    given = (header or "").encode("utf-8", "surrogateescape")
    return hmac.compare_digest(given, f"Bearer {token}".encode("utf-8", "surrogateescape"))


def declared_length(headers: Message, max_body: int) -> int:
    """The request's `Content-Length`, refused before any byte of the body is read: missing 411, not a single
    non-negative decimal integer 400, over `max_body` 413."""
    values = headers.get_all("Content-Length") or []
    if not values:
        raise HttpError(411, "a Content-Length header is required")
    written = {value.strip() for value in values}
    if len(written) != 1 or not re.fullmatch(r"[0-9]{1,20}", next(iter(written))):
        raise HttpError(400, "Content-Length must be one non-negative integer")
    length = int(next(iter(written)))
    if length > max_body:
        raise HttpError(413, f"a body of {length} bytes is over the limit of {max_body}")
    return length


def parse_call(raw: bytes, limits: ServerLimits) -> tuple[dict[str, Any], dict[str, str]]:
    """A request body -> (arguments, base64 images by argument name); every malformed shape is a 400."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise HttpError(400, "the body is not JSON") from None
    if not isinstance(data, dict):
        raise HttpError(400, 'the body must be a JSON object {"arguments": {...}, "images": {...}}')
    unknown = sorted(str(key) for key in data if key not in ("arguments", "images"))
    if unknown:
        raise HttpError(400, f"unknown field(s) {', '.join(unknown)[:200]}; expected arguments and images")
    arguments = data.get("arguments")
    images = data.get("images")
    arguments = {} if arguments is None else arguments
    images = {} if images is None else images
    if not isinstance(arguments, dict):
        raise HttpError(400, "arguments must be a JSON object")
    if not isinstance(images, dict) or not all(isinstance(value, str) for value in images.values()):
        raise HttpError(400, "images must be a JSON object of base64 PNG strings")
    if len(images) > limits.max_images:
        raise HttpError(413, f"{len(images)} images; the limit is {limits.max_images}")
    return arguments, images


class Budget:
    """A count of bytes that requests hold at once; `hold` waits for room (bounded), else a 503."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.used = capacity, 0
        self._room = threading.Condition()

    @contextlib.contextmanager
    def hold(self, amount: int, wait_s: float) -> Iterator[None]:
        with self._room:
            if not self._room.wait_for(lambda: self.used + amount <= self.capacity, timeout=wait_s):
                raise HttpError(503, "the tool server is busy; try again")
            self.used += amount
        try:
            yield
        finally:
            with self._room:
                self.used -= amount
                self._room.notify_all()
