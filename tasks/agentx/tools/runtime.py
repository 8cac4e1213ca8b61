"""The tool runtime: one bound call -> one observation, under the tool's limits, on the configured backend.

Backends per tool (`RuntimeConfig.backends`; recorded in every sample and in the results file):
`local` (CPU tools, `local.py`), `model` (detector / VLM / diffusion, `model_tools.py`), `replay` (the gold trace's
recorded output, `replay.py`) and `remote` (the same call sent to a tool server, `server.py`).  Defaults: `local`
for Calculator, Solver, CodePlotter, DrawBoundingBox, OverlayText and OCR; `replay` for every other tool (on a
tool server: `model` for the model tools).  Configuration:
`LMMS_AGENTIC_AGENTX_TOOLS="LocateObjectByText=model,SceneDescriber=remote,*=replay"` (a `*` entry sets every
tool not named, except that `*=remote` leaves MathOCR and WebSearch, which no server runs, on replay; named entries
win) and `LMMS_AGENTIC_AGENTX_TOOL_SERVER=http://host:port` for `remote`.

Limits (`LIMITS`): a wall-clock limit for every tool; the sandboxed tools also get CPU seconds and an address-space
cap in their subprocess; in-process tools get input caps (`MAX_PIXELS`, `MAX_TEXT`) since a thread cannot be
capped, and a call past its wall limit is answered with a time-limit observation (its thread is abandoned).
Observations never raise: bad arguments, tool errors (any exception a tool raises), limits and unavailable tools
are all text for the model; only a `KeyboardInterrupt` raised inside a tool stops the run.  A failure outside the
call (`ToolInfrastructureError`: a backend's setting, model, endpoint or tool server) is status `unavailable` with
the neutral `<Tool> is unavailable right now.`; its reason goes to the log and `failures` (`availability.py`), never
to the model.  With `remote` tools, `check_server` (run by the round loop before the first model call) stops a run
whose server cannot serve them, and records the server's backend per tool (`remote:model`) for the observations and
the results file.  The diffusion tools' settings (`ModelTools.diffusion_settings`) are in the description, which the
results file gets at the end of the run (so with the steps and guidance of a pipeline loaded during it).  Local
tools are pure functions of their arguments and images, so a repeated call (same tool, arguments and image content
digests) is answered from a per-process memo (`Observation.cached`): an LRU of at most `MEMO_ENTRIES` entries and
`MEMO_BYTES` bytes (an image counts width x height x channels).

Secrets and bounds: every observation text, from every backend and ok or not, has every secret the runtime knows
removed (`judges.secrets`: secret-named environment variables, URL credentials, the VLM key and tool-server token)
before it leaves `execute`, then is made valid UTF-8 and capped at `MAX_OBSERVATION` characters.  An output image
larger than `MAX_OUTPUT_PIXELS` (or than the call's largest input image, if that is larger) is refused with an
error observation rather than downscaled, so coordinates the model reads off it stay true.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from lmms_agentic.adapters.agentic.steps import utf8_text
from lmms_agentic.judges.secrets import Redactor
from lmms_agentic.tasks.agentx.core.release_data import TOOL_NAMES
from lmms_agentic.tasks.agentx.tools import replay as replay_backend
from lmms_agentic.tasks.agentx.tools.availability import Failures, check_server, unready
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, catalogue
from lmms_agentic.tasks.agentx.tools.errors import ToolInfrastructureError, unavailable_text
from lmms_agentic.tasks.agentx.tools.local import (
    SANDBOXED_TOOLS,
    OcrEngine,
    ToolError,
    ToolOutput,
    ToolUnavailable,
    run_local,
)
from lmms_agentic.tasks.agentx.tools.model_tools import ModelTools
from lmms_agentic.tasks.agentx.tools.remote import call_remote
from lmms_agentic.tasks.agentx.tools.runtime_config import RuntimeConfig, runtime_redactor
from lmms_agentic.tasks.agentx.tools.sandbox import Limits, Sandbox

MAX_PIXELS = 40_000_000
MAX_TEXT = 20_000
MAX_OBSERVATION = 4_000
MAX_OUTPUT_PIXELS = 4096 * 4096
MEMO_BYTES = 256 * 2**20
MEMO_ENTRIES = 4096
SANDBOX_GRACE_S = 5.0
"""Extra wait for a sandboxed tool's subprocess (start-up, teardown) on top of its wall-clock limit."""
REMOTE_GRACE_S = 10.0
"""Extra time a remote call gets on top of the tool's limit, so the server's own time-limit answer arrives."""
LIMITS: dict[str, Limits] = {
    "Calculator": Limits(wall_s=2, cpu_s=2, mem_mb=512), "Solver": Limits(wall_s=15, cpu_s=8, mem_mb=1536),
    "CodePlotter": Limits(wall_s=15, cpu_s=8, mem_mb=1536), "DrawBoundingBox": Limits(wall_s=5),
    "OverlayText": Limits(wall_s=5), "OCR": Limits(wall_s=60),
}
DEFAULT_LIMITS = Limits(wall_s=120)
RESULTS_KEY = "agentx_tools"
"""The results file's entry the runtime's description is recorded under (`execution.RUNTIME_KEY`; not imported:
`execution` imports this module)."""
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Observation:
    """What one call returned: `status` is ok | error | unavailable; `image` is a new visual when not None;
    `reason`: why the tool was unavailable when the cause lies outside the call (never shown to the model)."""

    text: str
    status: str
    backend: str
    seconds: float
    image: Image.Image | None = None
    gold_step: int | None = None
    cached: bool = False
    reason: str | None = None


