"""`python -m lmms_agentic export-inspect`: real lmms-eval runs (the viewer's: scripted MCQ and Agent-X with a judge,
an executed-tools episode, hostile replies) and a real lm-eval run without a judge, written as Inspect logs and read
back with Inspect's own reader: one log per task and model, every logged sample, the results file's numbers, the
logged per-sample values, hostile text kept as text, tool rounds as tool messages, unscored items not scored as wrong,
media referenced by path; and the one line a user gets without the extra."""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters.samples import read_record
from lmms_agentic.cli import main
from lmms_agentic.report.run_files import open_run
from lmms_agentic.report.runs import load_run
from lmms_agentic.tasks.agentx.tools import returned_image
from lmms_agentic.viewer import overview

from .runs import HOSTILE, ViewerRuns, kept_or_made

needs_inspect = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None,
                                   reason="inspect_ai not installed (pip install -e '.[inspect]')")
Logs = dict[str, list[Any]]
"""Run name -> the Inspect logs written for it, as Inspect's reader reads them back."""


def _read_back(folder: Path) -> list[Any]:
    from inspect_ai.log import read_eval_log

    return [read_eval_log(str(path)) for path in sorted(folder.iterdir())]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> ViewerRuns:
    return kept_or_made(tmp_path_factory)


@pytest.fixture(scope="module")
def lm_eval_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lm-eval on AgentVQA and Agent-X (mini splits, a loopback model) with no judge: Agent-X stays unscored."""
    pytest.importorskip("lm_eval", reason="lm-eval not installed (pip install -e '.[dev]')")
    from ..lmeval.conftest import _book, _run, lmeval_tasks_dir, no_judge_env

    output = tmp_path_factory.mktemp("lm-eval") / "run"
    _run("lm-eval", _book(), output, no_judge_env(), ["agentvqa", "agentx"], lmeval_tasks_dir(),
         isolated=False).assert_ok(["agentvqa", "agentx"])
    return output


@pytest.fixture(scope="module")
def logs(runs: ViewerRuns, lm_eval_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Logs:
    from lmms_agentic.viewer.inspect_export import export

    folder = tmp_path_factory.mktemp("inspect")
    found = {}
    for name, path in {"scripted": runs.scripted, "tools": runs.tools, "hostile": runs.hostile,
                       "lm-eval": lm_eval_run}.items():
        export(path, folder / name)
        found[name] = _read_back(folder / name)
    return found


def _paths(runs: ViewerRuns, lm_eval_run: Path) -> dict[str, Path]:
    return {"scripted": runs.scripted, "tools": runs.tools, "hostile": runs.hostile, "lm-eval": lm_eval_run}


def _logged_lines(run: Path, task: str) -> list[dict[str, Any]]:
    """The sample lines of a task's leaves, read straight from the sample files."""
    files = open_run(run)
    loaded = load_run(run)
    lines = []
    for leaf in loaded.leaves(task):
        path = files.sample_file(leaf)
        if path is not None:
            lines += [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text.strip()]
    return lines


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


NAMES = ["scripted", "tools", "hostile", "lm-eval"]


@needs_inspect
@pytest.mark.e2e
@pytest.mark.parametrize("name", NAMES)
def test_one_log_per_task_with_every_logged_sample(name: str, logs: Logs, runs: ViewerRuns,
                                                   lm_eval_run: Path) -> None:
    run = _paths(runs, lm_eval_run)[name]
    loaded = load_run(run)
    assert sorted(log.eval.task for log in logs[name]) == sorted(loaded.top_level())
    for log in logs[name]:
        lines = _logged_lines(run, log.eval.task)
        assert log.status == "success" and len(lines) > 0
        assert len(log.samples) == len(lines) == log.results.total_samples == log.eval.dataset.samples
        assert len({sample.id for sample in log.samples}) == len(log.samples)  # ids unique within the log
        assert log.eval.model.endswith(f"/{loaded.label}")
        assert str(log.eval.task_version) == str(loaded.results["versions"][log.eval.task])


@needs_inspect
@pytest.mark.e2e
@pytest.mark.parametrize("name", NAMES)
def test_the_scores_are_the_results_files_numbers(name: str, logs: Logs, runs: ViewerRuns,
                                                  lm_eval_run: Path) -> None:
    loaded = load_run(_paths(runs, lm_eval_run)[name])
    for log in logs[name]:
        results = json.loads(Path(log.eval.metadata["results_file"]).read_text(encoding="utf-8"))
        row = results["results"][log.eval.task]
        numeric = {key.split(",")[0] for key, value in row.items() if "," in key and "_stderr" not in key
                   and isinstance(value, int | float) and not isinstance(value, bool)}
        scores = {score.name: score for score in log.results.scores}
        assert set(scores) == numeric and numeric
        assert log.results.scores[0].name == overview.headline(loaded, log.eval.task)
        for metric, score in scores.items():
            assert _same(score.metrics[metric].value, float(row[f"{metric},none"])), (log.eval.task, metric)
            stderr = row.get(f"{metric}_stderr,none")
            assert ("stderr" in score.metrics) == isinstance(stderr, int | float)
            if isinstance(stderr, int | float):
                assert _same(score.metrics["stderr"].value, float(stderr))


