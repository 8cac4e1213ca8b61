"""Agent-X's `core/task.py` (the `adapters.core.task.CoreTask` of the one-shot tasks) and `core/script_task.py` (the
plugin's core: that one with the authors' script protocols): the metric table against the task YAMLs and the plugin's
aggregations, the scored record with and without a scripted judge, the variants, release rows -> documents, the
prompt with a stand-in media reader, and the plugin's judge staying off without its own variables."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import lmms_agentic
from lmms_agentic.adapters.core.task import check_core_task, task_values
from lmms_agentic.judges.client import reset_default_client
from lmms_agentic.judges.config import ENV as JUDGE_ENV
from lmms_agentic.judges.config import JudgeConfig
from lmms_agentic.judges.result import NOT_CONFIGURED
from lmms_agentic.tasks.agentx import aggregations, hooks, judge
from lmms_agentic.tasks.agentx.core import judging, metrics, release_data, script_protocols, script_task, task
from lmms_agentic.tasks.agentx.core.judging import JudgeCall, StyledJudge
from lmms_agentic.tasks.agentx.core.prompt import VideoFile
from lmms_agentic.tasks.agentx.core.script_protocols import FrameRule

TASKS = Path(lmms_agentic.tasks_dir()) / "agentx"
MINI = TASKS / "data" / "mini" / "data.json"
ONE_SHOT = sorted(p for p in TASKS.glob("agentx_*.yaml") if "tools" not in p.name and "group:" not in p.read_text())


def test_the_core_is_a_core_task() -> None:
    assert check_core_task(task) is task and task.BENCHMARK == "agentx"
    assert check_core_task(script_task) is script_task and script_task.METRICS is task.METRICS


def test_the_script_core_is_the_paper_core_plus_the_script_protocols(docs: dict[str, dict[str, Any]]) -> None:
    assert script_protocols.get(script_protocols.PAPER).describe() == task.PAPER_PROTOCOL
    assert {name: script_task.VARIANTS[name] for name in task.VARIANTS} == task.VARIANTS
    doc = docs["2"]
    assert script_task.score(doc, _gold_reply(doc)) == task.score(doc, _gold_reply(doc))
    assert script_task.text_prompt(doc, SETTINGS) == task.text_prompt(doc, SETTINGS)
    gemma = script_task.score({**doc, "prompt_protocol": "gemma"}, _gold_reply(doc))
    assert gemma == {**task.score(doc, _gold_reply(doc)), "prompt_protocol": script_protocols.get("gemma").describe()}


# --------------------------------------------------------------------------- metrics

@pytest.mark.parametrize("path", ONE_SHOT, ids=lambda p: p.stem)
def test_yaml_metric_list_is_its_kinds_task_metrics_then_the_loop_metrics(path: Path) -> None:
    from lmms_eval import utils

    config = utils.load_yaml_config(str(path), mode="full")
    variant = config["process_docs"].__name__.removeprefix("docs_")
    kind = "generative" if variant.startswith("generative") else "text_answer"
    assert variant in script_task.VARIANTS
    listed = config["metric_list"]
    assert tuple(m["metric"] for m in listed) == (*task.TASK_METRICS[kind], *metrics.LOOP_METRICS)
    for entry in listed:
        name = entry["metric"]
        assert entry["aggregation"] is getattr(aggregations, name)
        assert entry["higher_is_better"] is (task.METRICS[name].higher_is_better if name in task.METRICS else False)


def test_the_table_is_core_metrics_without_the_loop_metrics_and_every_metric_is_reported() -> None:
    assert (*task.METRICS, *metrics.LOOP_METRICS) == metrics.METRICS
    assert {name for names in task.TASK_METRICS.values() for name in names} == set(task.METRICS)
    assert task.TASK_METRICS["text_answer"][0] == task.TASK_METRICS["generative"][0] == task.RECORD_METRIC
    assert "goal_acc" in task.TASK_METRICS["text_answer"] and "goal_imggen" not in task.TASK_METRICS["text_answer"]
    assert "goal_imggen" in task.TASK_METRICS["generative"] and "goal_acc" not in task.TASK_METRICS["generative"]


def _scored(score: float) -> dict[str, Any]:
    return {"score": score, "scored": True, "unscored_reason": None}


def test_the_plugins_aggregations_are_the_cores_with_the_judged_mean() -> None:
    records = [{"id": key, "is_generative": key in release_data.GENERATIVE_IDS, "format_ok": ok, "exact_match": ok,
                "parse_failure": None, "toolset_f1_prog": 0.5, "errors": {},
                "judge": {name: _scored(score) for name in judging.REPORTED_NAMES}, "loop": {"loop": not ok}}
               for key, ok, score in (("0", True, 1.0), ("1", False, 0.4), ("2", False, 0.0))]
    assert set(aggregations.NAMES) == set(metrics.METRICS)
    for name in task.METRICS:
        value, core = getattr(aggregations, name)(records), task.METRICS[name].aggregation(records)
        assert (math.isnan(value) and math.isnan(core)) or value == core, name
    assert aggregations.ground_s(records) == pytest.approx(1.4 / 3) and aggregations.goal_acc(records) == 0.5
    assert aggregations.loop_rate(records) == pytest.approx(2 / 3)
    with pytest.raises(AttributeError, match="no attribute 'groundS'"):
        assert aggregations.groundS is None


# --------------------------------------------------------------------------- documents and variants

def _rows() -> list[dict[str, Any]]:
    return [{"id": key, **record} for key, (record,) in json.loads(MINI.read_text()).items()]


@pytest.fixture(scope="module")
def docs() -> Iterator[dict[str, dict[str, Any]]]:
    yield {doc["id"]: doc for doc in task.documents(_rows())}


def test_documents_and_variants_give_the_plugins_rows_on_the_mini_split(mini_env: None) -> None:
    core_docs = task.documents(list(reversed(_rows())))  # key order whatever the rows' order
    plugin = [{k: v for k, v in row.items() if k != "media_root"} for row in hooks.all_docs().to_list()]
    assert core_docs == plugin
    for name in ("text_answer", "generative", "text_answer_gpt", "generative_qwen"):
        rows = getattr(hooks, f"docs_{name}")(None).remove_columns(["media_root"]).to_list()
        assert script_task.VARIANTS[name](core_docs) == rows


def test_variants_select_by_key_name_the_protocol_and_leave_their_input_alone() -> None:
    docs = [{"id": str(i), "is_generative": str(i) in release_data.GENERATIVE_IDS} for i in range(12)]
    generative = [d["id"] for d in docs if d["is_generative"]]
    assert generative and len(generative) < len(docs)
    assert [d["id"] for d in task.VARIANTS["generative"](docs)] == generative
    assert [d["id"] for d in task.VARIANTS["text_answer"](docs)] == [d["id"] for d in docs if not d["is_generative"]]
    assert task.VARIANTS["all"](docs) == docs
    for name in script_protocols.PROTOCOLS.keys() - {script_protocols.PAPER}:
        chosen = script_task.VARIANTS[f"generative_{name}"](docs)
        assert [d["id"] for d in chosen] == generative and {d["prompt_protocol"] for d in chosen} == {name}
        assert callable(getattr(hooks, f"docs_text_answer_{name}"))
    assert all(set(doc) == {"id", "is_generative"} for doc in docs)


# --------------------------------------------------------------------------- score

def _gold_reply(doc: Mapping[str, Any]) -> str:
    steps = json.loads(doc["gt_steps_flat_json"])
    return "```json\n" + json.dumps({"reasoning_steps": [
        {"step": s["step"], "task": s["task"], "tool_used": s["tool"], "tool_output": s["output"],
         "thought": s["thought"]} for s in steps], "final_answer": json.loads(doc["gt_final_answer_json"])}) + "\n```"


SCORE_CASES = [
    # doc, reply ("gold": its GT trace): parse_failure, format_ok, exact_match, toolset_f1_prog
    ("0", "gold", None, True, True, 1.0),
    ("3", "gold", None, True, True, 1.0),
    ("8", "gold", None, True, None, 1.0),  # generative, subjective: no exact match
    ("0", "", "no_output", False, False, 0.0),
    ("0", "[LMMS_EVAL_REQUEST_FAILED after 3 retries]", "no_output", False, False, 0.0),
    ("0", "I think it is the blue line.", "invalid_json", False, False, 0.0),
]


@pytest.mark.parametrize(("key", "reply", "failure", "format_ok", "exact", "f1"), SCORE_CASES,
                         ids=["gold", "gold-objective", "gold-generative", "empty", "request-failed", "free-text"])
def test_score_without_a_judge(docs: dict[str, dict[str, Any]], key: str, reply: str, failure: str | None,
                               format_ok: bool, exact: bool | None, f1: float) -> None:
    doc = docs[key]
    record = task.score(doc, _gold_reply(doc) if reply == "gold" else reply)
    assert (record["parse_failure"], record["format_ok"], record["exact_match"]) == (failure, format_ok, exact)
    assert record["toolset_f1_prog"] == pytest.approx(f1)
    assert {k: record[k] for k in ("benchmark", "id", "is_generative", "not_judged", "judge_style")} == {
        "benchmark": "agentx", "id": key, "is_generative": doc["is_generative"], "not_judged": None,
        "judge_style": None}
    assert record["prompt_protocol"]["protocol"] == "paper" and "loop" not in record and "video" not in record
    asked = judging.judged_metric_names(judging.REPORTED_NAMES, doc["is_generative"])
    assert list(record["judge"]) == asked and ("goal_acc" in asked) is not doc["is_generative"]
    assert {r["unscored_reason"] for r in record["judge"].values()} == {judging.NO_JUDGE} == {NOT_CONFIGURED}
    values = task_values(task, "generative" if doc["is_generative"] else "text_answer", record)
    assert values["ground_s"] is record and values["tool_p"] == {"unscored_reason": NOT_CONFIGURED}
    assert values["parse_failure_rate"] == {"score": 0.0 if failure is None else 1.0}
    assert values["format_error_rate"] == {"score": 0.0 if format_ok else 1.0}


class ScriptedJudge:
    """A judge that answers each call with the score of its metric and remembers the batches it was asked."""

    def __init__(self, scores: Mapping[str, float]) -> None:
        self.scores = scores
        self.batches: list[list[JudgeCall]] = []

    def __call__(self, calls: Sequence[JudgeCall]) -> list[dict[str, Any]]:
        self.batches.append(list(calls))
        return [_scored(self.scores[call.metric]) if call.metric in self.scores
                else {"score": None, "unscored_reason": "parse_failure"} for call in calls]


JUDGE_CASES = [
    # doc, style of the passed judge (None: a plain callable): calls' style
    ("0", "qwen", "qwen"),
    ("8", "gpt", "gpt"),
    ("3", None, "gpt"),
]


@pytest.mark.parametrize(("key", "style", "expected_style"), JUDGE_CASES, ids=["text-qwen", "generative-gpt",
                                                                              "plain-callable"])
def test_score_with_a_scripted_judge(docs: dict[str, dict[str, Any]], key: str, style: str | None,
                                     expected_style: str) -> None:
    doc = docs[key]
    scripted = ScriptedJudge({"ground_s": 1.0, "tool_p": 0.4, "goal_acc": 0.0})
    passed = StyledJudge(scripted, judging.check_style(style)) if style else scripted
    record = task.score(doc, _gold_reply(doc), passed)
    (batch,) = scripted.batches  # one batch per item, every judged metric in it
    asked = judging.judged_metric_names(judging.REPORTED_NAMES, doc["is_generative"])
    assert [call.metric for call in batch] == asked and {call.style for call in batch} == {expected_style}
    assert {call.item_id for call in batch} == {key}
    assert record["judge_style"] == expected_style and record["not_judged"] is None
    assert record["judge"]["ground_s"]["score"] == 1.0 and record["judge"]["sem_acc"]["unscored_reason"]
    values = task_values(task, "generative" if doc["is_generative"] else "text_answer", record)
    assert values["tool_p"] == {"score": 0.4} and values["fact_acc"] == {"unscored_reason": "parse_failure"}
    if doc["is_generative"]:
        assert values["goal_imggen"] == {"parts": {"tool_p": {"score": 0.4},
                                                   "tool_acc": {"unscored_reason": "parse_failure"},
                                                   "toolset_acc": {"unscored_reason": "parse_failure"}}}
    else:
        assert values["goal_acc"] == {"score": 0.0}
    grounding = next(call for call in batch if call.metric == "ground_s")
    assert grounding.values["gt"] == judging.serialise(judging.gt_block(
        {"query": doc["query"], "reasoning_steps": json.loads(doc["gt_steps_json"]),
         "final_answer": json.loads(doc["gt_final_answer_json"])}), judging.check_style(expected_style))


def test_a_gt_the_released_scripts_cannot_judge_is_never_sent(docs: dict[str, dict[str, Any]]) -> None:
    doc = {**docs["0"], "judge_blocker": "tool_metadata is a list, not an object"}
    scripted = ScriptedJudge({})
    record = task.score(doc, _gold_reply(doc), StyledJudge(scripted, "qwen"))
    assert scripted.batches == [] and record["judge_style"] is None
    assert record["not_judged"] == "tool_metadata is a list, not an object"
    assert {r["unscored_reason"] for r in record["judge"].values()} == {judging.NOT_JUDGEABLE}
    assert all("tool_metadata is a list" in r["detail"] for r in record["judge"].values())


# --------------------------------------------------------------------------- prompt

class StandInMedia:
    """A media reader that draws a small image per cell and records what it was asked."""

    def __init__(self, native: bool = False, rules: bool = True) -> None:
        self.native, self.rules = native, rules
        self.asked: list[tuple[Any, ...]] = []

    def image(self, cell: Any) -> Image.Image:
        self.asked.append(("image", cell))
        return Image.new("RGB", (4, 4), "white")

    def video(self, path: str, n_frames: int) -> Any:
        self.asked.append(("video", path, n_frames))
        return f"/data/{path}" if self.native else [Image.new("RGB", (2, 2)) for _ in range(n_frames)]


class RuleMedia(StandInMedia):
    def video_frames(self, path: str, n_frames: int, rule: FrameRule) -> list[Image.Image]:
        self.asked.append(("video_frames", path, n_frames, rule))
        return [Image.new("RGB", (2, 2)) for _ in range(n_frames)]


SETTINGS = {"video_mode": "frames", "n_frames": 8, "system_role": True}


def test_prompt_paper_images_then_the_query(docs: dict[str, dict[str, Any]]) -> None:
    media = StandInMedia()
    built = task.prompt(docs["2"], SETTINGS, media)
    assert built.system == release_data.system_message()
    assert len(built.media()) == 2 and built.texts() == ["Query: " + docs["2"]["query"]]
    assert isinstance(built.parts[0], Image.Image) and built.parts[-1] == "Query: " + docs["2"]["query"]
    assert media.asked == [("image", "files/AgentX_2a.jpg"), ("image", "files/AgentX_2b.jpg")]


def test_prompt_paper_video_frames_are_labelled_and_uniform(docs: dict[str, dict[str, Any]]) -> None:
    media = RuleMedia()
    built = task.prompt(docs["5"], SETTINGS, media)
    assert media.asked == [("video", "files/AgentX_5.mp4", 8)]
    assert built.texts()[:2] == ["Frame1:", "Frame2:"] and len(built.media()) == 8


def test_prompt_script_protocols(docs: dict[str, dict[str, Any]]) -> None:
    qwen = script_task.prompt({**docs["2"], "prompt_protocol": "qwen"}, {"video_mode": "native", "n_frames": 0},
                       StandInMedia())
    assert qwen.system is None and len(qwen.media()) == 2
    assert qwen.texts() == [script_protocols.get("qwen").instruction() + "\n\n Query: " + docs["2"]["query"]]
    media = RuleMedia()
    gpt = script_task.prompt({**docs["5"], "prompt_protocol": "gpt"}, SETTINGS, media)
    assert media.asked == [("video_frames", "files/AgentX_5.mp4", 8, FrameRule("first"))]
    assert isinstance(gpt.parts[0], str) and len(gpt.media()) == 8  # the query first for a video
    with pytest.raises(ValueError, match="has no video_frames"):
        script_task.prompt({**docs["5"], "prompt_protocol": "gpt"}, SETTINGS, StandInMedia())
    with pytest.raises(ValueError, match="samples video as video_mode=frames, n_frames=4"):
        script_task.prompt({**docs["5"], "prompt_protocol": "gemini"}, SETTINGS, RuleMedia())


def test_prompt_native_video_is_handed_over_as_a_file(docs: dict[str, dict[str, Any]]) -> None:
    built = script_task.prompt({**docs["1"], "prompt_protocol": "qwen"}, {"video_mode": "native", "n_frames": 0},
                        StandInMedia(native=True))
    assert built.media() == [VideoFile("/data/files/AgentX_1.mp4")]
    assert built.texts()[-1].endswith("\n\nQuery: " + docs["1"]["query"])


# --------------------------------------------------------------------------- the plugin's judge

GENERIC_KEYS = ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DASHSCOPE_API_KEY")


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[pytest.MonkeyPatch]:
    for name in JUDGE_ENV.values():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(JUDGE_ENV["cache_dir"], str(tmp_path / "judge-cache"))
    reset_default_client()
    yield monkeypatch
    reset_default_client()


def test_generic_api_keys_never_turn_the_plugins_judge_on(judge_env: pytest.MonkeyPatch, mini_env: None,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    for name in GENERIC_KEYS:
        judge_env.setenv(name, "sk-generic-key-0042")
    judge_env.setenv("OPENAI_API_URL", "http://127.0.0.1:9/v1")
    assert not JudgeConfig.from_env().configured and judge.plugin_judge() is None
    rows = hooks.all_docs().to_list()
    with caplog.at_level(logging.WARNING):
        samples = [hooks.process_results(doc, [_gold_reply(doc)])["ground_s"] for doc in rows]
    naming = [r for r in caplog.records if "LMMS_AGENTIC_JUDGE_BASE_URL" in r.getMessage()]
    assert len(naming) == 1 and "no LLM judge configured" in naming[0].getMessage()
    assert {r["unscored_reason"] for s in samples for r in s["judge"].values()} == {NOT_CONFIGURED}
    assert all(s["judge_style"] is None for s in samples)


def test_the_plugins_own_variables_turn_it_on_in_the_models_style(judge_env: pytest.MonkeyPatch) -> None:
    judge_env.setenv(JUDGE_ENV["base_url"], "http://127.0.0.1:9/v1")
    judge_env.setenv(JUDGE_ENV["model"], "Qwen/Qwen3-14B")
    chosen = judge.plugin_judge()
    assert isinstance(chosen, StyledJudge) and chosen.style == "qwen"
