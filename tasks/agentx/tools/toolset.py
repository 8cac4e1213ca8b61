"""The 14 Agent-X tools registered with the shared tool runtime (`adapters/agentic/tool_runtime.py`).

Backends per tool (recorded in every sample and in the results file): `local` (CPU tools, `local.py`), `model`
(detector / VLM / diffusion, `model_tools.py`), `replay` (the gold trace's recorded output, `replay.py`) and
`remote` (the same call sent to a tool server, `server.py`).  Defaults: `local` for Calculator, Solver,
CodePlotter, DrawBoundingBox, OverlayText and OCR; `replay` for every other tool (on a tool server: `model` for the
model tools).  Configuration: `LMMS_AGENTIC_AGENTX_TOOLS="LocateObjectByText=model,SceneDescriber=remote,*=replay"`
(a `*` entry sets every tool not named, except that `*=remote` leaves MathOCR and WebSearch, which no server runs,
on replay; named entries win) and `LMMS_AGENTIC_AGENTX_TOOL_SERVER=http://host:port` for `remote`
(`adapters/agentic/tool_config.py` reads them).

`AgentXTools` is what the runtime asks of a benchmark: the per-tool limits (`LIMITS`: the sandboxed tools also get
CPU seconds and an address-space cap in their subprocess), the sandbox and OCR engine of the local tools, the model
backends, replay against the gold steps, the secrets to scrub (`judges.secrets`: secret-named environment variables,
URL credentials, the VLM key and the tool-server token), the tool server's start-up check (`unready`: a model
tool's settings and package, the sandbox for the code tools, rapidocr for OCR; `replay` never runs on a server) and
the facts for the results file (limits, sandbox, the diffusion settings of a pipeline loaded during the run).
`agentx_runtime` builds a runtime over it; `default_runtime` is the per-process one.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from lmms_agentic.adapters.agentic import tool_runtime
from lmms_agentic.adapters.agentic.tool_client import ServerAccess
from lmms_agentic.adapters.agentic.tool_config import RuntimeConfig, ToolsSpec
from lmms_agentic.adapters.agentic.tool_io import Limits, ToolCall, ToolOutput
from lmms_agentic.adapters.agentic.tool_runtime import ReplayMiss, ToolRuntime
from lmms_agentic.judges.secrets import redactor
from lmms_agentic.tasks.agentx.core.release_data import TOOL_NAMES
from lmms_agentic.tasks.agentx.tools import remote
from lmms_agentic.tasks.agentx.tools import replay as replay_backend
from lmms_agentic.tasks.agentx.tools.catalogue import catalogue
from lmms_agentic.tasks.agentx.tools.local import LOCAL_TOOLS, SANDBOXED_TOOLS, OcrEngine, run_local
from lmms_agentic.tasks.agentx.tools.model_tools import ENV_VLM_URL, MODEL_TOOLS, ModelTools, vlm_secrets
from lmms_agentic.tasks.agentx.tools.sandbox import Sandbox, unavailable_text

ENV_BACKENDS = "LMMS_AGENTIC_AGENTX_TOOLS"
ENV_SERVER = "LMMS_AGENTIC_AGENTX_TOOL_SERVER"
RESULTS_KEY = "agentx_tools"
"""The results file's entry the runtime's description is recorded under (`execution.RUNTIME_KEY`)."""
SPEC = ToolsSpec(RESULTS_KEY, TOOL_NAMES, LOCAL_TOOLS, MODEL_TOOLS, ENV_BACKENDS, ENV_SERVER, remote.ENV_TOKEN)
SANDBOX_GRACE_S = 5.0
"""Extra wait for a sandboxed tool's subprocess (start-up, teardown) on top of its wall-clock limit."""
LIMITS: dict[str, Limits] = {
    "Calculator": Limits(wall_s=2, cpu_s=2, mem_mb=512), "Solver": Limits(wall_s=15, cpu_s=8, mem_mb=1536),
    "CodePlotter": Limits(wall_s=15, cpu_s=8, mem_mb=1536), "DrawBoundingBox": Limits(wall_s=5),
    "OverlayText": Limits(wall_s=5), "OCR": Limits(wall_s=60),
}
DEFAULT_LIMITS = Limits(wall_s=120)


def config_from_env(environ: Mapping[str, str] | None = None, server_side: bool = False) -> RuntimeConfig:
    """The Agent-X tools' backends from `LMMS_AGENTIC_AGENTX_TOOLS` / `_TOOL_SERVER` (a bad one: `ValueError`)."""
    return RuntimeConfig.from_env(SPEC, environ, server_side)