@needs_inspect
@pytest.mark.e2e
def test_an_mcq_sample_carries_its_value_letter_and_rule(logs: Logs, runs: ViewerRuns) -> None:
    log = next(log for log in logs["scripted"] if log.eval.task == "robovista")
    lines = {str(read_record(line)["id"]): line for line in _logged_lines(runs.scripted, "robovista")}
    for sample in log.samples:
        record = read_record(lines[str(sample.id)])
        score = sample.scores["parity_acc"]
        assert score.value == record["score"] and score.answer == str(record["pred"])
        assert f"rule: {record['rule']}" in score.explanation and f"gold: {record['answer']}" in score.explanation
        assert sample.target == record["answer"] and sample.metadata["domain"] == record["domain"]
        assert sample.input[0].text == lines[str(sample.id)]["input"]


@needs_inspect
@pytest.mark.e2e
def test_a_permutation_row_counts_its_order(logs: Logs) -> None:
    log = next(log for log in logs["scripted"] if log.eval.task == "agentvqa_random5")
    for sample in log.samples:
        order = sample.metadata["permutation"]
        assert sample.scores["perm_mean_acc"].value == (100.0 if order["correct"] == "true" else 0.0)
        assert order["group_id"] in str(sample.id) and order["permutation"].startswith("[")


@needs_inspect
@pytest.mark.e2e
def test_a_hostile_reply_round_trips_as_text(logs: Logs) -> None:
    for log in logs["hostile"]:
        for sample in log.samples:
            assert sample.output.completion == HOSTILE
            assert sample.messages[-1].role == "assistant" and sample.messages[-1].text == HOSTILE
            assert next(iter(sample.scores.values())).answer == "B"  # its "B" is still the letter read
    episode = next(s for s in logs["tools"][0].samples if s.id == "0")
    assert {m.text for m in episode.messages if m.role == "assistant"} == {HOSTILE}


@needs_inspect
@pytest.mark.e2e
def test_tool_rounds_are_tool_calls_and_tool_messages(logs: Logs, runs: ViewerRuns) -> None:
    from inspect_ai.log import resolve_sample_attachments
    from inspect_ai.model import ContentImage

    log = logs["tools"][0]
    assert log.eval.task == "agentx_tools" and log.plan.steps[0].solver == "executed-tools loop"
    rounds = {str(read_record(line)["id"]): read_record(line)["rounds"]
              for line in _logged_lines(runs.tools, "agentx_tools")}
    gold = next(s for s in log.samples if s.id == "3")
    assert [m.role for m in gold.messages] == ["user", *["assistant", "tool"] * 3, "assistant"]
    calls = [m.tool_calls[0] for m in gold.messages if m.role == "assistant" and m.tool_calls]
    assert [(c.function, c.arguments) for c in calls] == [
        ("OCR", {"image": "image_1"}), ("Calculator", {"expression": "8*2+5*6"}),
        ("DrawBoundingBox", {"image": "image_1", "bbox": "(2, 2, 30, 30)", "annotation": None})]
    tools = [m for m in gold.messages if m.role == "tool"]
    assert [m.tool_call_id for m in tools] == [c.id for c in calls] and tools[1].text == "46"
    images = [part for part in tools[2].content if isinstance(part, ContentImage)]  # the returned image, inline
    inline = [part for message in resolve_sample_attachments(gold, "full").messages if message.role == "tool"
              for part in message.content if isinstance(part, ContentImage)]  # (Inspect stores it as an attachment)
    assert len(images) == 1 and [part.image for part in inline] == [
        returned_image.read(rounds["3"][2]["returned_image"]).data_uri()]
    assert "attached as image_2" in tools[2].text and all(isinstance(m.content, str) for m in tools[:2])
    assert all(m.error is None for m in tools) and json.loads(gold.output.completion)["final_answer"]["value"] == "46"
    failing = next(s for s in log.samples if s.id == "4")  # divides by zero until the step limit
    errors = [m for m in failing.messages if m.role == "tool"]
    assert len(errors) == len(rounds["4"]) and all(m.error is not None for m in errors)
    assert "ZeroDivisionError" in errors[0].error.message


@needs_inspect
@pytest.mark.e2e
def test_judged_scores_carry_the_judges_verdict(logs: Logs) -> None:
    log = next(log for log in logs["scripted"] if log.eval.task == "agentx")
    for sample in log.samples:
        judged = [score for name, score in sample.scores.items() if name in ("ground_s", "tool_p", "goal_acc")]
        assert judged and all(s.value == 0.5 and "judge reply: {'Score': 0.5}" in s.explanation for s in judged)
        assert all(s.metadata["judge"]["judge_model"] == "scripted-judge-2024-01-01" for s in judged)


