"""Which backend runs each Agent-X tool (`RuntimeConfig`), read from `LMMS_AGENTIC_AGENTX_TOOLS` and
`LMMS_AGENTIC_AGENTX_TOOL_SERVER` (the rules are in `runtime.py`'s docstring); a bad setting is one `ValueError` line.
Also the secrets a runtime so configured removes from every observation (`runtime_redactor`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lmms_agentic.judges.config import mask_url
from lmms_agentic.judges.secrets import Redactor, redactor
from lmms_agentic.tasks.agentx.core.release_data import TOOL_NAMES
from lmms_agentic.tasks.agentx.tools.local import LOCAL_TOOLS
from lmms_agentic.tasks.agentx.tools.model_tools import ENV_VLM_URL, MODEL_TOOLS, vlm_secrets
from lmms_agentic.tasks.agentx.tools.remote import ENV_TOKEN

BACKENDS = ("local", "model", "replay", "remote")
ENV_BACKENDS = "LMMS_AGENTIC_AGENTX_TOOLS"
ENV_SERVER = "LMMS_AGENTIC_AGENTX_TOOL_SERVER"


@dataclass(frozen=True)
class RuntimeConfig:
    backends: Mapping[str, str]
    server_url: str | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, server_side: bool = False) -> RuntimeConfig:
        env = os.environ if environ is None else environ
        chosen = {tool: ("local" if tool in LOCAL_TOOLS else "model" if server_side and tool in MODEL_TOOLS
                         else "replay") for tool in TOOL_NAMES}
        raw = env.get(ENV_BACKENDS, "").strip()
        entries = [e.strip() for e in raw.split(",") if e.strip()]
        default = next((e.split("=", 1)[1].strip() for e in entries if e.startswith("*=")), None)
        if default == "remote":  # tools with no real backend anywhere (MathOCR, WebSearch) stay on replay
            chosen = {tool: "remote" if tool in LOCAL_TOOLS or tool in MODEL_TOOLS else "replay" for tool in TOOL_NAMES}
        elif default is not None:
            chosen = dict.fromkeys(TOOL_NAMES, default)
        for entry in entries:
            tool, _, backend = entry.partition("=")
            tool, backend = tool.strip(), backend.strip()
            if tool == "*":
                continue
            if tool not in TOOL_NAMES or backend not in BACKENDS:
                raise ValueError(f"{ENV_BACKENDS}: bad entry {entry!r}; expected <tool>=<backend> with a tool of "
                                 f"{', '.join(TOOL_NAMES)} and a backend of {', '.join(BACKENDS)}")
            chosen[tool] = backend
        for tool, backend in chosen.items():
            if backend not in BACKENDS:
                raise ValueError(f"{ENV_BACKENDS}: backend {backend!r} for {tool}; known: {', '.join(BACKENDS)}")
            if backend == "local" and tool not in LOCAL_TOOLS:
                raise ValueError(f"{ENV_BACKENDS}: {tool} has no local backend (local tools: {', '.join(LOCAL_TOOLS)})")
            if backend == "model" and tool not in MODEL_TOOLS:
                raise ValueError(f"{ENV_BACKENDS}: {tool} has no model backend (model tools: {', '.join(MODEL_TOOLS)})")
        if server_side and "remote" in chosen.values():
            raise ValueError(f"{ENV_BACKENDS}: a tool server runs tools itself; 'remote' is not allowed there")
        server = env.get(ENV_SERVER, "").strip() or None
        if "remote" in chosen.values() and server is None:
            raise ValueError(f"{ENV_BACKENDS} sends tools to a tool server: set {ENV_SERVER}=http://host:port")
        return cls(chosen, server)

    def describe(self) -> dict[str, Any]:
        return {"backends": dict(self.backends), "server_url": mask_url(self.server_url) if self.server_url else None}


def runtime_redactor(config: RuntimeConfig, environ: Mapping[str, str]) -> Redactor:
    """Every secret of `environ` and the process (`judges.secrets`), plus the VLM endpoint's URL credentials and
    key (the variable `LMMS_AGENTIC_AGENTX_VLM_API_KEY_ENV` names), the tool-server URL and token."""
    return redactor(config.server_url, environ.get(ENV_VLM_URL), *vlm_secrets(environ), environ.get(ENV_TOKEN),
                    environ=environ)