def _check_inputs(call: BoundCall, images: Mapping[str, Image.Image]) -> None:
    for name, image in images.items():
        if image.width * image.height > MAX_PIXELS:
            raise ToolError(f"{name} has {image.width}x{image.height} pixels; the limit is {MAX_PIXELS}")
    for name, value in call.arguments.items():
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise ToolError(f"{name} has {len(value)} characters; the limit is {MAX_TEXT}")


def _check_output(tool: str, output: object, images: Mapping[str, Image.Image]) -> ToolOutput:
    """The backend's output if it is a well-formed `ToolOutput` whose image is within the output cap."""
    if not isinstance(output, ToolOutput):
        raise ToolError(f"the backend returned {type(output).__name__}, not a tool output")
    text = output.text if isinstance(output.text, str) else str(output.text)
    image = output.image
    if image is not None:
        if not isinstance(image, Image.Image):
            raise ToolError(f"the backend returned {type(image).__name__} as its image")
        allowed = max([MAX_OUTPUT_PIXELS, *(i.width * i.height for i in images.values())])
        if image.width * image.height > allowed:
            raise ToolError(f"{tool} produced a {image.width}x{image.height} image; output images are limited to "
                            f"{allowed:,} pixels")
    return ToolOutput(text, image)


def _weight(output: ToolOutput) -> int:
    image = output.image
    pixels = 0 if image is None else image.width * image.height * len(image.getbands())
    return len(output.text.encode("utf-8", "replace")) + pixels


