"""The tool runtime: one bound call -> one observation, under the tool's limits, on the configured backend.

A benchmark registers its tools as a `Toolset` (`register_toolset`): their names and backends (`ToolsSpec`,
`tool_config.py`), limits, how its `local` / `model` / `replay` backends run a call, its secrets and its facts for
the results file.  The runtime owns everything around the call: the `remote` backend (`tool_client.py`), the
thread pool and the wall-clock limit, input and output bounds, the memo, secret scrubbing and the infrastructure
failures (`tool_availability.py`).

Limits: a wall-clock limit for every call (`Toolset.limits`; a subprocess tool gets `Toolset.grace_s` on top for
its start-up and teardown, a remote one `REMOTE_GRACE_S`); in-process tools get input caps (`MAX_PIXELS`,
`MAX_TEXT`) since a thread cannot be capped, and a call past its wall limit is answered with a time-limit
observation (its thread is abandoned).  Observations never raise: bad arguments, tool errors (any exception a
tool raises), limits and unavailable tools are all text for the model; only a `KeyboardInterrupt` raised inside a
tool stops the run.  A failure outside the call (`ToolInfrastructureError`) is status `unavailable` with the
neutral `<Tool> is unavailable right now.`; its reason goes to the log and `failures`, never to the model.  With
`remote` tools, `check_server` (run before the first model call) stops a run whose server cannot serve them, and
records the server's backend per tool (`remote:model`) for the observations and the results file.  `local`
backends must be pure functions of their arguments and images: a repeated call (same tool, arguments and image
content digests) is answered from a per-process memo (`Observation.cached`), an LRU of at most `MEMO_ENTRIES`
entries and `MEMO_BYTES` bytes (an image counts width x height x channels).

Secrets and bounds: every observation text, from every backend and ok or not, passes through the toolset's
scrubber (`Toolset.scrubber`) before it leaves `execute`, then is made valid UTF-8 and capped at `MAX_OBSERVATION`
characters.  An output image larger than `MAX_OUTPUT_PIXELS` (or than the call's largest input image, if that is
larger) is refused with an error observation rather than downscaled, so coordinates the model reads off it stay
true.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from PIL import Image

from lmms_agentic.adapters.agentic.steps import utf8_text
from lmms_agentic.adapters.agentic.tool_availability import Failures, check_server
from lmms_agentic.adapters.agentic.tool_client import ServerAccess, call_remote
from lmms_agentic.adapters.agentic.tool_config import RuntimeConfig, ToolsSpec
from lmms_agentic.adapters.agentic.tool_io import (
    Limits,
    ToolCall,
    ToolError,
    ToolInfrastructureError,
    ToolOutput,
    ToolUnavailable,
    unavailable_text,
)
from lmms_agentic.adapters.agentic.tool_memo import MemoCache, memo_key

MAX_PIXELS = 40_000_000
MAX_TEXT = 20_000
MAX_OBSERVATION = 4_000
MAX_OUTPUT_PIXELS = 4096 * 4096
MEMO_BYTES = 256 * 2**20
MEMO_ENTRIES = 4096
REMOTE_GRACE_S = 10.0
"""Extra time a remote call gets on top of the tool's limit, so the server's own time-limit answer arrives."""
log = logging.getLogger(__name__)


class Toolset(Protocol):
    """A benchmark's tools, as the runtime runs them (see the module docstring)."""

    spec: ToolsSpec

    def run(self, backend: str, doc: Mapping[str, Any], call: ToolCall, images: Mapping[str, Image.Image],
            used: Sequence[int], n_inputs: int | None) -> tuple[ToolOutput, int | None]:
        """One call on a `local`, `model` or `replay` backend: the output and the reference step it replayed (if
        any); `ReplayMiss` when replay has no answer, a `ToolError` when the tool failed."""

    def limits(self, tool: str) -> Limits: ...

    def grace_s(self, tool: str, backend: str) -> float:
        """Extra wait past the wall limit (a subprocess's start-up and teardown); 0 for an in-process tool."""

    def scrubber(self, config: RuntimeConfig) -> Callable[[str], str]:
        """Removes every secret the runtime so configured knows from a text."""

    def access(self, url: str) -> ServerAccess:
        """The token and scrubber of the tool server at `url`."""

    def unready(self, config: RuntimeConfig) -> dict[str, str]:
        """The tools of `config` that cannot run in this process -> why (a tool server's start-up check)."""

    def describe(self, config: RuntimeConfig) -> dict[str, Any]:
        """The toolset's own facts for the results file (limits, sandbox, model settings)."""

    def close(self) -> None: ...


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


