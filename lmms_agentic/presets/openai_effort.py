"""lmms-eval's OpenAI-compatible chat backend plus one option, ``reasoning_effort``, sent with every request.

lmms-eval 0.7.3's ``openai`` backend builds the request body itself and has no reasoning-effort option (unknown
model arguments are ignored with a warning). Presets that name an effort (AgentVQA's "think-high" / "think-none"
rows) run through ``OpenAIReasoningEffort``: the same backend, whose client adds ``reasoning_effort`` to each
``chat.completions.create`` call. ``register()`` adds it to lmms-eval's model registry as ``agentic_openai``
(``reproduce`` does this when a preset needs it). Importing this module imports lmms-eval.
"""

from __future__ import annotations

from typing import Any

from lmms_eval.models.chat.openai import OpenAICompatible

MODEL_ID = "agentic_openai"
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")


class _Completions:
    def __init__(self, inner: Any, extra: dict[str, Any]) -> None:
        self._inner, self._extra = inner, extra

    def create(self, **kwargs: Any) -> Any:
        return self._inner.create(**{**self._extra, **kwargs})


class _Chat:
    def __init__(self, inner: Any, extra: dict[str, Any]) -> None:
        self.completions = _Completions(inner.completions, extra)


class _Client:
    """The OpenAI client, with ``extra`` added to every chat completion request."""

    def __init__(self, inner: Any, extra: dict[str, Any]) -> None:
        self._inner = inner
        self.chat = _Chat(inner.chat, extra)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class OpenAIReasoningEffort(OpenAICompatible):  # type: ignore[misc]  # lmms-eval is untyped
    """``--model agentic_openai --model_args model=...,reasoning_effort=high,...``."""

    def __init__(self, *args: Any, reasoning_effort: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if reasoning_effort is not None:
            if reasoning_effort not in EFFORTS:
                raise ValueError(f"reasoning_effort must be one of {', '.join(EFFORTS)}, got {reasoning_effort!r}")
            inner: Any = self.__dict__["client"]  # set by the parent constructor
            self.client = _Client(inner, {"reasoning_effort": reasoning_effort})
        self.reasoning_effort = reasoning_effort


def register() -> str:
    """Make ``--model agentic_openai`` resolve to this backend (idempotent); returns the model id."""
    from lmms_eval.models import MODEL_REGISTRY_V2
    from lmms_eval.models.registry_v2 import ModelManifest

    if MODEL_ID not in MODEL_REGISTRY_V2.list_model_names():
        MODEL_REGISTRY_V2.register_manifest(ModelManifest(
            model_id=MODEL_ID, chat_class_path=f"{__name__}.OpenAIReasoningEffort"))
    return MODEL_ID
