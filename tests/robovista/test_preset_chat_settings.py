"""The presets' chat settings for RoboVista's rows: thinking off for Qwen3-family models, Molmo2's system prompt in
the user turn (`agentic_vllm`, lmms_agentic/presets/vllm_chat.py), checked without vLLM (a stand-in engine)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from lmms_agentic import presets
from lmms_agentic.presets import vllm_chat

NON_THINKING = ["qwen3_vl_4b", "qwen3_vl_8b", "qwen3_vl_32b", "qwen3_vl_235b_a22b", "qwen3_6_27b", "qwen3_6_35b_a3b"]


@pytest.mark.parametrize("name", NON_THINKING)
def test_qwen3_rows_run_without_thinking(name: str) -> None:
    preset = presets.get(name)
    vllm = preset.backends["vllm"]
    assert vllm.model == "agentic_vllm" and vllm.args["enable_thinking"] is False
    assert "enable_thinking=false" in presets.model_args(vllm)
    if "hf" in preset.backends:
        assert presets.parse_model_args(presets.model_args(preset.backends["hf"]))["enable_thinking"] == "false"


def test_thinking_rows_and_others_keep_lmms_evals_backend() -> None:
    for name in ("qwen3_vl_8b_thinking", "qwen3_vl_32b_thinking", "qwen2_5_vl_7b", "qwen3_5_397b_a17b"):
        backend = presets.get(name).backends["vllm"]
        assert backend.model == "vllm" and "enable_thinking" not in backend.args, name


def test_molmo2_sends_its_system_prompt_in_the_user_turn() -> None:
    backend = presets.get("molmo2_8b").backends["vllm"]
    assert backend.model == "agentic_vllm" and "system_role=false" in presets.model_args(backend)


class _Engine:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def chat(self, **kwargs: Any) -> list[Any]:
        self.calls.append(kwargs)
        return [SimpleNamespace(outputs=[SimpleNamespace(text="A")])]


def _backend(**settings: Any) -> tuple[Any, _Engine]:
    engine = _Engine()
    backend = vllm_chat.AgenticVLLM.__new__(vllm_chat.AgenticVLLM)  # no vLLM engine on CPU: the settings only
    backend.__dict__.update(client=engine, chat_template=None, max_new_tokens=64, max_pixels=1 << 20,
                            min_image_pixels=28, max_frame_num=8, fps=None, nframes=8, is_qwen3_vl=False,
                            task_dict={"t": {"test": {0: {"q": "x"}}}})
    backend.configure(settings.get("enable_thinking"), settings.get("system_role", True))
    return backend, engine


def _messages(doc: Any) -> list[dict[str, Any]]:
    return [{"role": "system", "content": [{"type": "text", "text": "SYS"}]},
            {"role": "user", "content": [{"type": "text", "text": "Question"}]}]


def test_the_backend_moves_the_system_prompt_and_sends_template_kwargs() -> None:
    request = SimpleNamespace(arguments=("", _messages, {"max_new_tokens": 8}, 0, "t", "test"))
    backend, engine = _backend(enable_thinking="false", system_role="false")
    messages, _ = backend.make_one_request(request)
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "SYS\n\n"},
                                                      {"type": "text", "text": "Question"}]}]
    backend.client.chat(messages=[messages], sampling_params=[])
    assert engine.calls[-1]["chat_template_kwargs"] == {"enable_thinking": False}
    plain, engine = _backend()
    assert plain.make_one_request(request)[0][0]["role"] == "system" and plain.client is engine


@pytest.mark.parametrize(("messages", "expected"), [
    ([{"role": "user", "content": "hi"}], [{"role": "user", "content": "hi"}]),
    ([{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}],
     [{"role": "user", "content": [{"type": "text", "text": "S\n\n"}, {"type": "text", "text": "hi"}]}]),
    ([{"role": "system", "content": "S"}], [{"role": "user", "content": [{"type": "text", "text": "S\n\n"}]}]),
])
def test_system_into_user(messages: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert vllm_chat.system_into_user(messages) == expected


def test_agentic_vllm_is_a_registered_model() -> None:
    from lmms_eval import models

    assert models.get_model("agentic_vllm", False) is vllm_chat.AgenticVLLM


def test_bad_setting_names_the_argument() -> None:
    with pytest.raises(ValueError, match="agentic_vllm: enable_thinking must be true or false"):
        _backend(enable_thinking="maybe")
