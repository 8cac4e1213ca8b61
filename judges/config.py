"""Judge endpoint configuration, named presets and secret handling.

Owns: ``JudgeConfig`` (everything the client needs, built from arguments or the environment), the preset
registry (alias -> dated snapshot at temperature 0), ``Secret`` (an API key that never prints), ``redact`` and
``judge_record`` (the judge as a run's results record it, for ``rescore`` to reuse).  The environment is read only
in ``JudgeConfig.from_env`` (never at import).

Environment variables (all optional; precedence: explicit argument > variable > preset > default):

=====================================  ==========================================================================
LMMS_AGENTIC_JUDGE_PRESET              a preset name (``gpt-4o``, ``qwen3-14b-local``): base URL, model, temperature
LMMS_AGENTIC_JUDGE_DECODING            a preset's decoding: ``pinned`` (default: dated snapshot, temperature 0) or
                                       ``as_released`` (what the benchmark's released judge scripts sent)
LMMS_AGENTIC_JUDGE_BASE_URL            OpenAI-compatible base URL (``.../v1``); a full ``.../chat/completions``
                                       URL is used as is.  Separate from the evaluated model's endpoint.
LMMS_AGENTIC_JUDGE_MODEL               model name sent to the server (prefer a dated snapshot)
LMMS_AGENTIC_JUDGE_API_KEY             key; optional for local servers; sent as ``Authorization: Bearer``
LMMS_AGENTIC_JUDGE_API_VERSION         Azure-style: adds ``?api-version=...`` and sends the key as ``api-key``
LMMS_AGENTIC_JUDGE_CACHE               cache directory (default ``~/.cache/lmms_agentic/judge``; ``off`` disables)
LMMS_AGENTIC_JUDGE_CONCURRENCY         parallel requests in ``judge_many`` (default 16)
LMMS_AGENTIC_JUDGE_TIMEOUT             total deadline of one HTTP attempt in seconds, from connecting to the
                                       last byte of the reply (default 60; a finite number > 0, at most 86400)
LMMS_AGENTIC_JUDGE_MAX_REPLY_BYTES     largest reply body accepted, in bytes (default 1048576); a larger reply
                                       is a failed call (transport_error, not retried, not cached)
LMMS_AGENTIC_JUDGE_MAX_RETRIES         retries after the first attempt (default 4)
LMMS_AGENTIC_JUDGE_BACKOFF             base backoff delay in seconds (default 1; doubles per retry, jittered)
LMMS_AGENTIC_JUDGE_MIN_COVERAGE        scored fraction below which coverage warns (default 0.95)
LMMS_AGENTIC_JUDGE_STRICT_COVERAGE     1/true: raise instead of warning on low coverage
LMMS_AGENTIC_JUDGE_BREAKER             circuit breaker: consecutive failed HTTP attempts (no answer in between)
                                       after which the judge is treated as down (default 10; 0 turns it off)
LMMS_AGENTIC_JUDGE_BREAKER_SECONDS     ... and for at least this many seconds without an answer (default 5)
LMMS_AGENTIC_JUDGE_BREAKER_COOLDOWN    seconds between single probe requests while the breaker is open (default 60)
=====================================  ==========================================================================

Temperature is an argument only (default 0; presets pin 0): no variable can silently change sampling.  The one
exception is declared and recorded: ``LMMS_AGENTIC_JUDGE_DECODING=as_released`` swaps a preset's pinned settings for
the released scripts' own (Agent-X: the GPT script calls the undated alias ``gpt-4o`` with no temperature, i.e. the
API default 1.0; the Qwen script samples with Qwen3-14B's generation defaults, temperature 0.6, top_p 0.95, top_k
20); ``describe()`` and every result carry the decoding and the temperature.  Pinned is the default because a rerun
then asks the same question of the same model and gets (nearly) the same score; as released reproduces the
published judge's conditions, run-to-run variance included.

Secrets: the key lives in a ``Secret`` (never printed); ``describe()`` also masks credentials written into the base
URL (``https://user:***@host``, ``?key=***``), so a key pasted into the URL does not reach the logs either.  Every
number is checked when the configuration is built (NaN, infinities and out-of-range values are refused in one line
naming the variable), so ``JudgeClient.judge`` never meets a setting it cannot use.  Removing secrets from replies
and files by value is ``secrets.py``'s.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .secrets import Redactor, url_secrets

__all__ = [
    "DECODINGS",
    "DEFAULT_CACHE_DIR",
    "ENV",
    "PRESETS",
    "JudgeConfig",
    "JudgePreset",
    "Secret",
    "env_flag",
    "get_preset",
    "judge_record",
    "mask_url",
    "redact",
]

DEFAULT_CACHE_DIR = "~/.cache/lmms_agentic/judge"
_PREFIX = "LMMS_AGENTIC_JUDGE_"
ENV = MappingProxyType({
    "preset": _PREFIX + "PRESET", "base_url": _PREFIX + "BASE_URL", "model": _PREFIX + "MODEL",
    "api_key": _PREFIX + "API_KEY", "api_version": _PREFIX + "API_VERSION", "cache_dir": _PREFIX + "CACHE",
    "concurrency": _PREFIX + "CONCURRENCY", "timeout": _PREFIX + "TIMEOUT", "max_retries": _PREFIX + "MAX_RETRIES",
    "backoff_base": _PREFIX + "BACKOFF", "min_coverage": _PREFIX + "MIN_COVERAGE",
    "strict_coverage": _PREFIX + "STRICT_COVERAGE", "breaker_threshold": _PREFIX + "BREAKER",
    "breaker_window": _PREFIX + "BREAKER_SECONDS", "breaker_cooldown": _PREFIX + "BREAKER_COOLDOWN",
    "max_reply_bytes": _PREFIX + "MAX_REPLY_BYTES", "decoding": _PREFIX + "DECODING",
})
DECODINGS = ("pinned", "as_released")
"""Judge decoding of a preset: its pinned settings (default) or the released judge scripts' settings."""
MAX_TIMEOUT = 86_400.0
"""Largest accepted timeout (a day): larger values overflow the socket layer's timers."""
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}
_OFF = {"", "0", "off", "none", "false", "no"}


