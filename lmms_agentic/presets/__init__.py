"""Model presets: every model of the reference tables, mapped to the lmms-eval backends that run it (data).

The presets live in YAML files next to this module (installed as package data): ``open.yaml`` (open weights that
fit on one 8-GPU node: vLLM first, then a Hugging Face chat backend), ``api.yaml`` (closed models through lmms-eval's
OpenAI-compatible backend) and ``baselines.yaml`` (constant-letter baselines and the demo's smoke models). Each
file's header documents its fields. What belongs to a benchmark (which task runs each published protocol, the
reference rows no preset can reproduce) is in its own ``tasks/<name>/benchmark.json``.

This module reads and validates them (``PresetError`` names the file and the key), and turns a preset into what
lmms-eval takes: ``--model``, ``--model_args`` (``model_args``) and ``--gen_kwargs`` (``gen_kwargs``). API keys are
never part of the model arguments: ``key_env`` names the environment variable that holds the key.
For the Slurm sweep it also gives one job's ``resources`` (GPUs from the backend; time, CPUs and memory from a
file's ``defaults.resources`` or the preset's own); ``presets.served`` turns a vLLM backend into ``vllm serve``
options and the OpenAI-client arguments of a run against that server.
``python -m lmms_agentic presets`` lists them. Nothing is read at import time.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

__all__ = ["BACKENDS", "HF_BACKENDS", "Backend", "Preset", "PresetError", "Resources", "all_presets", "backend_for",
           "cpu_model_args", "execute", "for_run", "gen_kwargs", "get", "listing", "main", "model_args",
           "parse_model_args", "protocols", "resources", "task_for", "unreproducible"]

BACKENDS = ("vllm", "hf", "api", "dummy")
"""Backend kinds, in the order `reproduce` prefers them."""
HF_BACKENDS = ("qwen2_5_vl", "qwen3_vl", "llava_hf")
"""The Hugging Face chat backends presets may use: those exercised on CPU with tiny checkpoints."""
KINDS = ("open", "api", "baseline", "smoke")
PRESET_FILES = ("open.yaml", "api.yaml", "baselines.yaml")
TINY_PREFIX = "tiny_vlm:"
RESOURCE_KEYS = ("hours", "cpus", "mem_gb")
"""Keys of a ``resources`` mapping (a file's ``defaults`` or one preset's): the Slurm time limit, CPU cores and
memory of one job; unset CPU and memory follow the GPUs (8 cores and 64 GB per GPU, else 4 cores and 16 GB)."""


class PresetError(ValueError):
    """A malformed preset file, or a preset that does not exist; the message names the file or the choices."""


@dataclass(frozen=True)
class Backend:
    """How one backend runs a preset."""

    name: str
    """`vllm`, `hf`, `api` or `dummy`."""
    model: str
    """lmms-eval's ``--model`` (``vllm``, ``qwen2_5_vl``, ``qwen3_vl``, ``llava_hf``, ``openai``, ``dummy``)."""
    weights: str
    args: Mapping[str, Any] = field(default_factory=dict)
    processes: int = 1
    key_env: str | None = None
    reasoning_effort: str | None = None

    @property
    def tensor_parallel_size(self) -> int:
        return int(self.args.get("tensor_parallel_size", 1))

    @property
    def gpus(self) -> int:
        """GPUs one run needs (at least): a vLLM replica's tensor-parallel size, the HF processes; 0 for APIs."""
        if self.name == "vllm":
            return self.tensor_parallel_size
        if self.name == "hf":
            return 8 if self.args.get("device_map") == "auto" else self.processes
        return 0


@dataclass(frozen=True)
class Preset:
    """One model as the papers ran it (see the YAML headers for the fields)."""

    name: str
    title: str
    kind: str
    weights: str
    reference: Mapping[str, tuple[str, ...]]
    backends: Mapping[str, Backend]
    params_b: float | None = None
    reasoning: bool = False
    verified: bool = True
    tasks: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    gen_kwargs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    notes: str = ""
    source: str = ""
    resources: Mapping[str, int] = field(default_factory=dict)
    """``resources`` of the file's defaults, overridden by the preset's own (see ``RESOURCE_KEYS``)."""


