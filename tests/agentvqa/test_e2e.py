"""End-to-end: the real `lmms-eval` CLI on the AgentVQA mini split (dummy and tiny Qwen2.5-VL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmms_agentic.reproduce.baselines import constant_letter_table, gold_letters

from ..conftest import CliRun, run_lmms_eval

pytestmark = pytest.mark.e2e
MINI = {"LMMS_AGENTIC_DATA": "mini"}
DOMAINS = ["web_agents", "egocentric_videos", "games", "spatial_planning", "robotics"]


@pytest.fixture(scope="module")
def dummy_run(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    run = run_lmms_eval(["--model", "dummy", "--tasks", "agentvqa,agentvqa_coords_norm1000_yx,"
                         "agentvqa_web_agents_nohistory"], tmp_path_factory.mktemp("dummy"), env=MINI)
    run.assert_ok()
    return run


def test_overall_is_the_mean_of_domains_and_equals_the_always_a_baseline(dummy_run: CliRun,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    baseline = constant_letter_table(gold_letters("agentvqa"), "ABCD")["A"]
    results = dummy_run.results["results"]
    for domain in DOMAINS:
        assert results[f"agentvqa_{domain}"]["accuracy,none"] == pytest.approx(baseline[domain], abs=1e-9)
    assert results["agentvqa"]["accuracy,none"] == pytest.approx(baseline["macro"], abs=1e-9)
    assert results["agentvqa_coords_norm1000_yx"]["accuracy,none"] == pytest.approx(baseline["macro"], abs=1e-9)


def test_per_source_metrics_and_sample_logs(dummy_run: CliRun) -> None:
    web = dummy_run.results["results"]["agentvqa_web_agents"]
    assert web["src_aitw,none"] == 100.0 and web["src_screenspot,none"] == 0.0
    samples = {s["accuracy"]["id"]: s["accuracy"] for s in dummy_run.samples("agentvqa_coords_norm1000_yx_web_agents")}
    assert samples["aitw_0001"]["coord_convention"] == "norm1000_yx"
    assert {s["accuracy"]["with_history"] for s in dummy_run.samples("agentvqa_web_agents_nohistory")} == {False}


def test_tiny_vlm_runs_image_trajectory_and_video_items(tmp_path: Path) -> None:
    from lmms_agentic.devtools.tiny_vlm import build_tiny_qwen2_5_vl, model_args

    checkpoint = build_tiny_qwen2_5_vl(tmp_path / "tiny")
    run = run_lmms_eval(["--model", "qwen2_5_vl", "--model_args", model_args(checkpoint), "--tasks", "agentvqa",
                         "--gen_kwargs", "max_new_tokens=4", "--batch_size", "1"], tmp_path / "out", env=MINI)
    run.assert_ok()
    inputs = {s["accuracy"]["id"]: s for task in [f"agentvqa_{d}" for d in DOMAINS] for s in run.samples(task)}
    assert len(inputs) == 15
    for item in ("aitw_0001", "space10_0001", "vsibench_0001", "marioqa_0001", "screenspot_0001"):
        assert inputs[item]["token_counts"][0]["output_tokens"] == 4, item
    assert inputs["aitw_0001"]["accuracy"]["with_history"] is True
