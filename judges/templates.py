"""Versioned judge prompt templates and judge requests.

Owns: ``PromptTemplate`` (id, version, system prompt, user template with ``{{field}}`` placeholders, the
strict reply parser, JSON mode) and ``JudgeRequest`` (a template plus field values plus the caller's item id).

Every field is *untrusted* unless the template lists it in ``trusted``: untrusted values (the evaluated
model's output, always) are fenced as data blocks (``fencing.fence``: unique delimiter lines, delimiter
look-alikes neutralised) and the user message starts with ``fencing.DATA_NOTICE``.  Trusted fields (question,
options, ground truth from the dataset) are inserted verbatim.  Substitution is a single regex pass, so text
inside a value is never re-read as a placeholder; the system prompt is static (no placeholders), which keeps
verbatim published prompts byte-identical.  The parser reads only the judge's reply, never this prompt.

Change anything about a template or its parser -> bump ``version`` (it is part of every cache key and result).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .fencing import DATA_NOTICE, fence
from .parsers import ReplyParser

__all__ = ["JudgeRequest", "PromptTemplate"]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]*")


@dataclass(frozen=True)
class PromptTemplate:
    """A judge prompt: static ``system`` text, a ``user`` template and the parser for the reply."""

    id: str
    """Stable identifier, e.g. "agentx/goal_accuracy" or "mcq_fallback"."""
    version: str
    """Bumped on every change to the prompt or the parser."""
    user: str
    """User message with ``{{field}}`` placeholders."""
    parser: ReplyParser
    """Strict parser applied to the judge's reply."""
    system: str | None = None
    """Static system prompt (no placeholders), or None."""
    trusted: frozenset[str] = frozenset()
    """Fields inserted verbatim; every other field is fenced as untrusted data."""
    json_mode: bool = False
    """Send ``response_format={"type": "json_object"}`` (the prompt must mention JSON)."""
    max_tokens: int | None = None
    """Per-template completion budget; None uses the client's default."""

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id) or not self.version.strip():
            raise ValueError(f"template needs an id like 'bench/metric' and a version, "
                             f"got {self.id!r}@{self.version!r}")
        if self.system is not None and _PLACEHOLDER.search(self.system):
            raise ValueError(f"template {self.id}: the system prompt must be static (no {{{{field}}}})")
        if not isinstance(self.parser, ReplyParser):
            raise TypeError(f"template {self.id}: parser must implement ReplyParser (spec + __call__)")
        unknown = set(self.trusted) - set(self.fields)
        if unknown:
            raise ValueError(f"template {self.id}: trusted fields not in the template: {sorted(unknown)}")

    @property
    def fields(self) -> tuple[str, ...]:
        """Placeholder names in order of first appearance."""
        return tuple(dict.fromkeys(_PLACEHOLDER.findall(self.user)))

    @property
    def untrusted(self) -> tuple[str, ...]:
        """Fields that are fenced as data."""
        return tuple(f for f in self.fields if f not in self.trusted)

    @property
    def digest(self) -> str:
        """SHA-256 over everything that defines the template (text, trust, parser spec, JSON mode); computed once
        per template (every request's cache key and every cache lookup read it)."""
        cached: str | None = self.__dict__.get("_digest")
        if cached is None:
            cached = self._compute_digest()
            object.__setattr__(self, "_digest", cached)  # (frozen dataclass: a private memo, not a field)
        return cached

    def _compute_digest(self) -> str:
        payload = {
            "id": self.id, "version": self.version, "system": self.system, "user": self.user,
            "trusted": sorted(self.trusted), "parser": self.parser.spec, "json_mode": self.json_mode,
            "max_tokens": self.max_tokens,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def render(self, values: Mapping[str, str]) -> list[dict[str, str]]:
        """Chat messages for ``values`` (exactly the template's fields, all str)."""
        expected = set(self.fields)
        missing, extra = expected - set(values), set(values) - expected
        if missing or extra:
            raise ValueError(f"template {self.id}: missing fields {sorted(missing)}, unexpected {sorted(extra)}")
        for name, value in values.items():
            if not isinstance(value, str):
                raise TypeError(f"template {self.id}: field {name!r} must be str, got {type(value).__name__}")

        def substitute(m: re.Match[str]) -> str:
            name = m.group(1)
            return values[name] if name in self.trusted else fence(name, values[name])

        user = _PLACEHOLDER.sub(substitute, self.user)
        if self.untrusted:
            user = f"{DATA_NOTICE}\n\n{user}"
        messages = [{"role": "system", "content": self.system}] if self.system is not None else []
        messages.append({"role": "user", "content": user})
        return messages


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call: a template, its field values and the caller's stable item id (for logs and joins)."""

    template: PromptTemplate
    values: Mapping[str, str] = field(default_factory=dict)
    item_id: str | None = None
