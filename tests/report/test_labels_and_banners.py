"""What a new user trips on in reports: runs labelled by their backend, smoke data that looks like a result,
intervals that disagree between reports, error bars drawn from NaN, a second report overwriting the first, and
Agent-X format errors that come from the prompt example's own "tool" key."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.report import compare_runs, figures, write_multi_report, write_report
from lmms_agentic.report.labels import model_id, unique
from tests.reproduce.agentx_runs import write_agentx_run
from tests.reproduce.conftest import write_run

MINI = {"lmms_agentic": {"data": {"agentvqa": {"kind": "mini", "chosen_by": "LMMS_AGENTIC_DATA=mini", "rows": 15,
                                               "usable_rows": 15, "expected_rows": 1000}}}}


def _api_run(folder: Path, model_args: str, extra: dict[str, Any] | None = None) -> Path:
    return write_run(folder, lambda b, d, i: i % 2 == 0, model="openai", model_args=model_args, items=4, extra=extra)


@pytest.fixture
def charts(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every chart drawn: its title, watermark and series (``figures.grouped_bars`` still draws it)."""
    drawn: list[dict[str, Any]] = []
    original = figures.grouped_bars

    def spy(groups: Any, series: Any, target: Path, title: str, ylabel: str, ylim: Any,
            watermark: str | None = None) -> Path:
        drawn.append({"title": title, "watermark": watermark, "series": list(series)})
        return original(groups, series, target, title, ylabel, ylim, watermark)

    monkeypatch.setattr(figures, "grouped_bars", spy)
    return drawn


# ---------------------------------------------------------------- 2. labels
def test_api_runs_are_labelled_by_model_id_never_by_backend(tmp_path: Path, charts: list[dict[str, Any]]) -> None:
    _api_run(tmp_path / "a", "model_version=acme-vlm-large,max_images=4")
    _api_run(tmp_path / "b", "model_version=acme-vlm-small")
    _, text = write_multi_report([tmp_path / "a", tmp_path / "b"], tmp_path / "out", n_boot=20)
    assert "| acme-vlm-large |" in text and "| acme-vlm-small |" in text
    assert "openai (" not in text and "| openai |" not in text
    _, single = write_report(tmp_path / "a")
    assert "- model: **acme-vlm-large**" in single
    assert {c["title"].split(" (model: ")[1].split(";")[0] for c in charts[-2:]} == {"acme-vlm-large"}


def test_model_keys_in_order_and_lm_eval_dicts() -> None:
    assert model_id({"model_args": "pretrained=/ckpt/p,model=m1,model_version=v1"}) == "m1"
    assert model_id({"model_args": "model_version=v1,pretrained=/ckpt/p"}) == "v1"
    assert model_id({"model_args": {"pretrained": "Org/Name-7B", "dtype": "bfloat16"}}) == "Org/Name-7B"
    assert model_id({"model_args": "max_images=4"}) is None


def test_labels_are_never_identical() -> None:
    # the same model in two folders both called "out": the folder name alone does not separate them
    assert len(set(unique(["m", "m", "n"], ["out", "out", "x"]))) == 3
    assert unique(["m", "m"], ["a", "b"]) == ["m (a)", "m (b)"]


def test_label_override_on_the_command_line(tmp_path: Path) -> None:
    _api_run(tmp_path / "a", "model_version=acme-vlm-large")
    _api_run(tmp_path / "b", "model_version=acme-vlm-small")
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "report", str(tmp_path / "a"), str(tmp_path / "b"),
                           "--output", str(tmp_path / "out"), "--label", "large (T=0)", "--label", "small"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out" / "report.md").read_text()
    assert "| large (T=0) |" in text and "| small |" in text and "acme-vlm" in text  # the id stays in the header


# ---------------------------------------------------------------- 3. banners and watermarks
def test_a_mini_split_run_says_so_everywhere(tmp_path: Path, charts: list[dict[str, Any]]) -> None:
    _api_run(tmp_path / "a", "model_version=acme-vlm-large", MINI)
    _api_run(tmp_path / "b", "model_version=acme-vlm-small")
    banner = "> **SMOKE DATA — mini split of agentvqa (15 of 1,000 rows): not a result**"
    _, single = write_report(tmp_path / "a")
    assert single.startswith(banner)
    assert charts[-1]["watermark"] == "mini split — not a result"
    _, multi = write_multi_report([tmp_path / "a", tmp_path / "b"], tmp_path / "out", n_boot=20)
    assert multi.startswith("> **SMOKE DATA — acme-vlm-large: mini split of agentvqa (15 of 1,000 rows)")
    assert "| acme-vlm-large [mini split] |" in multi and "| acme-vlm-small |" in multi
    assert {c["watermark"] for c in charts[1:]} == {"mini split — not a result"}
    table = compare_runs(tmp_path / "a", tmp_path / "b")
    assert "A: SMOKE DATA — mini split of agentvqa (15 of 1,000 rows): not a result" in table


