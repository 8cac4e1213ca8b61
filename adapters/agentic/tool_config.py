"""Which backend runs each tool of a benchmark (`RuntimeConfig`), read from the benchmark's environment variables.

A benchmark declares its tools once (`ToolsSpec`: names, which have a `local` or a `model` backend, the variables
that configure them).  Backends: `local` (in this process or its sandbox), `model` (a model or an endpoint),
`replay` (the reference trace's recorded output) and `remote` (a tool server).  Defaults: `local` for the local
tools, `replay` for every other (on a tool server: `model` for the model tools).  The backends variable reads
`"ToolA=model,ToolB=remote,*=replay"`: a `*` entry sets every tool not named (`*=remote` leaves the tools with
neither a local nor a model backend, which no server runs, on replay); named entries win.  `remote` needs the
server variable (`http://host:port`); a tool server's own runtime (`server_side`) refuses `remote`.  A bad setting
is one `ValueError` line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

BACKENDS = ("local", "model", "replay", "remote")
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^/@:\s]*:)[^/@\s]*@")
_URL_SECRET_PARAM = re.compile(r"(?P<head>[?&](?:[a-z_-]*(?:key|token|secret|sig|signature|password|auth)"
                               r"[a-z_-]*)=)[^&#\s]*", re.IGNORECASE)


@dataclass(frozen=True)
class ToolsSpec:
    """A benchmark's tools as the runtime needs them: `label` names the benchmark in logs and messages."""

    label: str
    tools: tuple[str, ...]
    local_tools: tuple[str, ...]
    model_tools: tuple[str, ...]
    env_backends: str
    env_server: str
    env_token: str


def mask_url(url: str) -> str:
    """``url`` with a password in its user-info and the values of key/token-like query parameters masked (the rule
    of `judges.config.mask_url`, which the shared layer cannot import)."""
    url = _URL_PASSWORD.sub(lambda m: m.group("head") + "***@", url)
    return _URL_SECRET_PARAM.sub(lambda m: m.group("head") + "***", url)


@dataclass(frozen=True)
class RuntimeConfig:
    backends: Mapping[str, str]
    server_url: str | None = None

    @classmethod
    def from_env(cls, spec: ToolsSpec, environ: Mapping[str, str] | None = None,
                 server_side: bool = False) -> RuntimeConfig:
        env = os.environ if environ is None else environ
        local, model, name = spec.local_tools, spec.model_tools, spec.env_backends
        chosen = {tool: ("local" if tool in local else "model" if server_side and tool in model else "replay")
                  for tool in spec.tools}
        entries = [e.strip() for e in env.get(name, "").strip().split(",") if e.strip()]
        default = next((e.split("=", 1)[1].strip() for e in entries if e.startswith("*=")), None)
        if default == "remote":  # tools with no real backend anywhere stay on replay
            chosen = {tool: "remote" if tool in local or tool in model else "replay" for tool in spec.tools}
        elif default is not None:
            chosen = dict.fromkeys(spec.tools, default)
        for entry in entries:
            tool, _, backend = entry.partition("=")
            tool, backend = tool.strip(), backend.strip()
            if tool == "*":
                continue
            if tool not in spec.tools or backend not in BACKENDS:
                raise ValueError(f"{name}: bad entry {entry!r}; expected <tool>=<backend> with a tool of "
                                 f"{', '.join(spec.tools)} and a backend of {', '.join(BACKENDS)}")
            chosen[tool] = backend
        for tool, backend in chosen.items():
            if backend not in BACKENDS:
                raise ValueError(f"{name}: backend {backend!r} for {tool}; known: {', '.join(BACKENDS)}")
            if backend == "local" and tool not in local:
                raise ValueError(f"{name}: {tool} has no local backend (local tools: {', '.join(local)})")
            if backend == "model" and tool not in model:
                raise ValueError(f"{name}: {tool} has no model backend (model tools: {', '.join(model)})")
        if server_side and "remote" in chosen.values():
            raise ValueError(f"{name}: a tool server runs tools itself; 'remote' is not allowed there")
        server = env.get(spec.env_server, "").strip() or None
        if "remote" in chosen.values() and server is None:
            raise ValueError(f"{name} sends tools to a tool server: set {spec.env_server}=http://host:port")
        return cls(chosen, server)

    def describe(self) -> dict[str, Any]:
        return {"backends": dict(self.backends), "server_url": mask_url(self.server_url) if self.server_url else None}