class Secret:
    """A string that never shows in repr/str/f-strings/logs; ``get()`` returns the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __bool__(self) -> bool:
        return bool(self._value)


def redact(text: str, secrets: Iterable[str | Secret | None]) -> str:
    """Replace every occurrence of each non-empty secret in ``text`` with ``***``."""
    for secret in secrets:
        value = secret.get() if isinstance(secret, Secret) else secret
        if value:
            text = text.replace(value, "***")
    return text


_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^/@:\s]*:)[^/@\s]*@")
_URL_SECRET_PARAM = re.compile(r"(?P<head>[?&](?:[a-z_-]*(?:key|token|secret|sig|signature|password|auth)"
                               r"[a-z_-]*)=)[^&#\s]*", re.IGNORECASE)


def mask_url(url: str) -> str:
    """``url`` with a password in its user-info and the values of key/token-like query parameters masked."""
    url = _URL_PASSWORD.sub(lambda m: m.group("head") + "***@", url)
    return _URL_SECRET_PARAM.sub(lambda m: m.group("head") + "***", url)


@dataclass(frozen=True)
class JudgePreset:
    """A named judge: a dated model snapshot at a base URL, temperature 0 (``pinned``), and the settings the
    released judge scripts used with it (``as_released``: their model name, temperature and extra fields)."""

    name: str
    model: str
    base_url: str
    temperature: float = 0.0
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    """Extra request fields (e.g. vLLM ``chat_template_kwargs``)."""
    description: str = ""
    released_model: str = ""
    released_temperature: float = 0.0
    released_extra_body: Mapping[str, Any] = field(default_factory=dict)

    def settings(self, decoding: str) -> dict[str, Any]:
        """Model, temperature and extra request fields under ``decoding`` (``pinned`` or ``as_released``)."""
        if decoding not in DECODINGS:
            raise ValueError(f"{ENV['decoding']}={decoding!r}: expected one of {', '.join(DECODINGS)}")
        if decoding == "as_released":
            return {"model": self.released_model or self.model, "temperature": self.released_temperature,
                    "extra_body": self.released_extra_body}
        return {"model": self.model, "temperature": self.temperature, "extra_body": self.extra_body}


PRESETS: Mapping[str, JudgePreset] = MappingProxyType({
    # as released: Agent-X's evaluation/run_eval_gpt_as_judge.py sends model "gpt-4o" and no temperature (the API
    # default, 1.0); evaluation/run_eval_qwen_as_judge.py samples with the checkpoint's generation defaults.
    "gpt-4o": JudgePreset(
        "gpt-4o", "gpt-4o-2024-08-06", "https://api.openai.com/v1",
        description="OpenAI GPT-4o pinned to the 2024-08-06 snapshot (Agent-X's GPT judge, pinned)",
        released_model="gpt-4o", released_temperature=1.0,
    ),
    "qwen3-14b-local": JudgePreset(
        "qwen3-14b-local", "Qwen/Qwen3-14B", "http://127.0.0.1:8000/v1",
        extra_body=MappingProxyType({"chat_template_kwargs": MappingProxyType({"enable_thinking": False})}),
        description="Qwen3-14B on a local vLLM server (`vllm serve Qwen/Qwen3-14B --port 8000`), thinking off",
        released_temperature=0.6,
        released_extra_body=MappingProxyType({
            "top_p": 0.95, "top_k": 20,
            "chat_template_kwargs": MappingProxyType({"enable_thinking": False})}),
    ),
})


def get_preset(name: str) -> JudgePreset:
    """The preset called ``name``; an unknown name raises KeyError with "did you mean" suggestions."""
    try:
        return PRESETS[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(PRESETS), n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise KeyError(f"unknown judge preset {name!r}{hint} (known: {', '.join(sorted(PRESETS))})") from None


def _env_hint(name: str) -> str:
    return f"set by {ENV[name]} or the JudgeConfig argument" if name in ENV else "a JudgeConfig argument"


def env_flag(value: str, name: str) -> bool:
    """Parse a boolean environment value (1/true/yes/on, 0/false/no/off/empty); else ValueError."""
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ValueError(f"{name}={value!r}: expected 1/0, true/false, yes/no or on/off")


def _number(env: Mapping[str, str], key: str, kind: type[int] | type[float]) -> int | float | None:
    raw = env.get(ENV[key], "").strip()
    if not raw:
        return None
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{ENV[key]}={raw!r} is not a valid {kind.__name__}") from None
    if not math.isfinite(value):
        raise ValueError(f"{ENV[key]}={raw!r} is not a finite number; set a plain number such as 60 or unset it")
    return value


@dataclass(frozen=True)
class JudgeConfig:
    """Judge endpoint and client behaviour.  ``repr`` never shows the key."""

    base_url: str | None = None
    model: str | None = None
    api_key: Secret | str | None = None
    api_version: str | None = None
    preset: str | None = None
    temperature: float = 0.0
    decoding: str = "pinned"
    """``pinned`` or ``as_released`` (a preset's released settings; see the module docstring)."""
    max_tokens: int = 1024
    timeout: float = 60.0
    max_retries: int = 4
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    retry_after_max: float = 120.0
    concurrency: int = 16
    cache_dir: Path | str | None = DEFAULT_CACHE_DIR
    min_coverage: float = 0.95
    strict_coverage: bool = False
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    breaker_threshold: int = 10
    """Consecutive failed HTTP attempts (timeouts, connection errors, 429/5xx, 401/403/404, unreadable bodies; no
    answer in between) after which the judge is treated as down: 0 turns the circuit breaker off."""
    breaker_window: float = 5.0
    """... and the failures must span at least this many seconds without an answer (a burst of 429s under a rate
    limit, answered again a second later, does not open the breaker; 401/403/404/405/407 need no time)."""
    breaker_cooldown: float = 60.0
    """While open, one probe request (a single attempt) is let through this often; an answer closes the breaker."""
    max_reply_bytes: int = 1_048_576
    """Largest reply body accepted (after decompression); a larger one is a failed call, never stored."""

    def __post_init__(self) -> None:
        if isinstance(self.api_key, str):
            object.__setattr__(self, "api_key", Secret(self.api_key) if self.api_key else None)
        if self.base_url is not None:
            object.__setattr__(self, "base_url", self.base_url.strip().rstrip("/") or None)
        for name in ("timeout", "backoff_base", "backoff_max", "retry_after_max", "breaker_window",
                     "breaker_cooldown", "min_coverage", "temperature"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"judge setting {name}={value!r} is not a finite number ({_env_hint(name)})")
        if not 0 < self.timeout <= MAX_TIMEOUT:
            raise ValueError(f"judge setting timeout={self.timeout!r}: must be > 0 and at most {MAX_TIMEOUT:g} "
                             f"seconds ({_env_hint('timeout')})")
        if self.concurrency < 1 or self.max_retries < 0 or self.backoff_base < 0 or self.max_reply_bytes < 1:
            raise ValueError("judge settings: concurrency >= 1, max_retries >= 0, backoff_base >= 0 and "
                             f"max_reply_bytes >= 1 are needed, got {self.concurrency}, {self.max_retries}, "
                             f"{self.backoff_base}, {self.max_reply_bytes}")
        if not 0.0 <= self.min_coverage <= 1.0:
            raise ValueError(f"min_coverage must be in [0, 1], got {self.min_coverage}")
        if self.breaker_threshold < 0 or self.breaker_window < 0 or self.breaker_cooldown < 0:
            raise ValueError("breaker_threshold, breaker_window and breaker_cooldown must be >= 0")
        if self.decoding not in DECODINGS:
            raise ValueError(f"judge decoding {self.decoding!r}: expected one of {', '.join(DECODINGS)} "
                             f"({ENV['decoding']})")

    @property
    def key(self) -> str | None:
        """The API key value (for the HTTP layer only)."""
        return self.api_key.get() if isinstance(self.api_key, Secret) and self.api_key else None

    @property
    def configured(self) -> bool:
        """True when both a base URL and a model are known."""
        return bool(self.base_url and self.model)

    @property
    def endpoint(self) -> str:
        """The chat-completions URL."""
        if not self.base_url:
            raise ValueError("no judge base URL configured")
        parts = urllib.parse.urlsplit(self.base_url)  # (a query, e.g. ?api_key=..., stays after the path)
        path = parts.path.rstrip("/")
        path = path if path.endswith("/chat/completions") else path + "/chat/completions"
        return urllib.parse.urlunsplit(parts._replace(path=path))

    @property
    def cache_path(self) -> Path | None:
        """The cache directory with ``~`` expanded, or None when caching is off."""
        return Path(self.cache_dir).expanduser() if self.cache_dir not in (None, "") else None

    def headers(self) -> dict[str, str]:
        """HTTP headers (contain the key: never log them)."""
        headers = {"Content-Type": "application/json"}
        if self.key:
            if self.api_version:
                headers["api-key"] = self.key
            else:
                headers["Authorization"] = f"Bearer {self.key}"
        return headers

    def params(self) -> dict[str, str]:
        """Query parameters (Azure-style ``api-version``)."""
        return {"api-version": self.api_version} if self.api_version else {}

    def describe(self) -> str:
        """One-line summary for logs (no key, only whether one is set)."""
        base_url = redact(mask_url(self.base_url), [self.api_key]) if self.base_url else None
        return (f"judge model={self.model!r} base_url={base_url!r} preset={self.preset!r} "
                f"decoding={self.decoding} temperature={self.temperature} api_version={self.api_version!r} "
                f"key={'set' if self.key else 'unset'} cache={str(self.cache_path) if self.cache_path else 'off'} "
                f"concurrency={self.concurrency} timeout={self.timeout}s retries={self.max_retries} "
                f"breaker={self._breaker_text()}")

    def _breaker_text(self) -> str:
        if not self.breaker_threshold:
            return "off"
        return (f"{self.breaker_threshold} failures/{self.breaker_window:g}s "
                f"(probe every {self.breaker_cooldown:g}s)")

    def __repr__(self) -> str:
        return f"JudgeConfig({self.describe()})"

    def with_overrides(self, **changes: Any) -> JudgeConfig:
        """A copy with ``changes`` applied (None values ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> JudgeConfig:
        """Build from ``environ`` (default ``os.environ``) and keyword ``overrides`` (None = not given,
        except ``cache_dir=None``, which disables the cache).

        Raises ValueError naming the variable on a malformed value, KeyError on an unknown preset."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        preset_name = overrides.get("preset") or env.get(ENV["preset"], "").strip() or None
        decoding = overrides.get("decoding") or env.get(ENV["decoding"], "").strip().lower() or "pinned"
        if preset_name:
            preset = get_preset(preset_name)
            values.update(preset=preset.name, base_url=preset.base_url, decoding=decoding,
                          **preset.settings(decoding))
        elif decoding != "pinned":
            raise ValueError(f"{ENV['decoding']}={decoding!r} needs a judge preset ({ENV['preset']}="
                             f"{' or '.join(PRESETS)}): the released scripts' settings are known only for those")
        for key in ("base_url", "model", "api_key", "api_version"):
            raw = env.get(ENV[key], "").strip()
            if raw:
                values[key] = raw
        if ENV["cache_dir"] in env:
            raw = env[ENV["cache_dir"]].strip()
            values["cache_dir"] = None if raw.lower() in _OFF else raw
        for key, kind in (("concurrency", int), ("max_retries", int), ("timeout", float),
                          ("backoff_base", float), ("min_coverage", float), ("breaker_threshold", int),
                          ("breaker_window", float), ("breaker_cooldown", float), ("max_reply_bytes", int)):
            number = _number(env, key, kind)
            if number is not None:
                values[key] = number
        if ENV["strict_coverage"] in env:
            values["strict_coverage"] = env_flag(env[ENV["strict_coverage"]], ENV["strict_coverage"])
        values.update({k: v for k, v in overrides.items() if v is not None and k != "preset"})
        if "cache_dir" in overrides:  # an explicit cache_dir=None turns the cache off
            values["cache_dir"] = overrides["cache_dir"]
        return cls(**values)


def judge_record(environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The judge configured in ``environ`` (default ``os.environ``) as a run's results store it under
    ``lmms_agentic.judge``: preset, base_url, model, decoding, temperature, api_version.  Never the key: credentials
    in the URL become ``***`` (user-info and key-like parameters, plus the key and the URL's secrets by value).
    None when no judge is configured; a malformed setting raises as ``JudgeConfig.from_env`` does."""
    config = JudgeConfig.from_env(environ)
    if not config.configured:
        return None
    base_url = config.base_url or ""
    record = {"preset": config.preset, "base_url": redact(mask_url(base_url), [config.key]), "model": config.model,
              "decoding": config.decoding, "temperature": config.temperature, "api_version": config.api_version}
    secrets = url_secrets(base_url) + ([config.key] if config.key else [])
    return dict(Redactor(secrets).data(record))
