"""An open-weight preset served by ``vllm serve`` and evaluated through lmms-eval's OpenAI client (the Slurm
sweep's serve-then-evaluate pattern, and ``reproduce --backend vllm --base-url URL``).

Owns: which of a vLLM backend's settings are ``vllm serve`` options (``vllm_serve_args``; those lmms-eval or
``presets.vllm_chat`` consume themselves stay out), the client's model arguments (``served_model_args``: the
weights id as the served model name, so the run still names the preset; ``enable_thinking`` sent with every request
as lmms-eval's ``enable_thinking_kwarg``), and which presets cannot be run that way (``not_servable``).
"""

from __future__ import annotations

from typing import Any

from lmms_agentic.presets import Backend, PresetError, _format

__all__ = ["LMMS_EVAL_ONLY_VLLM_ARGS", "SERVED_CLIENT_ARGS", "not_servable", "served_model_args", "vllm_serve_args"]

LMMS_EVAL_ONLY_VLLM_ARGS = frozenset({"max_new_tokens", "is_qwen3_vl", "data_parallel_size", "max_pixels",
                                      "min_image_pixels", "max_frame_num", "fps", "nframes", "batch_size",
                                      "image_first", "disable_log_stats", "enable_thinking", "system_role"})
"""vllm backend arguments that lmms-eval (or ``vllm_chat``) consumes itself, not options of ``vllm serve``."""
SERVED_CLIENT_ARGS = {"num_concurrent": 16, "max_retries": 5, "timeout": 600}
"""lmms-eval OpenAI-client settings for a model served by ``vllm serve`` on the same node."""


def not_servable(backend: Backend) -> str:
    """Why ``backend``'s model cannot be evaluated through a ``vllm serve`` endpoint as the preset runs it ("" when
    it can): lmms-eval's OpenAI client has no way to move the system prompt into the user turn."""
    if "system_role" in backend.args and str(backend.args["system_role"]).strip().lower() in ("false", "0", "no"):
        return "system_role: false (the system prompt in the user turn) has no OpenAI-client equivalent"
    return ""


def served_model_args(backend: Backend, base_url: str, weights: str | None = None) -> str:
    """lmms-eval ``--model_args`` of its OpenAI client for ``backend``'s model served at ``base_url`` (by
    ``vllm serve``, whose ``--served-model-name`` is the weights id, so the run names the preset's weights);
    ``enable_thinking`` goes with every request as lmms-eval's ``enable_thinking_kwarg``."""
    why = not_servable(backend)
    if why:
        raise PresetError(f"the {backend.weights} preset cannot run against a served model: {why}; run it with "
                          "--backend vllm in-process")
    args: dict[str, Any] = {"model": weights or backend.weights, "base_url": base_url, **SERVED_CLIENT_ARGS}
    if "enable_thinking" in backend.args:
        args["enable_thinking_kwarg"] = backend.args["enable_thinking"]
    return _format(args)


def vllm_serve_args(backend: Backend) -> list[str]:
    """``vllm serve`` options for ``backend``'s vLLM settings (those lmms-eval consumes itself are left out)."""
    if backend.name != "vllm":
        raise PresetError(f"vllm_serve_args is for vllm backends, not {backend.name}")
    found: list[str] = []
    for key, value in backend.args.items():
        if key in LMMS_EVAL_ONLY_VLLM_ARGS or value is False or value is None:
            continue
        flag = "--" + key.replace("_", "-")
        found += [flag] if value is True else [flag, str(value)]
    return found