def test_a_partial_run_gets_a_banner_and_a_watermark(tmp_path: Path, charts: list[dict[str, Any]]) -> None:
    _api_run(tmp_path / "a", "model_version=acme-vlm-large",
             {"config": {"model": "openai", "model_args": "model_version=acme-vlm-large", "limit": 4}})
    _, text = write_report(tmp_path / "a")
    assert text.startswith("> **PARTIAL RUN — --limit 4: at most 4 items per task")
    assert charts[-1]["watermark"] == "partial run — not a result"
    counts = {"n-samples": {"agentvqa_games": {"original": 40, "effective": 4}}}
    _api_run(tmp_path / "b", "model_version=acme-vlm-large", counts)
    assert write_report(tmp_path / "b")[1].startswith(
        "> **PARTIAL RUN — fewer items evaluated than the tasks have (agentvqa_games 4 of 40)")
    local = {"lmms_agentic": {"data": {"agentvqa": {"kind": "local", "chosen_by": "LMMS_AGENTIC_DATA=/data",
                                                    "usable_rows": 900, "expected_rows": 1000}}}}
    _api_run(tmp_path / "c", "model_version=acme-vlm-large", local)
    assert write_report(tmp_path / "c")[1].startswith(
        "> **PARTIAL DATA — agentvqa: 900 of 1,000 rows read (LMMS_AGENTIC_DATA=/data)")
    full = {"lmms_agentic": {"data": {"agentvqa": {"kind": "hub", "usable_rows": 1000, "expected_rows": 1000}}}}
    _api_run(tmp_path / "d", "model_version=acme-vlm-large", full)
    assert write_report(tmp_path / "d")[1].startswith("# lmms-agentic run report")
    assert charts[-1]["watermark"] is None


def test_the_terminal_repeats_the_banner_under_the_path(tmp_path: Path) -> None:
    _api_run(tmp_path / "a", "model_version=acme-vlm-large", MINI)
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "report", str(tmp_path / "a")],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    tail = done.stdout.strip().splitlines()[-2:]
    assert tail[0].startswith("report written to ") and "SMOKE DATA — mini split of agentvqa" in tail[1]


# ---------------------------------------------------------------- 9. intervals
def _single_interval(text: str, variant: str) -> str:
    match = re.search(rf"^\| {variant} \| \d+ \| [^|]+ \| [\d.]+ (\[[\d., ]+\]) \|", text, re.MULTILINE)
    assert match, text
    return match.group(1)


def test_one_accuracy_has_one_interval_in_both_reports(tmp_path: Path) -> None:
    write_run(tmp_path / "a", lambda b, d, i: i % 3 == 0, model_args="model=Qwen/Qwen2.5-VL-7B-Instruct", items=10)
    write_run(tmp_path / "b", lambda b, d, i: i % 2 == 0, model_args="model=Qwen/Qwen3-VL-8B-Instruct", items=10)
    _, single = write_report(tmp_path / "a")
    _, multi = write_multi_report([tmp_path / "a", tmp_path / "b"], tmp_path / "out", n_boot=20)
    for benchmark in ("robovista", "agentvqa"):
        interval = _single_interval(single, benchmark)
        section = multi.split(f"(`{benchmark}`)")[1]
        assert re.search(rf"\| qwen2_5_vl_7b \| [\d.]+ {re.escape(interval)} n=30", section), (interval, section)
    assert "95% Wilson" in single and "95% Wilson" in multi


def test_no_error_bar_is_drawn_from_a_nan_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.figure

    saved: list[Any] = []
    original = matplotlib.figure.Figure.savefig

    def keep(self: Any, *args: Any, **kwargs: Any) -> Any:
        saved.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)
    series = [figures.Series("m", {"a": (50.0, math.nan, math.nan), "b": (40.0, 30.0, 50.0)}, {})]
    figures.grouped_bars(["a", "b"], series, tmp_path / "c.png", "t", "y", (0.0, 100.0))
    ax = saved[0].axes[0]
    heights = [abs(seg[1][1] - seg[0][1]) for collection in ax.collections if hasattr(collection, "get_segments")
               for seg in collection.get_segments()]
    assert heights == [pytest.approx(20.0)]  # one error bar (b's), none of zero height for a
    assert "no error bar on 1 bar(s)" in ax.get_xlabel()