class ReplayMiss(LookupError):
    """No step of the reference trace answers this call (an `unavailable` observation; args[0] is its text)."""


def _check_inputs(call: ToolCall, images: Mapping[str, Image.Image]) -> None:
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

    toolset: Toolset
    config: RuntimeConfig | None = None
    memo_entries: int = MEMO_ENTRIES
    memo_bytes: int = MEMO_BYTES
    _memo: MemoCache = field(init=False)
    _scrub: Callable[[str], str] = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _key_locks: dict[str, _KeyLock] = field(default_factory=dict)
    _pool: concurrent.futures.ThreadPoolExecutor = field(
        default_factory=lambda: concurrent.futures.ThreadPoolExecutor(16, thread_name_prefix="tool"))
    failures: Failures = field(init=False)
    _served: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if self.config is None:
            self.config = RuntimeConfig.from_env(self.toolset.spec)
        self._memo = MemoCache(self.memo_entries, self.memo_bytes)
        self._scrub = self.toolset.scrubber(self.config)
        self.failures = Failures(self.toolset.spec.label)

    @property
    def backends(self) -> Mapping[str, str]:
        assert self.config is not None
        return self.config.backends

    def clear_memo(self) -> None:
        self._memo.clear()

    def memo_size(self) -> tuple[int, int]:
        """(entries, bytes) held by the memo now."""
        return len(self._memo), self._memo.bytes

    def close(self) -> None:
        """Stop what the toolset started (its sandbox's workers); the runtime can still run calls afterwards."""
        self.toolset.close()

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
        """Check the tool server once, if any tool is `remote` (`tool_availability.check_server`: raises
        `ToolServerError`, one line, when it cannot serve them)."""
        assert self.config is not None
        with self._lock:
            if self._served is None:
                url = self.config.server_url or ""
                self._served = check_server(self.config, self.toolset.spec, self.toolset.access(url))

    def unready(self) -> dict[str, str]:
        """The tools this runtime cannot run -> why (a tool server's start-up check)."""
        assert self.config is not None
        return self.toolset.unready(self.config)

    def backend_used(self, tool: str) -> str:
        """The tool's backend; a `remote` one with the server's backend for it once checked (`remote:model`)."""
        backend = self.backends[tool]
        served = (self._served or {}).get(tool)
        return f"{backend}:{served}" if backend == "remote" and served else backend

    def describe(self) -> dict[str, Any]:
        assert self.config is not None
        return {**self.config.describe(), "backends_used": {t: self.backend_used(t) for t in self.backends},
                **self.toolset.describe(self.config),
                "bounds": {"memo_entries": self.memo_entries, "memo_bytes": self.memo_bytes,
                           "max_output_pixels": MAX_OUTPUT_PIXELS, "max_observation_chars": MAX_OBSERVATION}}

    def _run(self, doc: Mapping[str, Any], call: ToolCall, images: Mapping[str, Image.Image], backend: str,
             used: Sequence[int], n_inputs: int | None) -> tuple[ToolOutput, int | None]:
        if backend == "remote":
            assert self.config is not None and self.config.server_url is not None
            url, limit = self.config.server_url, self.toolset.limits(call.tool).wall_s
            return call_remote(url, call, images, limit + REMOTE_GRACE_S, self.toolset.access(url)), None
        return self.toolset.run(backend, doc, call, images, used, n_inputs)

    def execute(self, doc: Mapping[str, Any], call: ToolCall, visuals: Sequence[Image.Image],
                used_gold_steps: Sequence[int] = (), n_inputs: int | None = None) -> Observation:
        """Run one call under its wall-clock limit; every failure is an observation.  Concurrent identical local
        calls run once (the others wait for its memo entry).  `n_inputs`: how many of `visuals` are the task's own
        inputs (replay matches only those; None: read from the document)."""
        backend = self.backends[call.tool]
        images = {name: visuals[index] for name, index in call.images.items()}
        if backend == "local":
            key = memo_key(call.tool, call.arguments, images)  # hashed once per call: the pixels are the costly part
            with self._exclusive(key):
                return self._execute(doc, call, images, backend, used_gold_steps, key, n_inputs)
        observed = self._execute(doc, call, images, backend, used_gold_steps, None, n_inputs)
        used = self.backend_used(call.tool)
        return observed if used == backend else dataclasses.replace(observed, backend=used)

    def _observe(self, text: str, status: str, backend: str, started: float, image: Image.Image | None = None,
                 gold: int | None = None, cached: bool = False) -> Observation:
        """The observation as the model and the logs see it: secrets removed, valid UTF-8, capped."""
        text = utf8_text(self._scrub(text))
        if len(text) > MAX_OBSERVATION:
            text = text[:MAX_OBSERVATION] + " [truncated]"
        return Observation(text, status, backend, time.perf_counter() - started, image, gold, cached)

    def _execute(self, doc: Mapping[str, Any], call: ToolCall, images: Mapping[str, Image.Image], backend: str,
                 used_gold_steps: Sequence[int], key: str | None, n_inputs: int | None = None) -> Observation:
        limit = self.toolset.limits(call.tool).wall_s
        started = time.perf_counter()
        hit = self._memo.get(key) if key is not None else None
        if hit is not None:
            return self._observe(hit[0].text, hit[1], backend, started, hit[0].image, cached=True)
        try:
            _check_inputs(call, images)
            future = self._pool.submit(self._run, doc, call, images, backend, tuple(used_gold_steps), n_inputs)
            grace = REMOTE_GRACE_S + 1.0 if backend == "remote" else self.toolset.grace_s(call.tool, backend)
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

    def _failed(self, call: ToolCall, failure: BaseException, backend: str, started: float,
                key: str | None) -> Observation:
        """The observation of a call whose tool raised `failure` (only a `KeyboardInterrupt` is re-raised)."""
        if isinstance(failure, KeyboardInterrupt):
            raise failure
        if isinstance(failure, ToolInfrastructureError):
            reason = utf8_text(self._scrub(str(failure) or failure.__class__.__name__))
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
            log.warning("%s: %s raised %s; answered as a tool error", self.toolset.spec.label, call.tool,
                        type(failure).__name__)
        return self._observe(f"Error: {call.tool} failed ({_describe_error(failure)})", "error", backend, started)


_FACTORIES: dict[str, Callable[[], ToolRuntime]] = {}
_DEFAULTS: dict[str, ToolRuntime] = {}
_DEFAULT_LOCK = threading.Lock()


def register_toolset(label: str, factory: Callable[[], ToolRuntime]) -> None:
    """Make `factory` the way `default_runtime(label)` builds the benchmark's per-process runtime."""
    with _DEFAULT_LOCK:
        _FACTORIES[label] = factory


def default_runtime(label: str) -> ToolRuntime:
    """The per-process runtime of the benchmark registered as `label`, made on first use."""
    with _DEFAULT_LOCK:
        if label not in _DEFAULTS:
            _DEFAULTS[label] = _FACTORIES[label]()
        return _DEFAULTS[label]


def default_made(label: str) -> ToolRuntime | None:
    """The per-process runtime of `label` if it was made (None otherwise)."""
    with _DEFAULT_LOCK:
        return _DEFAULTS.get(label)


def reset_default_runtime(label: str) -> None:
    """Forget the per-process runtime of `label`, closing its toolset (tests change the environment)."""
    with _DEFAULT_LOCK:
        runtime = _DEFAULTS.pop(label, None)
    if runtime is not None:
        runtime.close()
