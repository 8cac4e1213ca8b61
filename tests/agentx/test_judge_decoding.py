"""Agent-X's judges offered two ways: pinned (dated snapshot, temperature 0; the default) and as released."""

from __future__ import annotations

import pytest

from lmms_agentic.judges.config import JudgeConfig


@pytest.mark.parametrize(("preset", "decoding", "model", "temperature", "extra"), [
    ("gpt-4o", None, "gpt-4o-2024-08-06", 0.0, {}),
    ("gpt-4o", "pinned", "gpt-4o-2024-08-06", 0.0, {}),
    ("gpt-4o", "as_released", "gpt-4o", 1.0, {}),  # the script's alias, the API's default temperature
    ("qwen3-14b-local", None, "Qwen/Qwen3-14B", 0.0, {"chat_template_kwargs": {"enable_thinking": False}}),
    ("qwen3-14b-local", "as_released", "Qwen/Qwen3-14B", 0.6,
     {"top_p": 0.95, "top_k": 20, "chat_template_kwargs": {"enable_thinking": False}}),
])
def test_decoding_of_each_judge_preset(preset: str, decoding: str | None, model: str, temperature: float,
                                       extra: dict[str, object]) -> None:
    env = {"LMMS_AGENTIC_JUDGE_PRESET": preset, **({"LMMS_AGENTIC_JUDGE_DECODING": decoding} if decoding else {})}
    config = JudgeConfig.from_env(env)
    assert (config.model, config.temperature, config.decoding) == (model, temperature, decoding or "pinned")
    assert {k: dict(v) if hasattr(v, "items") else v for k, v in config.extra_body.items()} == extra
    assert f"decoding={decoding or 'pinned'} temperature={temperature}" in config.describe()


def test_bad_decoding_settings_name_the_variable() -> None:
    with pytest.raises(ValueError, match="LMMS_AGENTIC_JUDGE_DECODING='sampled': expected one of pinned"):
        JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_PRESET": "gpt-4o", "LMMS_AGENTIC_JUDGE_DECODING": "sampled"})
    with pytest.raises(ValueError, match="needs a judge preset"):
        JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_BASE_URL": "http://127.0.0.1:1/v1",
                              "LMMS_AGENTIC_JUDGE_MODEL": "m", "LMMS_AGENTIC_JUDGE_DECODING": "as_released"})
