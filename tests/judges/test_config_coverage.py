"""Configuration from the environment, presets, import hygiene, and coverage reporting."""

from __future__ import annotations

import logging
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from lmms_agentic.judges import (
    PRESETS,
    CoveragePolicy,
    JudgeConfig,
    JudgeCoverageError,
    JudgeResult,
    coverage_summary,
    get_preset,
    judged_coverage,
    judged_mean,
)


def test_env_configuration_and_precedence() -> None:
    env = {
        "LMMS_AGENTIC_JUDGE_PRESET": "qwen3-14b-local", "LMMS_AGENTIC_JUDGE_BASE_URL": "http://10.0.0.5:9000/v1/",
        "LMMS_AGENTIC_JUDGE_API_KEY": "k", "LMMS_AGENTIC_JUDGE_CONCURRENCY": "4",
        "LMMS_AGENTIC_JUDGE_TIMEOUT": "12.5", "LMMS_AGENTIC_JUDGE_CACHE": "/tmp/jc",
        "LMMS_AGENTIC_JUDGE_MIN_COVERAGE": "0.9", "LMMS_AGENTIC_JUDGE_STRICT_COVERAGE": "yes",
        "LMMS_AGENTIC_JUDGE_API_VERSION": "2024-06-01", "LMMS_AGENTIC_JUDGE_MAX_RETRIES": "2",
        "LMMS_AGENTIC_JUDGE_BACKOFF": "0.5",
    }
    cfg = JudgeConfig.from_env(env)
    assert cfg.model == "Qwen/Qwen3-14B" and cfg.base_url == "http://10.0.0.5:9000/v1"  # variable beats preset
    assert (cfg.concurrency, cfg.timeout, cfg.min_coverage, cfg.strict_coverage) == (4, 12.5, 0.9, True)
    assert (cfg.max_retries, cfg.backoff_base, cfg.api_version, cfg.temperature) == (2, 0.5, "2024-06-01", 0.0)
    assert cfg.cache_path == Path("/tmp/jc") and cfg.key == "k"
    assert cfg.extra_body["chat_template_kwargs"]["enable_thinking"] is False
    assert cfg.headers()["api-key"] == "k" and cfg.params() == {"api-version": "2024-06-01"}
    assert JudgeConfig.from_env(env, model="other", concurrency=2).model == "other"  # argument beats variable
    assert JudgeConfig.from_env(env, cache_dir=None).cache_path is None


def test_defaults_and_cache_switch() -> None:
    cfg = JudgeConfig.from_env({})
    assert not cfg.configured and cfg.concurrency == 16 and cfg.min_coverage == 0.95 and not cfg.strict_coverage
    assert cfg.cache_path == Path("~/.cache/lmms_agentic/judge").expanduser() and cfg.temperature == 0.0
    assert JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_CACHE": "off"}).cache_path is None
    openai = JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_PRESET": "gpt-4o", "LMMS_AGENTIC_JUDGE_API_KEY": "k"})
    assert (openai.model, openai.base_url) == ("gpt-4o-2024-08-06", "https://api.openai.com/v1")
    assert openai.endpoint == "https://api.openai.com/v1/chat/completions"
    assert openai.headers()["Authorization"] == "Bearer k"


@pytest.mark.parametrize(("var", "value"), [
    ("LMMS_AGENTIC_JUDGE_CONCURRENCY", "many"), ("LMMS_AGENTIC_JUDGE_TIMEOUT", "1m"),
    ("LMMS_AGENTIC_JUDGE_STRICT_COVERAGE", "perhaps"), ("LMMS_AGENTIC_JUDGE_CONCURRENCY", "0"),
    ("LMMS_AGENTIC_JUDGE_MIN_COVERAGE", "95"),
])
def test_malformed_env_values_name_the_variable(var: str, value: str) -> None:
    with pytest.raises(ValueError, match=var.rsplit("_", 1)[-1].lower() + "|" + var):
        JudgeConfig.from_env({var: value})


def test_unknown_preset_suggests() -> None:
    with pytest.raises(KeyError, match="did you mean 'gpt-4o'"):
        get_preset("gpt4o")
    with pytest.raises(KeyError, match="qwen3-14b-local"):
        JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_PRESET": "qwen3-14b"})
    assert all(p.temperature == 0.0 for p in PRESETS.values())


