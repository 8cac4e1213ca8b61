"""Run report: pooling a group's sample files, letter shares, calibration column, charts."""

from __future__ import annotations

import json
from pathlib import Path

from lmms_agentic.report import collect, summary, write_report


def _payload(i: int, domain: str, correct: bool, confidence: float | None) -> dict[str, object]:
    return {"id": f"q{i}", "domain": domain, "correct": correct, "correct_strict": correct,
            "pred": "A" if correct else None, "pred_strict": "A" if correct else None, "answer": "A",
            "confidence": confidence, "ability_split": "SC"}


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
        lines = [json.dumps({"doc_id": n, "score_a": p, "score_b": p}) for n, p in enumerate(payloads)]
        (folder / f"{stamp}_samples_{task}.jsonl").write_text("\n".join(lines) + "\n")


def test_groups_are_pooled_and_standalone_tasks_kept(tmp_path: Path) -> None:
    _write_run(tmp_path)
    _, variants = collect(tmp_path / "20260101_000000_results.json")
    assert {v.name: len(v.items) for v in variants} == {"bench": 3, "bench_conf": 2}


def test_report_table_chart_and_summary(tmp_path: Path) -> None:
    _write_run(tmp_path)
    path, text = write_report(tmp_path)
    assert path.name == "20260101_000000_report.md" and path.read_text() == text
    assert "| bench | 3 | 61.0 | 66.7 | 66.7 | 33.3 | - | A 100% | A 67%, none 33% |" in text
    assert "| bench_conf | 2 | - | 50.0 | 50.0 | 50.0 | 10.0 (1/2 stated) |" in text
    assert "| bench | domain | x | 2 | 50.0 |" in text
    assert (tmp_path / "20260101_000000_bench_domains.png").stat().st_size > 1000
    assert "## Breakdowns" not in summary(text) and "| bench |" in summary(text)
