"""Published numbers vs a run: which rows are compared, the tolerance (both sides' sampling error, not a
constant), the verdicts, and `reproduce --from` on an lmms-eval folder (no run)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic import cli, presets
from lmms_agentic.report import published
from lmms_agentic.report.runs import load_run, measure, standard_error
from lmms_agentic.reproduce.command import comparisons
from tests.reproduce.conftest import write_run


def _qwen7b(folder: Path, rate: int) -> Path:
    """A Qwen2.5-VL-7B run (by its model_args) that answers item i right when i % rate != 0."""
    write_run(folder, lambda b, d, i: i % rate != 0, model_args="model=Qwen/Qwen2.5-VL-7B-Instruct", items=40)
    return folder


def test_measure_prefers_lmms_eval_numbers_and_clusters_items(tmp_path: Path) -> None:
    run = load_run(_qwen7b(tmp_path, 4))
    overall = measure(run, "robovista", "parity_acc")
    assert overall is not None and overall.value == 75.0 and overall.n == 120 and overall.source == "results"
    assert overall.se == pytest.approx(100 * math.sqrt((91 / 122) * (31 / 122) / 120))  # plus-two estimate
    planning = measure(run, "robovista", "planning_acc")  # not aggregated by the group: pooled from the samples
    assert planning is not None and planning.source == "samples" and planning.n == 60
    domain = measure(run, "robovista", "domain_domestic_acc")  # the group has none: its subtask's headline
    assert domain is not None and domain.source == "subtask robovista_domestic" and domain.n == 40
    assert measure(run, "robovista", "calibration_error") is None
    assert standard_error([1.0, 1.0, 1.0], top=1.0) == pytest.approx(math.sqrt(0.8 * 0.2 / 3))
    assert standard_error([0.0, 0.0, 0.0]) == pytest.approx(100 * math.sqrt(0.2 * 0.8 / 3))  # percent scale
    assert standard_error([0.2, 0.4], top=1.0) == pytest.approx(0.1)


def test_tolerance_combines_both_standard_errors(tmp_path: Path) -> None:
    run = load_run(_qwen7b(tmp_path, 4))
    preset = presets.get("qwen2_5_vl_7b")
    table1 = [c for c in comparisons(run, preset, ["robovista"]) if c.row.source == "paper Table I"
              and c.row.metric == "parity_acc"]
    (c,) = table1
    ours, paper = c.ours.se, 100 * math.sqrt(0.437 * 0.563 / 474)
    assert ours is not None
    assert c.tolerance == pytest.approx(1.959964 * math.hypot(ours, paper) + 0.05, rel=1e-5)
    assert c.diff == pytest.approx(75.0 - 43.7)
    assert c.status == "MISS"


def test_rows_compared_and_verdicts(tmp_path: Path) -> None:
    run = load_run(_qwen7b(tmp_path, 2))  # 50% everywhere
    found = comparisons(run, presets.get("qwen2_5_vl_7b"))
    keys = {(c.protocol, c.row.source, c.row.metric) for c in found}
    assert ("zero_shot", "paper Table I", "domain_domestic_acc") in keys
    assert ("zero_shot", "paper Table II", "perception_acc") in keys
    assert not any(c.row.metric.endswith("_delta") for c in found)  # differences between protocols
    assert {c.protocol for c in found} == {"zero_shot"}  # the run has no CoT / ICL tasks
    assert {c.benchmark for c in found} == {"robovista"}  # Qwen2.5-VL-7B has no AgentVQA row
    verdicts = {(c.row.source, c.row.metric): c.status for c in found}
    # 50.0 vs 43.7: |6.3| <= 1.96 * sqrt(4.5^2 + 2.3^2) + 0.05, but 120 of the paper's 474 items cannot tell
    assert verdicts[("paper Table I", "parity_acc")] == "inconclusive"
    assert verdicts[("leaderboard 2026-07-06", "domain_domestic_acc")] == "match"  # 50.0 vs 43.5, n = 40 and 85
    assert verdicts[("paper Table I", "domain_domestic_acc")] == "not comparable"  # 76 items, the release 85
    tally = published.counts(found)
    assert sum(tally.values()) == len(found) and tally["not comparable"] == 3
    text = published.table(found, "t")
    assert "| robovista | zero_shot | robovista | Qwen 2.5 VL-7B (paper Table I) | parity_acc | 43.7 | 50.0 [" in text
    assert ("- not comparable: Qwen 2.5 VL-7B (paper Table I) domain_agriculture_acc: paper Table I counts 62 "
            "items in this group, the released labels 53") in text
    assert text.count("paper Table I split 62/20/76/126/46/144") == 1  # the explanation once


def test_judged_rows_follow_the_runs_judge(tmp_path: Path) -> None:
    run = load_run(_qwen7b(tmp_path, 2))
    assert published.run_judge(run) is None
    line = run.lines("robovista_domestic")[0]
    line["parity_acc"]["judge"] = {"metric": {"judge_model": "Qwen/Qwen3-14B"}}
    assert published.run_judge(run) == "Qwen3-14B"


def test_from_an_existing_folder_and_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _qwen7b(tmp_path / "run", 2)
    assert cli.main(["reproduce", "--from", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "## Reproduction: qwen2_5_vl_7b" in out and "| MISS |" in out and "match" in out
    assert cli.main(["reproduce", "--from", str(folder), "--fail-on-miss"]) == 1
    write_run(tmp_path / "other", lambda b, d, i: True, model_args="model=someone/else")
    assert cli.main(["reproduce", "--from", str(tmp_path / "other")]) == 1
    assert "cannot tell which published model this run is" in capsys.readouterr().err
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "reproduce", "--from", str(tmp_path / "missing")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (f"lmms-agentic reproduce: error: {tmp_path / 'missing'}: "
                                                    "no such file or folder")


def test_api_preset_without_its_key_stops_before_running(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    assert cli.main(["reproduce", "--preset", "gemini_2_5_pro", "--benchmark", "robovista",
                     "--output", str(tmp_path)]) == 1
    assert "needs an API key in $GEMINI_API_KEY" in capsys.readouterr().err


def _comparison(k: int, n: int, published_value: str, published_n: int | None) -> published.Comparison:
    from lmms_agentic.adapters.reference import ReferenceRow
    from lmms_agentic.report.runs import Measure

    scores = [100.0] * k + [0.0] * (n - k)
    row = ReferenceRow("M", "", "zero_shot", "", "", "parity_acc", float(published_value), published_value,
                       "percent", published_n, "paper", "")
    ours = Measure(100.0 * k / n, standard_error(scores), n, "results")
    return published.Comparison("robovista", "zero_shot", "robovista", row, ours, 1.0, reference_n=published_n)


@pytest.mark.parametrize(("k", "n", "paper", "paper_n", "verdict"), [
    (0, 2, "50.0", 474, "inconclusive"),   # the case: 0.0 [0.0, 60.0] at n=2 against 50.0
    (1, 2, "50.0", 474, "inconclusive"),
    (0, 2, "100.0", 474, "MISS"),          # a difference beyond the tolerance is a miss at any size
    (213, 474, "43.7", 474, "match"),      # a full run within the tolerance
    (260, 474, "43.7", 474, "MISS"),
    (66, 150, "43.7", 474, "match"),       # about a third of the items: still conclusive
    (44, 100, "43.7", 474, "inconclusive"),
    (9, 20, "45.0", 20, "match"),          # a small group measured in full
    (1, 2, "50.0", None, "match"),         # no published item count: no reference to judge the size by
])
def test_verdicts_follow_the_runs_size(k: int, n: int, paper: str, paper_n: int | None, verdict: str) -> None:
    c = _comparison(k, n, paper, paper_n)
    assert c.status == verdict, (c.diff, c.tolerance, c.reference_tolerance)
    if verdict == "inconclusive":
        assert c.tolerance is not None and c.reference_tolerance is not None
        assert abs(c.diff) <= c.tolerance and c.tolerance > published.CONCLUSIVE_RATIO * c.reference_tolerance


def test_headline_counts_all_three_verdicts() -> None:
    found = [_comparison(0, 2, "50.0", 474), _comparison(213, 474, "43.7", 474), _comparison(260, 474, "43.7", 474)]
    assert published.headline(found) == "1 match, 1 MISS, 1 inconclusive (of 3 with a verdict)"
    assert published.headline(found[1:2]) == "1 match, 0 MISS, 0 inconclusive (of 1 with a verdict)"