@needs_inspect
@pytest.mark.e2e
def test_an_unscored_sample_is_not_scored_as_wrong(logs: Logs) -> None:
    log = next(log for log in logs["lm-eval"] if log.eval.task == "agentx")
    goal = next(score for score in log.results.scores if score.name == "goal_acc")
    assert goal.scored_samples == 0 and goal.unscored_samples == 8  # the 8 text-answer items count for goal_acc
    for sample in log.samples:
        assert sample.metadata["status"] == "unscored"
        for name in ("ground_s", "tool_p"):
            score = sample.scores[name]
            assert math.isnan(score.value) and score.value != 0
            assert score.explanation.startswith("unscored: not_configured")
            assert score.metadata["unscored_reason"].startswith("not_configured")
        assert not math.isnan(sample.scores["toolset_f1_prog"].value)  # a metric no judge decides keeps its value


@needs_inspect
@pytest.mark.e2e
def test_an_lm_eval_prompt_is_its_chat_with_media_by_path(logs: Logs) -> None:
    agentx = next(log for log in logs["lm-eval"] if log.eval.task == "agentx")
    sample = agentx.samples[0]
    assert [m.role for m in sample.input] == ["system", "user"]
    images = [c for c in sample.input[1].content if c.type == "image"]
    assert images and all(Path(c.image).is_file() for c in images)  # a path to the file, not its bytes
    agentvqa = next(log for log in logs["lm-eval"] if log.eval.task == "agentvqa")
    assert all("Options:" in s.input[-1].text for s in agentvqa.samples)
    assert agentvqa.eval.packages["lm_eval"] and agentvqa.eval.metadata["harness"] == "lm-eval"


@needs_inspect
@pytest.mark.e2e
def test_the_command_writes_logs_inspect_lists(runs: ViewerRuns, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    assert main(["export-inspect", str(runs.tools), str(tmp_path / "out"), "--format", "json"]) == 0
    printed = capsys.readouterr().out
    listed = list_eval_logs(str(tmp_path / "out"))
    assert len(listed) == 1 and Path(listed[0].name).name in printed and listed[0].name.endswith(".json")
    header = read_eval_log(listed[0].name, header_only=True)
    assert (header.eval.task, header.eval.task_id) == ("agentx_tools", listed[0].task_id)
    assert "inspect view --log-dir" in printed.splitlines()[-1]


def test_without_inspect_the_command_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(__import__("sys").modules, "inspect_ai", None)  # import inspect_ai raises ImportError
    assert main(["export-inspect", str(tmp_path), str(tmp_path / "out")]) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "pip install -e '.[inspect]'" in error
    assert not (tmp_path / "out").exists()


@needs_inspect
@pytest.mark.parametrize(("reference", "kind", "shown"), [
    ("AgentX_3.jpg", "image", "AgentX_3.jpg"),  # a bare name, found under the data folder
    ("https://example.org/a.png", "image", "https://example.org/a.png"),
    ("AgentX_1.mp4", "video", "AgentX_1.mp4"),
    ("data:image/png;base64," + "A" * 5000, "text", "not carried"),
    ("missing_0001.jpg", "text", "no such file"),
])
def test_media_are_referenced_never_embedded(reference: str, kind: str, shown: str) -> None:
    from lmms_agentic.adapters import benchmarks
    from lmms_agentic.viewer.inspect_samples import MediaFinder, media_item

    finder = MediaFinder([benchmarks.get("agentx").folder / "data" / "mini"])
    item = media_item(reference, finder, None)
    assert item.type == kind
    text = {"image": getattr(item, "image", ""), "video": getattr(item, "video", ""),
            "text": getattr(item, "text", "")}[kind]
    assert shown in text and not text.startswith("data:") and len(text) < 500


@needs_inspect
@pytest.mark.parametrize(("line", "turns"), [
    ({"input": "Question?\nA. x"}, [("user", "Question?\nA. x")]),
    ({"arguments": {"gen_args_0": {"arg_0": ['[{"role": "system", "content": "S"}, {"role": "user", "content": '
                                             '[{"type": "image"}, {"type": "text", "text": "Q"}]}]'],
                                   "arg_1": {}}}}, [("system", "S"), ("user", "[image]Q")]),
    ({"arguments": {"gen_args_0": {"arg_0": "plain prompt", "arg_1": {}}}}, [("user", "plain prompt")]),
    ({"arguments": {"gen_args_0": {"arg_0": "[not json", "arg_1": {}}}}, [("user", "[not json")]),
])
def test_the_prompt_is_read_as_the_model_got_it(line: Mapping[str, Any], turns: list[tuple[str, str]]) -> None:
    from lmms_agentic.viewer.inspect_samples import prompt_turns

    assert prompt_turns(line) == turns