def test_a_single_run_chart_has_intervals(tmp_path: Path, charts: list[dict[str, Any]]) -> None:
    write_run(tmp_path, lambda b, d, i: i % 2 == 0, model_args="model=Qwen/Qwen2.5-VL-7B-Instruct", items=6)
    write_report(tmp_path)
    cells = [cell for chart in charts for s in chart["series"] for cell in s.cells.values()]
    assert cells and all(not math.isnan(low) and low < value < high for value, low, high in cells)


def test_the_export_starts_no_judge_and_names_only_the_plugins_pinned_one() -> None:
    from lmms_agentic.judges.config import get_preset
    from lmms_agentic.tasks.agentx import upstream

    pinned = get_preset("gpt-4o").model
    text = Path(upstream.__file__).read_text(encoding="utf-8")
    assert "getenv" not in text and "environ" not in text, "no variable may switch a judge on in the export"
    assert set(re.findall(r"gpt-4o-\d{4}-\d{2}-\d{2}", text)) <= {pinned}


# ---------------------------------------------------------------- 10. second report, the "tool" key
def test_a_second_multi_report_keeps_the_first(tmp_path: Path) -> None:
    _api_run(tmp_path / "a", "model_version=acme-vlm-large")
    _api_run(tmp_path / "b", "model_version=acme-vlm-small")
    _api_run(tmp_path / "c", "model_version=acme-vlm-tiny")
    first, text = write_multi_report([tmp_path / "a", tmp_path / "b"], tmp_path / "out", n_boot=20)
    second, other = write_multi_report([tmp_path / "a", tmp_path / "c"], tmp_path / "out", n_boot=20)
    assert first == tmp_path / "out" / "report.md" and first.read_text() == text
    assert second == tmp_path / "out-2" / "report.md" and (tmp_path / "out-2" / "scores.csv").is_file()
    assert f"`{tmp_path / 'out'}` holds an earlier report, left as it was" in other
    default = write_multi_report([tmp_path / "a", tmp_path / "c"], n_boot=20)[0]
    assert default == tmp_path / "multi_report" / "report.md"
    again = write_multi_report([tmp_path / "a", tmp_path / "b"], n_boot=20)[0]
    assert again == tmp_path / "multi_report-2" / "report.md"


def _trace(tool_key: str, final: bool = True) -> str:
    step = {"step": 1, "task": "read the sign", tool_key: "OCR", "tool_output": "STOP", "thought": "a stop sign"}
    data: dict[str, Any] = {"query": "q", "reasoning_steps": [step]}
    if final:
        data["final_answer"] = {"value": "stop", "justification": "the sign says so"}
    return json.dumps(data)


def _agentx_with_replies(folder: Path, replies: list[str], model_args: str) -> None:
    results = write_agentx_run(folder, [1.0] * len(replies), model_args=model_args)
    samples = next(folder.glob("*_samples_agentx.jsonl"))
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    for line, reply in zip(lines, replies, strict=True):
        line["filtered_resps"] = reply  # as lmms-eval logs it (no `resps` when they are equal)
        line["ground_s"]["format_ok"] = '"tool_used"' in reply and '"final_answer"' in reply
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    data = json.loads(results.read_text())
    data["results"]["agentx"]["format_error_rate,none"] = sum(
        not line["ground_s"]["format_ok"] for line in lines) / len(lines)
    results.write_text(json.dumps(data))


def test_format_errors_from_the_tool_key_get_a_hint(tmp_path: Path) -> None:
    _agentx_with_replies(tmp_path / "a", [_trace("tool")] * 3 + [_trace("tool_used")], "model=acme-a")
    _agentx_with_replies(tmp_path / "b", [_trace("tool_used", final=False)] * 4, "model=acme-b")
    _, single = write_report(tmp_path / "a")
    assert "**Format errors of `agentx`: 3 of 3 come from the \"tool\" key.**" in single
    assert "Format errors of" not in write_report(tmp_path / "b")[1]  # another cause: no hint
    _, multi = write_multi_report([tmp_path / "a", tmp_path / "b"], tmp_path / "out", n_boot=20)
    assert "**Format errors of `agentx` of `acme-a`: 3 of 3 come from the \"tool\" key.**" in multi
    assert "of `acme-b`" not in multi