@dataclass(frozen=True)
class Resources:
    """What one Slurm job of a preset asks for."""

    gpus: int
    hours: int
    cpus: int
    mem_gb: int

    @property
    def time(self) -> str:
        """The ``--time`` value (hours:minutes:seconds)."""
        return f"{self.hours}:00:00"


def _read(name: str) -> Any:
    import yaml

    text = (files("lmms_agentic.presets") / name).read_text(encoding="utf-8")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PresetError(f"presets/{name}: not valid YAML ({exc})") from exc


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PresetError(f"{where} must be a mapping, got {type(value).__name__}")
    return value


def _backend(kind: str, raw: Any, defaults: Mapping[str, Any], weights: str, where: str) -> Backend:
    spec = _mapping(raw, where)
    if kind not in BACKENDS:
        raise PresetError(f"{where}: unknown backend {kind!r} (expected one of {', '.join(BACKENDS)})")
    args: dict[str, Any] = {**_mapping(defaults.get(kind), f"{where} defaults")}
    if kind == "vllm":
        args.update({k: v for k, v in spec.items()})
        # enable_thinking / system_role: lmms-eval's vllm backend has neither; presets/vllm_chat.py adds them
        vllm_model = "agentic_vllm" if {"enable_thinking", "system_role"} & set(args) else "vllm"
        return Backend("vllm", vllm_model, weights, args)
    if kind == "hf":
        model = spec.get("model")
        if model not in HF_BACKENDS:
            raise PresetError(f"{where}.model must be one of {', '.join(HF_BACKENDS)} (got {model!r})")
        args.update(_mapping(spec.get("args"), f"{where}.args"))
        return Backend("hf", model, str(spec.get("weights", weights)), args, processes=int(spec.get("processes", 1)))
    if kind == "api":
        if not spec.get("base_url") or not spec.get("key_env"):
            raise PresetError(f"{where}: an api backend needs base_url and key_env")
        args.update({k: v for k, v in spec.items() if k not in ("key_env", "reasoning_effort")})
        effort = spec.get("reasoning_effort")
        return Backend("api", "openai", weights, args, key_env=str(spec["key_env"]),
                       reasoning_effort=None if effort is None else str(effort))
    return Backend("dummy", "dummy", weights, dict(spec))


def _resources(raw: Any, where: str) -> dict[str, int]:
    found = _mapping(raw, where)
    for key, value in found.items():
        if key not in RESOURCE_KEYS:
            raise PresetError(f"{where}: unknown key {key!r} (expected {', '.join(RESOURCE_KEYS)})")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise PresetError(f"{where}.{key} must be a positive whole number, got {value!r}")
    return dict(found)


def _preset(name: str, raw: Any, defaults: Mapping[str, Any], source: str) -> Preset:
    where = f"presets/{source}: {name}"
    data = _mapping(raw, where)
    for key in ("title", "weights", "reference", "backends"):
        if key not in data:
            raise PresetError(f"{where}: key {key!r} is missing")
    kind = str(data.get("kind", "api" if source == "api.yaml" else "open"))
    if kind not in KINDS:
        raise PresetError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    reference = {b: tuple(str(m) for m in models) for b, models in _mapping(data["reference"], where).items()}
    backends = {k: _backend(k, v, defaults, str(data["weights"]), f"{where}.backends.{k}")
                for k, v in _mapping(data["backends"], where).items()}
    if not backends:
        raise PresetError(f"{where}: no backend")
    ordered = {k: backends[k] for k in BACKENDS if k in backends}
    return Preset(name=name, title=str(data["title"]), kind=kind, weights=str(data["weights"]),
                  reference=reference, backends=ordered, params_b=data.get("params_b"),
                  reasoning=bool(data.get("reasoning", False)), verified=bool(data.get("verified", True)),
                  tasks={b: dict(v) for b, v in _mapping(data.get("tasks"), where).items()},
                  gen_kwargs={b: dict(v) for b, v in _mapping(data.get("gen_kwargs"), where).items()},
                  notes=str(data.get("notes", "")), source=source,
                  resources={**_resources(defaults.get("resources"), f"presets/{source}: defaults.resources"),
                             **_resources(data.get("resources"), f"{where}.resources")})


