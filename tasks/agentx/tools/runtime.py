"""The tool runtime: one bound call -> one observation, under the tool's limits, on the configured backend.

Backends per tool (`RuntimeConfig.backends`; recorded in every sample and in the results file):
`local` (CPU tools, `local.py`), `model` (detector / VLM / diffusion, `model_tools.py`), `replay` (the gold trace's
recorded output, `replay.py`) and `remote` (the same call sent to a tool server, `server.py`).  Defaults: `local`
for Calculator, Solver, CodePlotter, DrawBoundingBox, OverlayText and OCR; `replay` for every other tool (on a
tool server: `model` for the model tools).  Configuration:
`LMMS_AGENTIC_AGENTX_TOOLS="LocateObjectByText=model,SceneDescriber=remote,*=replay"` (a `*` entry sets every
tool not named; named entries win) and `LMMS_AGENTIC_AGENTX_TOOL_SERVER=http://host:port` for `remote`.

Limits (`LIMITS`): a wall-clock limit for every tool; the sandboxed tools also get CPU seconds and an address-space
cap in their subprocess; in-process tools get input caps (`MAX_PIXELS`, `MAX_TEXT`) since a thread cannot be
capped, and a call past its wall limit is answered with a time-limit observation (its thread is abandoned).
Observations never raise: bad arguments, tool errors, limits and unavailable tools are all text for the model.
Local tools are pure functions of their arguments and images, so a repeated call (same tool, arguments and image
content digests) is answered from a per-process memo (`Observation.cached`).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from lmms_agentic.tasks.agentx.core.release_data import TOOL_NAMES
from lmms_agentic.tasks.agentx.tools import replay as replay_backend
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, catalogue
from lmms_agentic.tasks.agentx.tools.local import LOCAL_TOOLS, OcrEngine, ToolError, ToolOutput, run_local
from lmms_agentic.tasks.agentx.tools.model_tools import MODEL_TOOLS, ModelTools
from lmms_agentic.tasks.agentx.tools.remote import call_remote
from lmms_agentic.tasks.agentx.tools.sandbox import Limits, Sandbox

BACKENDS = ("local", "model", "replay", "remote")
ENV_BACKENDS = "LMMS_AGENTIC_AGENTX_TOOLS"
ENV_SERVER = "LMMS_AGENTIC_AGENTX_TOOL_SERVER"
MAX_PIXELS = 40_000_000
MAX_TEXT = 20_000
MAX_OBSERVATION = 4_000
LIMITS: dict[str, Limits] = {
    "Calculator": Limits(wall_s=2), "Solver": Limits(wall_s=15, cpu_s=8, mem_mb=1536),
    "CodePlotter": Limits(wall_s=15, cpu_s=8, mem_mb=1536), "DrawBoundingBox": Limits(wall_s=5),
    "OverlayText": Limits(wall_s=5), "OCR": Limits(wall_s=60),
}
DEFAULT_LIMITS = Limits(wall_s=120)


@dataclass(frozen=True)
class Observation:
    """What one call returned: `status` is ok | error | unavailable; `image` is a new visual when not None."""

    text: str
    status: str
    backend: str
    seconds: float
    image: Image.Image | None = None
    gold_step: int | None = None
    cached: bool = False


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
        if default is not None:
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
        return {"backends": dict(self.backends), "server_url": self.server_url}


def _check_inputs(call: BoundCall, images: Mapping[str, Image.Image]) -> None:
    for name, image in images.items():
        if image.width * image.height > MAX_PIXELS:
            raise ToolError(f"{name} has {image.width}x{image.height} pixels; the limit is {MAX_PIXELS}")
    for name, value in call.arguments.items():
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise ToolError(f"{name} has {len(value)} characters; the limit is {MAX_TEXT}")


@dataclass
class ToolRuntime:
    """Executes calls; thread-safe (the batched loop runs the calls of one round concurrently)."""

    config: RuntimeConfig = field(default_factory=RuntimeConfig.from_env)
    sandbox_warm: int = 2
    _sandbox: Sandbox | None = None
    _ocr: OcrEngine = field(default_factory=OcrEngine)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    models: ModelTools = field(default_factory=ModelTools)
    _memo: dict[str, tuple[ToolOutput, str]] = field(default_factory=dict)
    _key_locks: dict[str, threading.Lock] = field(default_factory=dict)
    _pool: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(16, thread_name_prefix="agentx-tool"))

    def sandbox(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox(warm=self.sandbox_warm)
            return self._sandbox

    def clear_memo(self) -> None:
        with self._lock:
            self._memo.clear()

    def _key_lock(self, key: str) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def describe(self) -> dict[str, Any]:
        sandboxed = any(self.config.backends.get(t) == "local" for t in ("Solver", "CodePlotter"))
        return {**self.config.describe(), "limits": {t: vars(LIMITS.get(t, DEFAULT_LIMITS)) for t in TOOL_NAMES},
                "sandbox": self.sandbox().describe() if sandboxed else None}

    def _run(self, doc: Mapping[str, Any], call: BoundCall, images: Mapping[str, Image.Image], backend: str,
             used: Sequence[int]) -> tuple[ToolOutput, int | None]:
        limits = LIMITS.get(call.tool, DEFAULT_LIMITS)
        if backend == "local":
            return run_local(call.tool, call.arguments, images, sandbox=self.sandbox(), ocr=self._ocr,
                             limits=limits), None
        if backend == "model":
            return self.models.run(call.tool, call.arguments, images), None
        if backend == "remote":
            assert self.config.server_url is not None
            return call_remote(self.config.server_url, call, images, limits.wall_s), None
        found = replay_backend.replay(doc, call.tool, call.arguments, used)
        if found is None:
            raise LookupError(replay_backend.unavailable(call.tool))
        position, text = found
        if catalogue()[call.tool].image_output:
            text = f"[replayed from the reference trace; no image in replay] {text}"
        return ToolOutput(text), position

    def execute(self, doc: Mapping[str, Any], call: BoundCall, visuals: Sequence[Image.Image],
                used_gold_steps: Sequence[int] = ()) -> Observation:
        """Run one call under its wall-clock limit; every failure is an observation.  Concurrent identical local
        calls run once (the others wait for its memo entry)."""
        backend = self.config.backends[call.tool]
        images = {name: visuals[index] for name, index in call.images.items()}
        if backend == "local":
            key = _memo_key(call, images)  # hashed once per call: the images' pixels are the costly part
            with self._key_lock(key):
                return self._execute(doc, call, images, backend, used_gold_steps, key)
        return self._execute(doc, call, images, backend, used_gold_steps, None)

    def _execute(self, doc: Mapping[str, Any], call: BoundCall, images: Mapping[str, Image.Image], backend: str,
                 used_gold_steps: Sequence[int], key: str | None) -> Observation:
        limit = LIMITS.get(call.tool, DEFAULT_LIMITS).wall_s
        started = time.perf_counter()
        if key is not None and key in self._memo:
            output, status = self._memo[key]
            return Observation(output.text, status, backend, time.perf_counter() - started, output.image,
                               cached=True)
        try:
            _check_inputs(call, images)
            future = self._pool.submit(self._run, doc, call, images, backend, tuple(used_gold_steps))
            output, gold = future.result(timeout=limit + (5.0 if call.tool in ("Solver", "CodePlotter") else 0.0))
        except concurrent.futures.TimeoutError:
            return Observation(f"Error: {call.tool} exceeded its time limit of {limit:g} s.", "error", backend,
                               time.perf_counter() - started)
        except LookupError as err:
            return Observation(str(err.args[0]), "unavailable", backend, time.perf_counter() - started)
        except ToolError as err:
            if key is not None:
                self._memo[key] = (ToolOutput(f"Error: {call.tool}: {err}"), "error")
            return Observation(f"Error: {call.tool}: {err}", "error", backend, time.perf_counter() - started)
        except Exception as err:  # a backend failure (server down, model error) is an observation too
            return Observation(f"Error: {call.tool} failed ({err.__class__.__name__}: {err})"[:MAX_OBSERVATION],
                               "error", backend, time.perf_counter() - started)
        text = output.text if len(output.text) <= MAX_OBSERVATION else output.text[:MAX_OBSERVATION] + " [truncated]"
        if key is not None:
            self._memo[key] = (ToolOutput(text, output.image), "ok")
        return Observation(text, "ok", backend, time.perf_counter() - started, output.image, gold)


def _memo_key(call: BoundCall, images: Mapping[str, Image.Image]) -> str:
    digest = hashlib.sha256(json.dumps([call.tool, dict(call.arguments)], sort_keys=True, default=str).encode())
    for name in sorted(images):
        image = images[name]
        digest.update(f"{name}:{image.mode}:{image.size}".encode())
        digest.update(image.tobytes())
    return digest.hexdigest()


_DEFAULT: ToolRuntime | None = None
_DEFAULT_LOCK = threading.Lock()


def default_runtime() -> ToolRuntime:
    """The per-process runtime, configured from the environment on first use."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = ToolRuntime()
        return _DEFAULT


def reset_default_runtime() -> None:
    """Forget the per-process runtime (tests change the environment between runs)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is not None and _DEFAULT._sandbox is not None:
            _DEFAULT._sandbox.close()
        _DEFAULT = None