class MemoCache:
    """The memo of local tools' outputs: least recently used first out, at most `max_entries` entries and
    `max_bytes` bytes (`_weight`); an entry larger than `max_bytes` is not kept.  Thread-safe."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries, self.max_bytes, self.bytes = max_entries, max_bytes, 0
        self._entries: OrderedDict[str, tuple[ToolOutput, str, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> tuple[ToolOutput, str] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0], found[1]

    def put(self, key: str, output: ToolOutput, status: str) -> None:
        size = _weight(output)
        with self._lock:
            old = self._entries.pop(key, None)
            self.bytes -= old[2] if old else 0
            if size > self.max_bytes:
                return
            self._entries[key] = (output, status, size)
            self.bytes += size
            while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
                self.bytes -= self._entries.popitem(last=False)[1][2]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


class ReplayMiss(LookupError):
    """No step of the reference trace answers this call (an `unavailable` observation)."""


class _KeyLock:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


def _describe_error(err: BaseException) -> str:
    try:
        text = str(err)
    except Exception:  # an exception whose message cannot be built is still an observation
        text = "(no message)"
    return f"{err.__class__.__name__}: {text[:2 * MAX_OBSERVATION]}" if text else err.__class__.__name__


@dataclass
class ToolRuntime:
    """Executes calls; thread-safe (the batched loop runs the calls of one round concurrently)."""

    config: RuntimeConfig = field(default_factory=RuntimeConfig.from_env)
    sandbox_warm: int = 2
    _sandbox: Sandbox | None = None
    _ocr: OcrEngine = field(default_factory=OcrEngine)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    models: ModelTools = field(default_factory=ModelTools)
    memo_entries: int = MEMO_ENTRIES
    memo_bytes: int = MEMO_BYTES
    _memo: MemoCache = field(init=False)
    _redactor: Redactor = field(init=False)
    _key_locks: dict[str, _KeyLock] = field(default_factory=dict)
    _pool: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(16, thread_name_prefix="agentx-tool"))
    failures: Failures = field(default_factory=Failures)
    _served: dict[str, str] | None = None

    def __post_init__(self) -> None:
        self._memo = MemoCache(self.memo_entries, self.memo_bytes)
        self._redactor = runtime_redactor(self.config, {**os.environ, **self.models.environ})

    def sandbox(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox(warm=self.sandbox_warm)
            return self._sandbox

    def clear_memo(self) -> None:
        self._memo.clear()

    def memo_size(self) -> tuple[int, int]:
        """(entries, bytes) held by the memo now."""
        return len(self._memo), self._memo.bytes

    @contextlib.contextmanager
    def _exclusive(self, key: str) -> Iterator[None]:
        """Hold the lock of one memo key (dropped when no call waits on it, so the locks stay bounded too)."""
        with self._lock:
            entry = self._key_locks.setdefault(key, _KeyLock())
            entry.users += 1
        try:
            with entry.lock:
                yield
        finally:
            with self._lock:
                entry.users -= 1
                if not entry.users:
                    del self._key_locks[key]

    def check_server(self) -> None:
        """Check the tool server once, if any tool is `remote` (`availability.check_server`: raises
        `ToolServerError`, one line, when it cannot serve them)."""
        with self._lock:
            if self._served is None:
                self._served = check_server(self.config)

    def unready(self) -> dict[str, str]:
        """The tools this runtime cannot run -> why (a tool server's start-up check)."""
        return unready(self.config, self.models, self.sandbox)

    def backend_used(self, tool: str) -> str:
        """The tool's backend; a `remote` one with the server's backend for it once checked (`remote:model`)."""
        backend = self.config.backends[tool]
        served = (self._served or {}).get(tool)
        return f"{backend}:{served}" if backend == "remote" and served else backend

    def describe(self) -> dict[str, Any]:
        sandboxed = any(self.config.backends.get(t) == "local" for t in SANDBOXED_TOOLS)
        return {**self.config.describe(), "backends_used": {t: self.backend_used(t) for t in self.config.backends},
                "diffusion": self.diffusion_settings(),
                "limits": {t: vars(LIMITS.get(t, DEFAULT_LIMITS)) for t in TOOL_NAMES},
                "sandbox": self.sandbox().describe() if sandboxed else None,
                "bounds": {"memo_entries": self.memo_entries, "memo_bytes": self.memo_bytes,
                           "max_output_pixels": MAX_OUTPUT_PIXELS, "max_observation_chars": MAX_OBSERVATION}}

    def diffusion_settings(self) -> dict[str, dict[str, Any]]:
        """The settings of the diffusion tools on the `model` backend (checkpoint, seed; pipeline, steps and guidance
        once loaded)."""
        return {tool: settings for tool, settings in self.models.diffusion_settings().items()
                if self.config.backends.get(tool) == "model"}

    def _run(self, doc: Mapping[str, Any], call: BoundCall, images: Mapping[str, Image.Image], backend: str,
             used: Sequence[int], n_inputs: int | None) -> tuple[ToolOutput, int | None]:
        limits = LIMITS.get(call.tool, DEFAULT_LIMITS)
        if backend == "local":
            return run_local(call.tool, call.arguments, images, sandbox=self.sandbox(), ocr=self._ocr,
                             limits=limits), None
        if backend == "model":
            return self.models.run(call.tool, call.arguments, images), None
        if backend == "remote":
            assert self.config.server_url is not None
            return call_remote(self.config.server_url, call, images, limits.wall_s + REMOTE_GRACE_S), None
        found = replay_backend.replay(doc, call.tool, call.arguments, used, images=call.images, n_inputs=n_inputs)
        if found is None:
            raise ReplayMiss(replay_backend.unavailable(call.tool))
        position, text = found
        if catalogue()[call.tool].image_output:
            text = f"[replayed from the reference trace; no image in replay] {text}"
        return ToolOutput(text), position

    def execute(self, doc: Mapping[str, Any], call: BoundCall, visuals: Sequence[Image.Image],
                used_gold_steps: Sequence[int] = (), n_inputs: int | None = None) -> Observation:
        """Run one call under its wall-clock limit; every failure is an observation.  Concurrent identical local
        calls run once (the others wait for its memo entry).  `n_inputs`: how many of `visuals` are the task's own
        inputs (replay matches only those; None: read from the document)."""
        backend = self.config.backends[call.tool]
        images = {name: visuals[index] for name, index in call.images.items()}
        if backend == "local":
            key = _memo_key(call, images)  # hashed once per call: the images' pixels are the costly part
            with self._exclusive(key):
                return self._execute(doc, call, images, backend, used_gold_steps, key, n_inputs)
        observed = self._execute(doc, call, images, backend, used_gold_steps, None, n_inputs)
        used = self.backend_used(call.tool)
        return observed if used == backend else dataclasses.replace(observed, backend=used)

    def _observe(self, text: str, status: str, backend: str, started: float, image: Image.Image | None = None,
                 gold: int | None = None, cached: bool = False) -> Observation:
        """The observation as the model and the logs see it: secrets removed, valid UTF-8, capped."""
        text = utf8_text(self._redactor.text(text))
        if len(text) > MAX_OBSERVATION:
            text = text[:MAX_OBSERVATION] + " [truncated]"
        return Observation(text, status, backend, time.perf_counter() - started, image, gold, cached)

    def _execute(self, doc: Mapping[str, Any], call: BoundCall, images: Mapping[str, Image.Image], backend: str,
                 used_gold_steps: Sequence[int], key: str | None, n_inputs: int | None = None) -> Observation:
        limit = LIMITS.get(call.tool, DEFAULT_LIMITS).wall_s
        started = time.perf_counter()
        hit = self._memo.get(key) if key is not None else None
        if hit is not None:
            return self._observe(hit[0].text, hit[1], backend, started, hit[0].image, cached=True)
        try:
            _check_inputs(call, images)
            future = self._pool.submit(self._run, doc, call, images, backend, tuple(used_gold_steps), n_inputs)
            grace = SANDBOX_GRACE_S if backend == "local" and call.tool in SANDBOXED_TOOLS else \
                REMOTE_GRACE_S + 1.0 if backend == "remote" else 0.0
            failure = future.exception(timeout=limit + grace)
            if failure is not None:
                return self._failed(call, failure, backend, started, key)
            raw, gold = future.result()
            output = _check_output(call.tool, raw, images)
        except concurrent.futures.TimeoutError:
            return self._observe(f"Error: {call.tool} exceeded its time limit of {limit:g} s.", "error", backend,
                                 started)
        except Exception as err:  # bad inputs or output (ToolError), a pool shut down at interpreter exit
            return self._failed(call, err, backend, started, key)
        observed = self._observe(output.text, "ok", backend, started, output.image, gold)
        if key is not None:
            self._memo.put(key, ToolOutput(observed.text, output.image), "ok")
        return observed

    def _failed(self, call: BoundCall, failure: BaseException, backend: str, started: float,
                key: str | None) -> Observation:
        """The observation of a call whose tool raised `failure` (only a `KeyboardInterrupt` is re-raised)."""
        if isinstance(failure, KeyboardInterrupt):
            raise failure
        if isinstance(failure, ToolInfrastructureError):
            reason = utf8_text(self._redactor.text(str(failure) or failure.__class__.__name__))
            self.failures.add(call.tool, reason)
            observed = self._observe(unavailable_text(call.tool), "unavailable", backend, started)
            return dataclasses.replace(observed, reason=reason)
        if isinstance(failure, ToolUnavailable):
            return self._observe(f"Error: {call.tool}: {failure}", "unavailable", backend, started)
        if isinstance(failure, ReplayMiss):
            return self._observe(str(failure.args[0]), "unavailable", backend, started)
        if isinstance(failure, ToolError):
            observed = self._observe(f"Error: {call.tool}: {failure}", "error", backend, started)
            if key is not None:
                self._memo.put(key, ToolOutput(observed.text), "error")
            return observed
        if not isinstance(failure, Exception):  # SystemExit, GeneratorExit, ...: the tool's bug, not a stop request
            log.warning("agentx_tools: %s raised %s; answered as a tool error", call.tool, type(failure).__name__)
        return self._observe(f"Error: {call.tool} failed ({_describe_error(failure)})", "error", backend, started)


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


def default_failures() -> dict[str, dict[str, int]]:
    """The per-process runtime's infrastructure failures ({} when it was never made)."""
    with _DEFAULT_LOCK:
        return _DEFAULT.failures.counts() if _DEFAULT is not None else {}


def reset_default_runtime() -> None:
    """Forget the per-process runtime (tests change the environment between runs)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is not None and _DEFAULT._sandbox is not None:
            _DEFAULT._sandbox.close()
        _DEFAULT = None