@functools.cache
def all_presets() -> dict[str, Preset]:
    """Every preset, by name (open, api, baselines and smoke), validated."""
    found: dict[str, Preset] = {}
    for source in PRESET_FILES:
        data = _mapping(_read(source), f"presets/{source}")
        defaults = _mapping(data.get("defaults"), f"presets/{source}: defaults")
        for name, raw in _mapping(data.get("presets"), f"presets/{source}: presets").items():
            if name in found:
                raise PresetError(f"presets/{source}: preset {name!r} is also defined in {found[name].source}")
            found[name] = _preset(name, raw, defaults, source)
    return found


def get(name: str) -> Preset:
    """The preset called ``name``; the error suggests close names."""
    known = all_presets()
    if name not in known:
        import difflib

        close = difflib.get_close_matches(name, known, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise PresetError(f"no preset named {name!r}{hint}; `python -m lmms_agentic presets` lists them")
    return known[name]


def protocols(benchmark: str) -> tuple[str, dict[str, str]]:
    """(default protocol, protocol -> task) for a benchmark, as its `benchmark.json` declares them."""
    from lmms_agentic.adapters import benchmarks

    try:
        found = benchmarks.get(benchmark)
    except KeyError as exc:
        raise PresetError(exc.args[0]) from exc
    return found.default_protocol, dict(found.protocol_tasks)


def task_for(preset: Preset | None, benchmark: str, protocol: str) -> str:
    """The task that runs ``protocol`` of ``benchmark`` for ``preset`` (its own variant if it names one)."""
    _, table = protocols(benchmark)
    if protocol not in table:
        raise PresetError(f"{benchmark} has no protocol {protocol!r}; known: {', '.join(table)}")
    if preset is not None and protocol in preset.tasks.get(benchmark, {}):
        return preset.tasks[benchmark][protocol]
    return table[protocol]


def unreproducible() -> dict[str, dict[str, str]]:
    """benchmark -> reference model name -> why no preset reproduces it (each `benchmark.json`'s `unreproducible`)."""
    from lmms_agentic.adapters import benchmarks

    return {name: dict(b.unreproducible) for name, b in benchmarks.all_benchmarks().items()}


def backend_for(preset: Preset, name: str | None = None) -> Backend:
    """The preset's backend ``name`` (vllm, hf, api, dummy), or its first one."""
    if name is None:
        return next(iter(preset.backends.values()))
    if name not in preset.backends:
        raise PresetError(f"preset {preset.name} has no {name} backend; it has: {', '.join(preset.backends)}")
    return preset.backends[name]


def _format(args: Mapping[str, Any]) -> str:
    parts = []
    for key, value in args.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if "," in text:
            raise PresetError(f"model argument {key}={text!r} contains a comma (lmms-eval splits on commas)")
        parts.append(f"{key}={text}")
    return ",".join(parts)


def model_args(backend: Backend, world_size: int = 1, weights: str | None = None) -> str:
    """lmms-eval ``--model_args`` for ``backend`` (no secrets). ``world_size`` processes of a vLLM backend run
    ``world_size / tensor_parallel_size`` data-parallel replicas."""
    target = weights or backend.weights
    if backend.name == "vllm":
        args = {"model": target, **backend.args}
        replicas = max(1, world_size // backend.tensor_parallel_size)
        if replicas > 1:
            args["data_parallel_size"] = replicas
        return _format(args)
    if backend.name == "hf":
        return _format({"pretrained": target, **backend.args})
    if backend.name == "api":
        args = {"model": target, **backend.args}
        if backend.reasoning_effort is not None:
            args["reasoning_effort"] = backend.reasoning_effort
        return _format(args)
    return _format(dict(backend.args))


def resources(preset: Preset, backend_name: str | None = None) -> Resources:
    """GPUs (the backend's), time, CPUs and memory of one Slurm job running ``preset``."""
    gpus = backend_for(preset, backend_name).gpus
    hours = int(preset.resources.get("hours", 24 if gpus >= 8 else 12 if gpus else 4))
    cpus = int(preset.resources.get("cpus", 8 * gpus if gpus else 4))
    memory = int(preset.resources.get("mem_gb", 64 * gpus if gpus else 16))
    return Resources(gpus=gpus, hours=hours, cpus=cpus, mem_gb=memory)


def cpu_model_args(backend: Backend, weights: str) -> str:
    """The hf backend's model arguments pointed at local ``weights`` on the CPU (for the backend checks)."""
    if backend.name != "hf":
        raise PresetError(f"cpu_model_args is for hf backends, not {backend.name}")
    from lmms_agentic.devtools import tiny_vlm

    args = {"pretrained": weights, **backend.args, "device": "cpu", "device_map": "cpu", "attn_implementation": "sdpa"}
    if backend.model == "llava_hf":
        args["dtype"] = "float32"
    else:
        tiny = dict(item.split("=", 1) for item in tiny_vlm.model_args(weights).split(","))
        args.update({k: tiny[k] for k in ("min_pixels", "max_pixels", "max_num_frames")})
    return _format(args)


def gen_kwargs(preset: Preset, benchmark: str) -> str:
    """lmms-eval ``--gen_kwargs`` for ``benchmark`` ("" when the task's own settings are the paper's)."""
    return _format(dict(preset.gen_kwargs.get(benchmark, {})))


def parse_model_args(text: str) -> dict[str, str]:
    """lmms-eval's ``k=v,k=v`` model arguments as a dict (values as text)."""
    pairs = (item.split("=", 1) for item in (text or "").split(",") if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs}


def for_run(config: Mapping[str, Any]) -> Preset | None:
    """The preset an lmms-eval run used, from its results ``config`` (model and model_args), or None."""
    model = str(config.get("model") or "")
    args = parse_model_args(str(config.get("model_args") or ""))
    presets = all_presets().values()
    if model == "dummy":
        response = args.get("response", "A").strip() or "A"
        return next((p for p in presets if p.kind == "baseline" and p.backends["dummy"].args.get("response")
                     == response), None)
    weights = args.get("model") or args.get("pretrained") or args.get("model_version") or ""
    if weights and (Path(weights) / "tiny_vlm.json").is_file():
        from lmms_agentic.devtools import tiny_vlm

        return all_presets().get(f"tiny_{tiny_vlm.kind_of(weights)}")
    matches = [p for p in presets if weights and any(b.weights == weights for b in p.backends.values())]
    if len(matches) > 1:
        effort = args.get("reasoning_effort")
        matches = [p for p in matches if "api" in p.backends and p.backends["api"].reasoning_effort == effort]
    return matches[0] if len(matches) == 1 else None


def listing() -> str:
    """The presets as a markdown table (``python -m lmms_agentic presets``)."""
    lines = ["| preset | kind | weights / model id | backends | published rows |", "|---|---|---|---|---|"]
    for preset in all_presets().values():
        backends = []
        for b in preset.backends.values():
            detail = {"vllm": f"tp={b.tensor_parallel_size}", "hf": f"{b.model} x{b.processes}",
                      "api": f"effort={b.reasoning_effort}" if b.reasoning_effort else "", "dummy": ""}[b.name]
            backends.append(f"{b.name}({detail})" if detail else b.name)
        rows = "; ".join(f"{bench}: {', '.join(models)}" for bench, models in preset.reference.items())
        weights = preset.weights + ("" if preset.verified else " (id unverified)")
        lines.append(f"| {preset.name} | {preset.kind} | {weights} | {', '.join(backends)} | {rows} |")
    return "\n".join(lines)


def add_arguments(parser: Any) -> Any:
    parser.add_argument("name", nargs="?", help="show one preset's lmms-eval arguments per backend")
    return parser


def execute(args: Any) -> int:
    """List the presets, or show one (``PresetError`` for an unknown name)."""
    if args.name is None:
        print(listing())
        return 0
    preset = get(args.name)
    print(f"{preset.name}: {preset.title} ({preset.kind}){' - ' + preset.notes if preset.notes else ''}")
    for backend in preset.backends.values():
        model = backend.model if backend.reasoning_effort is None else "agentic_openai (openai + reasoning_effort)"
        key = f"  (key from ${backend.key_env})" if backend.key_env else ""
        print(f"  {backend.name}: --model {model} --model_args {model_args(backend)}{key}")
    for benchmark in preset.reference:
        extra = gen_kwargs(preset, benchmark)
        print(f"  {benchmark}: task {task_for(preset, benchmark, protocols(benchmark)[0])}"
              + (f", --gen_kwargs {extra}" if extra else ""))
    return 0