@dataclass
class AgentXTools:
    """Agent-X's `Toolset` (`tool_runtime.Toolset`): thread-safe; the sandbox starts on first use."""

    sandbox_warm: int = 2
    models: ModelTools = field(default_factory=ModelTools)
    spec: ToolsSpec = SPEC
    _sandbox: Sandbox | None = None
    _ocr: OcrEngine = field(default_factory=OcrEngine)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def sandbox(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox(warm=self.sandbox_warm)
            return self._sandbox

    def close(self) -> None:
        with self._lock:
            box, self._sandbox = self._sandbox, None
        if box is not None:
            box.close()

    def limits(self, tool: str) -> Limits:
        return LIMITS.get(tool, DEFAULT_LIMITS)

    def grace_s(self, tool: str, backend: str) -> float:
        return SANDBOX_GRACE_S if backend == "local" and tool in SANDBOXED_TOOLS else 0.0

    def run(self, backend: str, doc: Mapping[str, Any], call: ToolCall, images: Mapping[str, Image.Image],
            used: Sequence[int], n_inputs: int | None) -> tuple[ToolOutput, int | None]:
        if backend == "local":
            return run_local(call.tool, call.arguments, images, sandbox=self.sandbox(), ocr=self._ocr,
                             limits=self.limits(call.tool)), None
        if backend == "model":
            return self.models.run(call.tool, call.arguments, images), None
        found = replay_backend.replay(doc, call.tool, call.arguments, used, images=call.images, n_inputs=n_inputs)
        if found is None:
            raise ReplayMiss(replay_backend.unavailable(call.tool))
        position, text = found
        if catalogue()[call.tool].image_output:
            text = f"[replayed from the reference trace; no image in replay] {text}"
        return ToolOutput(text), position

    def scrubber(self, config: RuntimeConfig) -> Callable[[str], str]:
        """Every secret of the environment (`judges.secrets`), plus the VLM endpoint's URL credentials and key (the
        variable `LMMS_AGENTIC_AGENTX_VLM_API_KEY_ENV` names), the tool-server URL and token."""
        environ = {**os.environ, **self.models.environ}
        return redactor(config.server_url, environ.get(ENV_VLM_URL), *vlm_secrets(environ),
                        environ.get(remote.ENV_TOKEN), environ=environ).text

    def access(self, url: str) -> ServerAccess:
        return remote.access(url)

    def unready(self, config: RuntimeConfig) -> dict[str, str]:
        out: dict[str, str] = {}
        for tool, backend in config.backends.items():
            reason: str | None = None
            if backend == "model":
                reason = self.models.missing(tool)
            elif backend == "replay":
                reason = "a tool server has no reference trace to replay"
            elif backend == "local" and tool in SANDBOXED_TOOLS:
                box = self.sandbox()
                reason = None if box.available() else unavailable_text(box.reason or "unknown")
            elif backend == "local" and tool == "OCR" and importlib.util.find_spec("rapidocr_onnxruntime") is None:
                reason = "OCR needs rapidocr-onnxruntime (pip install -e '.[tools]' in a checkout)"
            if reason is not None:
                out[tool] = f"{backend}: {reason}"
        return out

    def diffusion_settings(self, config: RuntimeConfig) -> dict[str, dict[str, Any]]:
        """The settings of the diffusion tools on the `model` backend (checkpoint, seed; pipeline, steps and
        guidance once loaded)."""
        return {tool: settings for tool, settings in self.models.diffusion_settings().items()
                if config.backends.get(tool) == "model"}

    def describe(self, config: RuntimeConfig) -> dict[str, Any]:
        sandboxed = any(config.backends.get(t) == "local" for t in SANDBOXED_TOOLS)
        return {"diffusion": self.diffusion_settings(config),
                "limits": {t: vars(self.limits(t)) for t in TOOL_NAMES},
                "sandbox": self.sandbox().describe() if sandboxed else None}


def agentx_runtime(config: RuntimeConfig | None = None, *, sandbox_warm: int = 2, models: ModelTools | None = None,
                   **kwargs: Any) -> ToolRuntime:
    """A runtime over the Agent-X tools (`config`: from the environment when None; `kwargs`: the runtime's memo
    bounds)."""
    tools = AgentXTools(sandbox_warm=sandbox_warm, models=models if models is not None else ModelTools())
    return ToolRuntime(tools, config if config is not None else config_from_env(), **kwargs)


def tools_of(runtime: ToolRuntime) -> AgentXTools:
    """The Agent-X toolset a runtime runs."""
    assert isinstance(runtime.toolset, AgentXTools)
    return runtime.toolset


def default_runtime() -> ToolRuntime:
    """The per-process runtime, configured from the environment on first use."""
    return tool_runtime.default_runtime(SPEC.label)


def default_failures() -> dict[str, dict[str, int]]:
    """The per-process runtime's infrastructure failures ({} when it was never made)."""
    made = tool_runtime.default_made(SPEC.label)
    return made.failures.counts() if made is not None else {}


def reset_default_runtime() -> None:
    """Forget the per-process runtime (tests change the environment between runs)."""
    tool_runtime.reset_default_runtime(SPEC.label)


tool_runtime.register_toolset(SPEC.label, agentx_runtime)
