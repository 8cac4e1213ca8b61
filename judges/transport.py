"""One HTTP exchange with the judge under a total deadline and a reply-size cap.

Owns: the ``httpx.Client`` the judge client uses (``build_http``) and ``exchange``, which posts one request and
returns the status, headers and body bytes, or raises ``ReplyTooLarge`` / an ``httpx`` error.

Deadline: ``JudgeConfig.timeout`` bounds the whole attempt (connect, sending, waiting for the headers and reading
the body), not each read: httpx applies its timeout to every single socket read, so a server that sends one byte
every 0.25 s would keep a request with a 2 s timeout alive for as long as it likes.  The socket layer of the
connection pool is wrapped (``_DeadlineBackend``) so that every read and write of a request waits at most for the
time left before the request's deadline (a thread-local, set by ``exchange``); past it, the read fails as an
``httpx.ReadTimeout``.  The body is also checked against the deadline between chunks, so the deadline holds even
where the wrapper cannot be installed (a proxy from the environment: then it holds at the body, not the headers).

Size cap: ``JudgeConfig.max_reply_bytes`` bounds the body after decompression (a ``Content-Length`` above it
fails before reading; a body that grows past it is cut off), so a runaway or hostile judge cannot fill the cache
and the sample logs with megabytes per item.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

__all__ = ["DeadlineExceeded", "Exchange", "ReplyTooLarge", "build_http", "exchange"]

_local = threading.local()


class ReplyTooLarge(Exception):
    """The reply body is larger than the configured cap."""


class DeadlineExceeded(httpx.TimeoutException):
    """The request's total deadline passed while its body was still arriving."""


def _left(timeout: float | None, kind: str) -> float | None:
    deadline: float | None = getattr(_local, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        error = {"read": httpcore.ReadTimeout, "write": httpcore.WriteTimeout}.get(kind, httpcore.ConnectTimeout)
        raise error("the request's total deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose reads and writes never wait past the current request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, "read"))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, "write"))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout, "connect")))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's socket backend, with every stream it opens wrapped in ``_DeadlineStream``."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_tcp(host, port, _left(timeout, "connect"), local_address,
                                                       socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.connect_unix_socket(path, _left(timeout, "connect"), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _install_deadlines(transport: httpx.BaseTransport) -> bool:
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None or isinstance(backend, _DeadlineBackend):
        return backend is not None
    pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
    return True


def build_http(timeout: float, concurrency: int) -> httpx.Client:
    """The HTTP client: ``timeout`` per phase (httpx), the request deadline on top (``exchange``)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    transport = httpx.HTTPTransport(limits=limits)
    _install_deadlines(transport)
    return httpx.Client(timeout=httpx.Timeout(timeout), transport=transport)


@dataclass(frozen=True)
class Exchange:
    """What came back: status, headers and the (decompressed) body."""

    status: int
    headers: httpx.Headers
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@contextlib.contextmanager
def _deadline(at: float) -> Iterator[None]:
    previous = getattr(_local, "deadline", None)
    _local.deadline = at
    try:
        yield
    finally:
        _local.deadline = previous


def exchange(http: httpx.Client, url: str, *, json: Any, headers: Mapping[str, str], params: Mapping[str, str],
             timeout: float, max_bytes: int) -> Exchange:
    """POST ``json`` to ``url`` and read the reply within ``timeout`` seconds in all and ``max_bytes`` of body.

    Raises ``ReplyTooLarge``, ``DeadlineExceeded`` or another ``httpx`` error (timeouts: ``httpx.TimeoutException``)."""
    deadline = time.monotonic() + timeout
    with _deadline(deadline), http.stream("POST", url, json=json, headers=dict(headers),
                                          params=dict(params)) as response:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise ReplyTooLarge(f"the reply announces {int(declared):,} bytes, more than the cap of "
                                f"{max_bytes:,} bytes")
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise ReplyTooLarge(f"the reply is larger than the cap of {max_bytes:,} bytes")
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise DeadlineExceeded("the request's total deadline passed while the reply was arriving")
        return Exchange(response.status_code, response.headers, b"".join(chunks))
