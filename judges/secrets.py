"""Every secret this process knows, and its removal by value from whatever is written.

Owns: which values count as secrets (``known_secrets``), the forms in which each can show up in text
(``secret_forms``), and ``Redactor``, which replaces each of them with ``***`` in a string or in JSON-like data.

A secret is, by value:
* the judge key, and any key registered with ``register`` (the client registers its key);
* the value of an environment variable whose name has a segment ``KEY``, ``APIKEY``, ``TOKEN``, ``SECRET``,
  ``PASSWORD``, ``PASSWD`` or ``CREDENTIALS`` (``OPENAI_API_KEY``, ``HF_TOKEN``, ``LMMS_AGENTIC_JUDGE_API_KEY``:
  the evaluated model's key where it is known, too);
* the credentials written into any URL registered or held by an environment variable: the password of the
  user-info (and ``user:password``, and its Base64 form, which is how an HTTP client sends it as Basic auth), and
  the value of every query parameter named like a credential (``api_key``, ``key``, ``token``, ``sig``, ...).

Each secret is removed in every form a reply, a repr or a log line can carry it: as is, JSON-escaped,
``repr``-escaped, ``unicode_escape``d and percent-encoded.  Values shorter than ``MIN_SECRET_CHARS`` are not
removed by value (a 3-character password would turn every occurrence of those letters into ``***``); credentials
in URLs are masked wherever a URL is printed (``config.mask_url``) whatever their length.
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MIN_SECRET_CHARS", "Redactor", "known_secrets", "redactor", "register", "secret_forms", "url_secrets"]

MIN_SECRET_CHARS = 8
_SECRET_SEGMENTS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS"})
_SECRET_PARAM = re.compile(r"[a-z_-]*(?:key|token|secret|sig|signature|password|auth)[a-z_-]*", re.IGNORECASE)
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://\S+")

_registered: set[str] = set()
_lock = threading.Lock()


def register(*values: str | None) -> None:
    """Add keys or URLs (their credentials are extracted) to the secrets of this process."""
    with _lock:
        _registered.update(v for v in values if v)


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url``: user-info password (alone, as ``user:password`` and Base64-encoded)
    and the values of credential-like query parameters."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
    except ValueError:
        return []
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        user, _, password = userinfo.partition(":")
        for raw in {userinfo, urllib.parse.unquote(userinfo)}:
            found.append(raw)
            found.append(base64.b64encode(raw.encode("utf-8", "surrogatepass")).decode("ascii"))
        if password:
            found += [password, urllib.parse.unquote(password)]
        elif user:
            found += [user, urllib.parse.unquote(user)]  # a token written as the user name
    for pair in parts.query.split("&"):  # (as written: the URL may encode the value its own way)
        name, _, written = pair.partition("=")
        if _SECRET_PARAM.fullmatch(urllib.parse.unquote_plus(name)):
            value = urllib.parse.unquote_plus(written)
            found += [written, value, urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value)]
    return [f for f in found if f]


def _secret_name(name: str) -> bool:
    return any(segment in _SECRET_SEGMENTS for segment in name.upper().split("_"))


def known_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """Registered keys and URL credentials, plus those found in ``environ`` (default ``os.environ``)."""
    env = os.environ if environ is None else environ
    with _lock:
        values = set(_registered)
    found: set[str] = set()
    for value in values:
        found.update(url_secrets(value) if "://" in value else [value])
    for name, value in env.items():
        if _secret_name(name):
            found.add(value.strip())
        if "://" in value:
            for url in _URL.findall(value):
                found.update(url_secrets(url))
    return {f for f in found if len(f) >= MIN_SECRET_CHARS}


def secret_forms(secret: str) -> set[str]:
    """The ways ``secret`` can appear in text: as is, JSON-, repr- and unicode-escaped, percent-encoded."""
    forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], repr(secret)[1:-1],
             secret.encode("unicode_escape").decode("ascii"), urllib.parse.quote(secret, safe=""),
             urllib.parse.quote_plus(secret)}
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


class Redactor:
    """Replaces every form of each secret with ``***`` (longest first, so a secret inside another goes too)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {form for secret in secrets if len(secret) >= MIN_SECRET_CHARS for form in secret_forms(secret)}
        self.forms = tuple(sorted(forms, key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self.forms)

    def text(self, text: str) -> str:
        for form in self.forms:
            if form in text:
                text = text.replace(form, "***")
        return text

    def data(self, value: Any) -> Any:
        """``value`` with every string in it (dict keys included, through dicts, lists and tuples) redacted."""
        if not self.forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value


def redactor(*extra: str | None, environ: Mapping[str, str] | None = None) -> Redactor:
    """A ``Redactor`` for every known secret, plus ``extra`` keys or URLs."""
    secrets = known_secrets(environ)
    for value in extra:
        if value:
            secrets.update(url_secrets(value) if "://" in value else [value])
    return Redactor(secrets)
