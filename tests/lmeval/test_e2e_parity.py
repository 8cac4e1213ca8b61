"""End-to-end: the mini splits through both harnesses' real API backends, with the same loopback model and judge.

lmms-eval runs lmms-agentic's tasks with its OpenAI-compatible chat backend (`--model openai`); lm-eval runs the
generated tasks (`--include_path "$(python -m lmms_agentic.lmeval tasks-dir)"`) with `local-chat-completions`.
The server answers from the request (text and decoded pixels), so equal requests get equal replies, and then:
every request (text and every image's pixels) reached the server from both harnesses; every metric both report is
identical, for every task and group (the permutation variants included; a metric that no row of a task counts
for is NaN under lmms-eval and not reported by lm-eval, whose groups could not skip a NaN); lm-eval's sample logs
follow the sample-record contract (the first metric carries the record, the others compact views).
"""

from __future__ import annotations

import math

import pytest

from lmms_agentic.adapters.samples import read_record
from lmms_agentic.lmeval.sources import all_sources

from .conftest import BASE_TASKS, PERMUTATION_TASKS, HarnessRun, metrics, same

pytestmark = pytest.mark.e2e
pytest.importorskip("lm_eval", reason="pip install lmms-agentic[lmeval]")
ROW_WEIGHTED = {(s.name, entry["metric"]) for sources in all_sources().values() for s in sources
                if s.is_group and "permutations" in s.relative.parts
                for entry in s.config["aggregate_metric_list"] if entry.get("weight_by_size")}


def test_every_request_and_image_reached_the_server_from_both_harnesses(plugin_runs: dict[str, HarnessRun]) -> None:
    lmms, lm = plugin_runs["lmms-eval"].requests, plugin_runs["lm-eval"].requests
    assert sum(lmms.values()) > 300, "the runs cover every task variant of the three mini splits"
    assert lmms == lm, f"only lmms-eval: {list((lmms - lm).elements())[:2]}; only lm-eval: {list(lm - lmms)[:2]}"
    images = sum(len(key.images) * n for key, n in lm.items())
    assert images >= sum(lm.values()), "every request carries at least one image or frame"
    assert max(len(key.images) for key in lm) > 8, "multi-image requests (ICL, video frames) arrive whole"
    assert any("Query: " in key.text and key.system for key in lm), "Agent-X sends its instruction as system turn"


def test_every_shared_metric_is_identical(plugin_runs: dict[str, HarnessRun]) -> None:
    lmms, lm = plugin_runs["lmms-eval"].results, plugin_runs["lm-eval"].results
    assert set(BASE_TASKS + PERMUTATION_TASKS) <= set(lmms) & set(lm)
    compared = 0
    for task in sorted(set(lmms) & set(lm)):
        ours, theirs = metrics(lmms[task]), metrics(lm[task])
        assert set(theirs) <= set(ours), f"{task}: only lm-eval has {sorted(set(theirs) - set(ours))}"
        # not reported by lm-eval: a metric no row of the task counts for (NaN under lmms-eval, see the adapter), and
        # the size-weighted metrics of permutation groups (lm-eval would weight by rows, see lmeval.generate)
        for key in set(ours) - set(theirs):
            assert math.isnan(ours[key]) or (task, key.split(",")[0]) in ROW_WEIGHTED, (task, key)
        for key, value in theirs.items():
            assert same(ours[key], value), f"{task} {key}: lmms-eval {ours[key]} != lm-eval {value}"
            compared += 1
    assert compared > 500
    assert 0 < lm["robovista"]["parity_acc,none"] < 100 and lm["agentx"]["ground_s,none"] > 0
    assert not math.isnan(lm["robovista_confidence"]["calibration_error,none"])


def test_lm_eval_samples_carry_the_record_once(plugin_runs: dict[str, HarnessRun]) -> None:
    samples = plugin_runs["lm-eval"].samples("robovista_cot")
    assert len(samples) == 21
    for sample in samples:
        first, *others = sample["metrics"]
        record = sample[first]
        assert first == "parity_acc" and record["benchmark"] == "robovista" and record["id"] == sample["doc"]["id"]
        assert all("benchmark" not in sample[name] for name in others), "views are compact, never the record"
        assert read_record({k: v for k, v in sample.items() if k != "doc"}) == record
        assert "<image>" in str(sample["arguments"]["gen_args_0"]["arg_0"])
    lmms = {s["parity_acc"]["id"]: s["parity_acc"]["pred"] for s in plugin_runs["lmms-eval"].samples("robovista_cot")}
    assert lmms == {s["parity_acc"]["id"]: s["parity_acc"]["pred"] for s in samples}