def test_import_reads_no_environment_and_creates_no_client() -> None:
    code = (
        "import gc, threading, httpx\n"
        "import lmms_agentic.judges, lmms_agentic.judges.mcq_fallback, lmms_agentic.judges.agreement\n"
        "import lmms_agentic.judges.testing\n"
        "assert not [o for o in gc.get_objects() if isinstance(o, httpx.Client)]\n"
        "assert threading.active_count() == 1\n"
        "import lmms_agentic.judges.client as c; assert c._default is None\n"
        "try:\n    lmms_agentic.judges.JudgeConfig.from_env()\nexcept ValueError as e:\n    print('late', e)\n"
    )
    env = {"LMMS_AGENTIC_JUDGE_CONCURRENCY": "not-a-number", "LMMS_AGENTIC_JUDGE_PRESET": "gpt-4o",
           "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "late LMMS_AGENTIC_JUDGE_CONCURRENCY" in done.stdout


def _r(score: float | None, reason: str | None = None, **dims: float) -> JudgeResult:
    return JudgeResult(score=score, unscored_reason=reason, dimensions=dims)


def test_coverage_summary_means_over_scored_only(caplog: pytest.LogCaptureFixture) -> None:
    items = [_r(1.0), _r(0.0), _r(0.5), _r(None, "parse_failure"), _r(None, "transport_error").as_dict(), None]
    with caplog.at_level(logging.WARNING):
        summary = coverage_summary("acc", items, policy=CoveragePolicy(0.95))
    assert summary["acc"] == pytest.approx(0.5) and summary["acc_coverage"] == pytest.approx(0.5)
    assert (summary["n_scored"], summary["n_unscored"]) == (3, 3)
    assert summary["unscored_reasons"] == Counter({"parse_failure": 1, "transport_error": 1, "missing": 1})
    assert "3/6 items scored (50.0% < 95%)" in caplog.text and "LMMS_AGENTIC_JUDGE_BASE_URL" in caplog.text


def test_zero_scored_is_nan_not_zero(caplog: pytest.LogCaptureFixture) -> None:
    summary = coverage_summary("acc", [_r(None, "refusal")] * 3, policy=CoveragePolicy())
    assert math.isnan(summary["acc"]) and summary["acc_coverage"] == 0.0 and summary["n_unscored"] == 3
    empty = coverage_summary("acc", [], policy=CoveragePolicy(strict=True))  # no items: warn only, even strict
    assert math.isnan(empty["acc"]) and empty["acc_coverage"] == 0.0
    assert math.isnan(judged_mean("acc", [], policy=CoveragePolicy()))


def test_strict_coverage_raises_and_good_coverage_is_quiet(caplog: pytest.LogCaptureFixture) -> None:
    items = [_r(1.0)] * 19 + [_r(None, "transport_error")]
    with pytest.raises(JudgeCoverageError, match="19/20"):
        coverage_summary("acc", items, policy=CoveragePolicy(0.96, strict=True))
    with caplog.at_level(logging.WARNING):
        assert judged_mean("acc", items, policy=CoveragePolicy(0.95)) == 1.0
    assert caplog.text == ""
    assert judged_coverage(items) == pytest.approx(0.95)


def test_coverage_policy_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_STRICT_COVERAGE", "1")
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_MIN_COVERAGE", "0.5")
    assert CoveragePolicy.from_env() == CoveragePolicy(0.5, True)
    with pytest.raises(JudgeCoverageError):
        judged_mean("acc", [_r(1.0), _r(None, "refusal"), _r(None, "refusal")])


def test_coverage_over_a_dimension_and_bad_items() -> None:
    items = [_r(0.5, grounding=1.0), _r(0.5, grounding=0.0).as_dict(), 0.25]
    assert coverage_summary("g", items[:2], dimension="grounding", warn=False)["g"] == 0.5
    assert coverage_summary("s", items, warn=False)["s"] == pytest.approx(0.5 * 2 / 3 + 0.25 / 3)
    with pytest.raises(ValueError):
        coverage_summary("x", [JudgeResult(score=None, label="B")], warn=False)
    with pytest.raises(TypeError):
        coverage_summary("x", ["0.5"], warn=False)


def test_breaker_settings_from_env_and_describe() -> None:
    cfg = JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_BREAKER": "4", "LMMS_AGENTIC_JUDGE_BREAKER_SECONDS": "2.5",
                                "LMMS_AGENTIC_JUDGE_BREAKER_COOLDOWN": "30"})
    assert (cfg.breaker_threshold, cfg.breaker_window, cfg.breaker_cooldown) == (4, 2.5, 30.0)
    assert "breaker=4 failures/2.5s (probe every 30s)" in cfg.describe()
    defaults = JudgeConfig.from_env({})
    assert (defaults.breaker_threshold, defaults.breaker_window, defaults.breaker_cooldown) == (10, 5.0, 60.0)
    assert "breaker=off" in JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_BREAKER": "0"}).describe()
    with pytest.raises(ValueError, match="LMMS_AGENTIC_JUDGE_BREAKER"):
        JudgeConfig.from_env({"LMMS_AGENTIC_JUDGE_BREAKER": "many"})
    with pytest.raises(ValueError, match="breaker"):
        JudgeConfig(breaker_window=-1)


def test_judge_unavailable_is_an_unscored_reason() -> None:
    from lmms_agentic.judges.result import JUDGE_UNAVAILABLE, UNSCORED_REASONS

    assert JUDGE_UNAVAILABLE == "judge_unavailable" and JUDGE_UNAVAILABLE in UNSCORED_REASONS
    summary = coverage_summary("acc", [_r(1.0), _r(None, JUDGE_UNAVAILABLE).as_dict()], warn=False)
    assert summary["acc"] == 1.0 and summary["unscored_reasons"] == Counter({JUDGE_UNAVAILABLE: 1})
