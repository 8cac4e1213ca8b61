"""``judge_record``: the one builder of the judge configuration a run's results store (lmms-eval, lm-eval and
reproduce runs alike): endpoint, model, decoding; never the key, nor credentials written into the URL."""

from __future__ import annotations

import json

import pytest

from lmms_agentic.judges.config import ENV, judge_record

FIELDS = {"preset", "base_url", "model", "decoding", "temperature", "api_version"}


def test_an_endpoint_and_model_are_recorded_without_the_key() -> None:
    env = {ENV["base_url"]: "https://user:pw-secret-1@judge.example/v1?api_key=sk-in-url-123&x=1",
           ENV["model"]: "judge-2024-08-06", ENV["api_key"]: "sk-the-judge-key-456", ENV["api_version"]: "2024-06"}
    record = judge_record(env)
    assert record == {"preset": None, "base_url": "https://user:***@judge.example/v1?api_key=***&x=1",
                      "model": "judge-2024-08-06", "decoding": "pinned", "temperature": 0.0, "api_version": "2024-06"}
    text = json.dumps(record)
    assert "pw-secret-1" not in text and "sk-in-url-123" not in text and "sk-the-judge-key-456" not in text


def test_a_token_written_as_the_url_user_is_not_recorded() -> None:
    record = judge_record({ENV["base_url"]: "https://sk-token-as-user-789@judge.example/v1", ENV["model"]: "m"})
    assert record is not None and "sk-token-as-user-789" not in json.dumps(record)
    assert record["base_url"] == "https://***@judge.example/v1"


def test_a_key_inside_the_url_path_is_removed_by_value() -> None:
    key = "sk-key-pasted-into-path-0011"
    record = judge_record({ENV["base_url"]: f"https://judge.example/{key}/v1", ENV["model"]: "m",
                           ENV["api_key"]: key})
    assert record is not None and key not in json.dumps(record) and record["base_url"] == "https://judge.example/***/v1"


def test_a_preset_records_its_decoding() -> None:
    pinned = judge_record({ENV["preset"]: "gpt-4o"})
    released = judge_record({ENV["preset"]: "gpt-4o", ENV["decoding"]: "as_released"})
    assert pinned is not None and released is not None and set(pinned) == set(released) == FIELDS
    assert (pinned["preset"], pinned["model"], pinned["decoding"], pinned["temperature"]) == (
        "gpt-4o", "gpt-4o-2024-08-06", "pinned", 0.0)
    assert (released["model"], released["decoding"], released["temperature"]) == ("gpt-4o", "as_released", 1.0)
    assert pinned["base_url"] == released["base_url"] == "https://api.openai.com/v1"


def test_no_judge_no_record_and_a_malformed_setting_raises() -> None:
    assert judge_record({}) is None
    assert judge_record({ENV["base_url"]: "http://127.0.0.1:8000/v1"}) is None  # no model: not configured
    with pytest.raises(ValueError, match=ENV["timeout"]):
        judge_record({ENV["base_url"]: "http://h/v1", ENV["model"]: "m", ENV["timeout"]: "soon"})
