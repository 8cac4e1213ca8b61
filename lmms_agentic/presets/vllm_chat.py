"""lmms-eval's in-process vLLM chat backend plus two settings some papers' rows need: chat-template kwargs and
models without a system role.

lmms-eval 0.7.3's ``vllm`` backend calls ``LLM.chat(messages, sampling_params, chat_template)`` and has no way to
pass ``chat_template_kwargs``: an ``enable_thinking`` model argument would reach ``vllm.LLM(...)`` and fail.
RoboVista's paper runs Qwen3-family models with ``enable_thinking=False`` and the leaderboard's Qwen3/3.6 rows are
"non-thinking mode"; the leaderboard puts the system prompt of models without a system role (Molmo2) in the user
turn.  ``AgenticVLLM`` (``--model agentic_vllm``, registered by the ``lmms_eval.models`` entry point) is the same
backend with

- ``enable_thinking=true|false``: sent as ``chat_template_kwargs={"enable_thinking": ...}`` with every chat call;
- ``system_role=false``: the system message's text goes first in the user turn, followed by a blank line (what
  RoboVista's own ``system_role: false`` prompt does), so no system turn reaches the chat template.

Presets name these settings in their ``vllm`` backend (presets/open.yaml); ``presets.model_args`` then selects
this backend.  The OpenAI-compatible backend takes the first as lmms-eval's own ``enable_thinking_kwarg`` and the
``qwen3_vl`` HF backend as ``enable_thinking``.  Importing this module imports lmms-eval (not vLLM).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_eval.models.chat.vllm import VLLM

MODEL_ID = "agentic_vllm"
SETTINGS = ("enable_thinking", "system_role")
"""vLLM backend settings of a preset that this backend implements (the others go to lmms-eval's backend)."""


def as_bool(value: Any, name: str) -> bool:
    """A model argument given as text (``true``/``false``) or a bool; anything else names the argument."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"agentic_vllm: {name} must be true or false, got {value!r}")


def system_into_user(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-style messages with every system message's text moved to the start of the first user turn
    (``text + "\\n\\n"``); other messages unchanged, nothing mutated."""
    system = [m for m in messages if m.get("role") == "system"]
    if not system:
        return messages
    texts = []
    for message in system:
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        texts += [str(p.get("text", "")) for p in parts if isinstance(p, Mapping) and p.get("type") == "text"]
    lead = {"type": "text", "text": "".join(texts) + "\n\n"}
    merged, done = [], False
    for message in messages:
        if message.get("role") == "system":
            continue
        if message.get("role") == "user" and not done:
            content = message.get("content")
            parts = list(content) if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
            message = {**message, "content": [lead, *parts]}
            done = True
        merged.append(message)
    if not done:
        merged.insert(0, {"role": "user", "content": [lead]})
    return merged


class _ChatClient:
    """The ``vllm.LLM`` object, with ``chat_template_kwargs`` added to every ``chat`` call."""

    def __init__(self, inner: Any, template_kwargs: Mapping[str, Any]) -> None:
        self._inner, self._template_kwargs = inner, dict(template_kwargs)

    def chat(self, *args: Any, **kwargs: Any) -> Any:
        merged = {**self._template_kwargs, **(kwargs.pop("chat_template_kwargs", None) or {})}
        return self._inner.chat(*args, chat_template_kwargs=merged, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class AgenticVLLM(VLLM):  # type: ignore[misc]  # lmms-eval is untyped
    """``--model agentic_vllm --model_args model=...,enable_thinking=false,system_role=false,...``."""

    def __init__(self, *args: Any, enable_thinking: Any = None, system_role: Any = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.configure(enable_thinking, system_role)

    def configure(self, enable_thinking: Any, system_role: Any) -> None:
        """Apply the two settings (the constructor calls this once the vLLM engine exists)."""
        self.enable_thinking = None if enable_thinking is None else as_bool(enable_thinking, "enable_thinking")
        self.system_role = as_bool(system_role, "system_role")
        if self.enable_thinking is not None:
            self.client = _ChatClient(self.__dict__["client"], {"enable_thinking": self.enable_thinking})

    def make_one_request(self, request: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        messages, params = super().make_one_request(request)
        return (messages if self.system_role else system_into_user(messages)), params

    def _to_openai_messages(self, raw_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = super()._to_openai_messages(raw_messages)
        return messages if self.system_role else system_into_user(messages)


def register() -> str:
    """Make ``--model agentic_vllm`` resolve to this backend (idempotent); returns the model id."""
    from lmms_eval.models import MODEL_REGISTRY_V2
    from lmms_eval.models.registry_v2 import ModelManifest

    if MODEL_ID not in MODEL_REGISTRY_V2.list_model_names():
        MODEL_REGISTRY_V2.register_manifest(ModelManifest(model_id=MODEL_ID, chat_class_path=f"{__name__}.AgenticVLLM"))
    return MODEL_ID
