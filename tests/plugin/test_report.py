"""Run report: pooling a group's sample files, letter shares, calibration column, charts.

The runs are hand-written lmms-eval output folders whose records name a real benchmark (AgentVQA: percent scale,
headline counts `correct`); the report learns everything else from that benchmark's manifest."""

from __future__ import annotations

import json
from pathlib import Path

from lmms_agentic.report import collect, summary, write_report


def _payload(i: int, domain: str, correct: bool, confidence: float | None) -> dict[str, object]:
    return {"benchmark": "agentvqa", "id": f"q{i}", "domain": domain, "source": "aitw", "correct": correct,
            "pred": "A" if correct else None, "answer": "A", "confidence": confidence}


def _write_run(folder: Path) -> None:
    stamp = "20260101_000000"
    (folder / f"{stamp}_results.json").write_text(json.dumps({
        "group_subtasks": {"bench": ["bench_x", "bench_y"], "bench_conf": []},
        "versions": {"bench": 1.0, "bench_conf": 2.0}, "config": {"model": "dummy", "model_args": ""},
        "results": {"bench": {"accuracy,none": 61.0}},
    }))
    rows = {"bench_x": [_payload(0, "x", True, None), _payload(1, "x", False, None)],
            "bench_y": [_payload(2, "y", True, None)],
            "bench_conf": [_payload(3, "x", True, 0.9), _payload(4, "x", False, None)]}
    for task, payloads in rows.items():
        lines = [json.dumps({"doc_id": n, "accuracy": p, "no_answer_rate": {"score": 0.0}})
                 for n, p in enumerate(payloads)]
        (folder / f"{stamp}_samples_{task}.jsonl").write_text("\n".join(lines) + "\n")


def test_groups_are_pooled_and_standalone_tasks_kept(tmp_path: Path) -> None:
    _write_run(tmp_path)
    _, variants = collect(tmp_path / "20260101_000000_results.json")
    assert {v.name: len(v.items) for v in variants} == {"bench": 3, "bench_conf": 2}


def test_report_table_chart_and_summary(tmp_path: Path) -> None:
    _write_run(tmp_path)
    path, text = write_report(tmp_path)
    assert path.name == "20260101_000000_report.md" and path.read_text() == text
    # 95% Wilson intervals (the multi-model report's): 2 of 3, 1 of 2
    assert "| bench | 3 | 61.0 | 66.7 [20.8, 93.9] | - | 33.3 | - | A 100% | A 67%, none 33% |" in text
    assert "| bench_conf | 2 | - | 50.0 [9.5, 90.5] | - | 50.0 | 10.0 (1/2 stated) |" in text
    assert "| bench | domain | x | 2 | 50.0 |" in text
    assert (tmp_path / "20260101_000000_agentvqa_domains.png").stat().st_size > 1000
    assert "## Breakdowns" not in summary(text) and "| bench |" in summary(text)


def _write_permuted_run(folder: Path, correct_pattern: list[bool]) -> None:
    stamp = "20260102_000000"
    (folder / f"{stamp}_results.json").write_text(json.dumps({
        "group_subtasks": {"bench_circular": []}, "results": {"bench_circular": {"orig_acc,none": 50.0}},
        "config": {"model": "m"}}))
    lines = []
    for n, ok in enumerate(correct_pattern):
        group, perm = n // 2, n % 2
        payload = {"benchmark": "agentvqa", "id": f"q{group}~circular{perm}", "group_id": f"q{group}",
                   "perm_index": perm, "permutation": [perm, 1 - perm], "domain": "x", "source": "aitw",
                   "correct": ok, "pred": "A", "answer": "A" if ok else "B", "chosen": 0 if ok else perm,
                   "loop": {"loop": False, "truncated": False}}
        lines.append(json.dumps({"doc_id": n, "perm_mean_acc": payload}))
    (folder / f"{stamp}_samples_bench_circular.jsonl").write_text("\n".join(lines) + "\n")


def test_robustness_section_and_paired_comparison(tmp_path: Path) -> None:
    from lmms_agentic.report import compare_runs

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _write_permuted_run(tmp_path / "a", [True, False, True, True, False, False, True, True])
    _write_permuted_run(tmp_path / "b", [True, True, True, True, True, True, True, True])
    _, text = write_report(tmp_path / "a")
    assert "## Option permutations" in text
    assert "| bench_circular | 4 | 75.0 | 62.5 ± 17.7 | 50.0 [" in text
    table = compare_runs(tmp_path / "a", tmp_path / "b")
    assert "| bench_circular | 8 | 62.5 | 100.0 | +37.5 [" in table and "| 3 | 0 |" in table


def test_inputs_that_are_not_lmms_eval_outputs_are_named(tmp_path: Path) -> None:
    import pytest

    from lmms_agentic.report import NoResultsError, ReportInputError

    with pytest.raises(NoResultsError, match=f"{tmp_path}: not an lmms-eval or lm-eval output"):
        write_report(tmp_path)
    (tmp_path / "x_results.json").write_text("[]")
    with pytest.raises(ReportInputError,
                       match=r"x_results.json: not an lmms-eval or lm-eval results file \(no 'results'"):
        write_report(tmp_path)
    _write_run(tmp_path)
    (tmp_path / "x_results.json").unlink()
    (tmp_path / "20260101_000000_samples_bench_y.jsonl").write_text("[1]\n")
    with pytest.raises(ReportInputError, match=r"samples_bench_y.jsonl, line 1: not a sample line"):
        write_report(tmp_path)


def test_thinking_loops_section_separates_looped_samples(tmp_path: Path) -> None:
    """Accuracy over all samples, without the looped ones and of the looped ones; a reply that used the whole
    token budget without an answer counts as cut at the limit even without a visible loop."""
    stamp = "20260103_000000"
    (tmp_path / f"{stamp}_results.json").write_text(json.dumps({
        "group_subtasks": {}, "results": {"bench_loops": {"accuracy,none": 50.0}}, "config": {"model": "m"},
        "configs": {"bench_loops": {"generation_kwargs": {"max_new_tokens": 100}}}}))
    rows = [  # (looped, correct, answered, output tokens)
        (False, True, True, 20), (False, True, True, 30), (False, False, True, 40), (False, False, False, 100),
        (True, False, False, 100), (True, False, False, 100),
    ]
    lines = []
    for n, (looped, ok, answered, tokens) in enumerate(rows):
        record = {"benchmark": "agentvqa", "id": f"q{n}", "domain": "x", "source": "aitw", "correct": ok,
                  "pred": ("A" if ok else "B") if answered else None, "answer": "A",
                  "loop": {"loop": looped, "truncated": looped and not answered}}
        lines.append(json.dumps({"doc_id": n, "accuracy": record, "token_counts": [{"output_tokens": tokens}]}))
    (tmp_path / f"{stamp}_samples_bench_loops.jsonl").write_text("\n".join(lines) + "\n")
    _, text = write_report(tmp_path)
    assert "## Thinking loops" in text
    # 6 samples: 2 looped (33.3%), 2 end in a loop unanswered, 3 used the budget unanswered; accuracy 33.3 over
    # all, 50.0 without the looped ones, 0.0 of the looped ones
    assert "| bench_loops | 6 | 33.3 | 33.3 | 50.0 | 33.3 | 50.0 | 0.0 (2) |" in text


def test_no_loops_gives_one_line(tmp_path: Path) -> None:
    _write_run(tmp_path)
    for path in tmp_path.glob("*_samples_*.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines:
            line["accuracy"]["loop"] = {"loop": False, "truncated": False}
        path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    _, text = write_report(tmp_path)
    assert "No reply ends in a thinking loop" in text


# ---------------------------------------------------------------- run folders: several runs, lm-eval, partial runs
def test_a_folder_with_two_runs_of_one_model_reports_both_with_a_note(tmp_path: Path) -> None:
    from tests.reproduce.agentx_runs import write_agentx_run
    from tests.reproduce.conftest import write_run

    write_run(tmp_path, lambda b, d, i: i % 2 == 0, model_args="model=Qwen/Qwen2.5-VL-7B-Instruct", items=4)
    write_agentx_run(tmp_path, [1.0, 0.5], stamp="20260107_000000")
    _, text = write_report(tmp_path)
    assert "- note: combined 2 runs of this model" in text
    assert "| robovista |" in text and "| agentvqa |" in text and "| agentx | unit |" in text
    write_agentx_run(tmp_path, [0.0, 0.0], stamp="20260108_000000")  # Agent-X again: the newer one wins
    _, text = write_report(tmp_path)
    assert "ground_s 0.00" in text and "older results of agentx in 20260107_000000_results.json are replaced" in text


def test_a_folder_with_runs_of_two_models_names_the_folders(tmp_path: Path) -> None:
    import pytest

    from lmms_agentic.report import ReportInputError
    from tests.reproduce.agentx_runs import write_agentx_run

    write_agentx_run(tmp_path / "m1", [1.0])
    write_agentx_run(tmp_path / "m2", [1.0], model_args="model=other")
    with pytest.raises(ReportInputError, match=r"holds runs of 2 models .* pass one model's folder"):
        write_report(tmp_path)


def test_agentx_only_run_partial_versions_and_coverage(tmp_path: Path) -> None:
    from tests.reproduce.agentx_runs import write_agentx_run

    results = write_agentx_run(tmp_path, [1.0, 0.0, None, 1.0], limit=4)
    data = json.loads(results.read_text())
    data["lmms_eval_version"] = "main@2bc4ca0"  # what lmms-eval records: the launch folder's git commit
    results.write_text(json.dumps(data))
    _, text = write_report(tmp_path)
    assert "no multiple-choice task with sample records in this run" in text
    assert "| benchmark / variant |" not in text and "## Breakdowns" not in text
    assert "**PARTIAL RUN**: --limit 4" in text
    assert "lmms-eval not recorded (the results file's lmms_eval_version 'main@2bc4ca0' is the git branch" in text
    assert "ground_s 0.67 (3/4 judged, 75%; LOW COVERAGE" in text and "exact_match_acc 0.50," in text
    data["lmms_agentic"] = {"version": "0.1.0", "lmms_eval": "0.7.3"}
    results.write_text(json.dumps(data))
    assert "- harness: lmms-eval 0.7.3; lmms-agentic 0.1.0" in write_report(tmp_path)[1]


def test_compare_two_agentx_runs_per_metric(tmp_path: Path) -> None:
    from lmms_agentic.report import compare_runs
    from tests.reproduce.agentx_runs import write_agentx_run

    write_agentx_run(tmp_path / "a", [0.0, 0.5, 1.0, None])
    write_agentx_run(tmp_path / "b", [1.0, 1.0, 1.0, 1.0])
    table = compare_runs(tmp_path / "a", tmp_path / "b")
    assert "no variant in common" not in table
    assert "| agentx | ground_s | 3 | 0.50 | 1.00 | +0.50 [" in table
    assert "| agentx | exact_match_acc | 4 | 0.50 | 0.50 | +0.00 [" in table


def test_a_truncated_results_or_sample_file_is_named_with_its_cause(tmp_path: Path) -> None:
    import pytest

    from lmms_agentic.report import ReportInputError

    _write_run(tmp_path)
    results = tmp_path / "20260101_000000_results.json"
    results.write_text(results.read_text()[:40])
    with pytest.raises(ReportInputError, match=r"20260101_000000_results.json: not a valid results file, JSON error "
                                               r"at line 1 column \d+ \(the file ends early"):
        write_report(tmp_path)
    _write_run(tmp_path)
    sample = tmp_path / "20260101_000000_samples_bench_x.jsonl"
    sample.write_text(sample.read_text()[:-30])
    with pytest.raises(ReportInputError, match=r"samples_bench_x.jsonl, line 2: .*the file was cut off"):
        write_report(tmp_path)


def test_an_lm_eval_folder_gives_the_same_report(tmp_path: Path) -> None:
    """The same records in lm-eval's layout (results_<date>.json, samples_<task>_<date>.jsonl, model_args as a
    dict) give the same tables as in lmms-eval's."""
    from tests.reproduce.agentx_runs import write_agentx_run

    write_agentx_run(tmp_path / "lmms", [1.0, 0.0, None, 1.0])
    write_agentx_run(tmp_path / "lm", [1.0, 0.0, None, 1.0], layout="lm-eval", stamp="2026-01-05T00-00-00.000001")
    lmms, lm = write_report(tmp_path / "lmms")[1], write_report(tmp_path / "lm")[1]
    assert "- harness: lm-eval not recorded" in lm

    def body(text: str) -> str:
        return text.split("## Other tasks")[1]

    assert body(lmms) == body(lm)
