"""RoboVista's `core/task.py` (the `adapters.core.task.CoreTask` every harness glue reads): each task YAML reports its
kind's `TASK_METRICS` with the table's aggregations, `score` decides the whole record (strict letter, judge
fallback, parity fields, headline score), every variant selects and decorates like the task's `process_docs`, and
`prompt` shows what the plugin's hooks show."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

import lmms_agentic
from lmms_agentic.adapters import permutation_metrics
from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.core.task import check_core_task, task_values
from lmms_agentic.adapters.media import as_pil
from lmms_agentic.adapters.samples import LOOP_VIEWS
from lmms_agentic.tasks.robovista import hooks
from lmms_agentic.tasks.robovista.core import documents, records, task

TASKS = Path(lmms_agentic.tasks_dir()) / "robovista"
LEAF_YAMLS = sorted(p for p in TASKS.glob("robovista_*.yaml") if "group" not in yaml.safe_load(
    p.read_text().replace("!function", "")))
GROUP_YAMLS = sorted(p for p in TASKS.glob("robovista*.yaml") if p not in LEAF_YAMLS)
PERMUTATION_YAMLS = sorted((TASKS / "permutations").glob("robovista_*.yaml"))


def _config(path: Path) -> dict[str, Any]:
    from lmms_eval import utils

    config: dict[str, Any] = utils.load_yaml_config(str(path), mode="full")
    return config


def _kind(config: Mapping[str, Any]) -> str:
    """The kind a task's `process_results` hook scores (`process_results` is the domain kind)."""
    hook = config["process_results"]
    return next(kind for kind in task.TASK_METRICS
                if hook is getattr(hooks, "process_results" if kind == "domain" else f"process_results_{kind}"))


# --------------------------------------------------------------------------- the tables and the task YAMLs

def test_the_core_is_a_core_task() -> None:
    assert check_core_task(task) is task
    assert set(task.TASK_METRICS) == {"domain", "full", "confidence", "icl"}


@pytest.mark.parametrize("path", LEAF_YAMLS, ids=lambda p: p.stem)
def test_task_yaml_reports_its_kinds_metrics_with_the_tables_aggregations(path: Path) -> None:
    config = _config(path)
    kind = _kind(config)
    listed = config["metric_list"]
    assert [m["metric"] for m in listed] == [*task.TASK_METRICS[kind], *LOOP_VIEWS]
    for entry in listed[: len(task.TASK_METRICS[kind])]:
        metric = task.METRICS[entry["metric"]]
        assert entry["aggregation"] is metric.aggregation, entry["metric"]
        assert entry["higher_is_better"] is metric.higher_is_better, entry["metric"]


def test_every_kind_is_reported_by_some_task() -> None:
    assert {_kind(_config(path)) for path in LEAF_YAMLS} == set(task.TASK_METRICS)


@pytest.mark.parametrize("path", GROUP_YAMLS, ids=lambda p: p.stem)
def test_group_yaml_aggregates_metrics_of_its_subtasks(path: Path) -> None:
    config = yaml.safe_load(path.read_text())
    subtasks = [_config(TASKS / f"{name}.yaml") for name in config["task"]]
    reported = set.intersection(*(set(task.TASK_METRICS[_kind(sub)]) for sub in subtasks))
    assert {entry["metric"] for entry in config["aggregate_metric_list"]} <= reported


@pytest.mark.parametrize("path", PERMUTATION_YAMLS[:3], ids=lambda p: p.stem)
def test_permutation_tasks_report_the_permutation_metrics_not_the_cores(path: Path) -> None:
    names = [m["metric"] for m in _config(path)["metric_list"]]
    assert sorted(names) == sorted(permutation_metrics.metric_names(5))
    assert not set(names) & set(task.METRICS)


def test_a_permutation_row_logs_the_cores_record_without_a_row_score(robovista_docs: Any) -> None:
    doc = {**dict(robovista_docs[1]), "group_id": "q_mini_01", "perm_mode": "circular", "perm_seed": 0,
           "perm_index": 1, "permutation": [1, 2, 3, 4, 0]}
    record = hooks.process_results(doc, ["A"])["perm_mean_acc"]
    assert "score" not in record and record["chosen"] == 1 and record["correct_parity"] is False
    assert record["pred"] == "A" and record["benchmark"] == "robovista"


# --------------------------------------------------------------------------- score

def _doc(**changes: Any) -> dict[str, Any]:
    row = {"id": "q_1", "question": "Which block?", "choices": ["red", "green", "blue", "yellow", "purple"],
           "correct_answer": "B", "reasoning": "because", "domain": "domestic", "task": "tidying",
           "ability_type": "physical_interaction", "ability_subcategory": "grasp", "publication_source": "paper",
           "images": ["cell"]}
    (doc,) = documents.documents([{**row, **changes}])
    return doc


@pytest.mark.parametrize(("reply", "expected"), [
    ("B", {"pred": "B", "correct": True, "pred_parity": "B", "correct_parity": True, "score": 100.0,
           "rule": "bare_label", "extraction_path": "rules", "no_answer_reason": None, "confidence": None}),
    ("The answer is D.", {"pred": "D", "correct": False, "pred_parity": "D", "correct_parity": False, "score": 0.0}),
    ("A robot arm should pick the green one, so B",
     {"pred": "B", "correct": True, "pred_parity": "A", "correct_parity": False, "score": 0.0}),
    ("I am not sure.", {"pred": None, "correct": False, "pred_parity": None, "score": 0.0, "rule": "none",
                        "extraction_path": "none", "no_answer_reason": "no_match", "request_failed": False}),
    ("<think>A or C?</think>B\nConfidence: 85%",
     {"pred": "B", "pred_parity": "B", "correct_parity": True, "confidence": 0.85, "score": 100.0}),
    ("[LMMS_EVAL_REQUEST_FAILED after 5 retries] timeout",
     {"pred": None, "request_failed": True, "no_answer_reason": "request_failed", "pred_parity": None,
      "score": 0.0}),
    ("<think>the best option is C.</think>",
     {"pred": "C", "pred_parity": None, "parsers": {
         "parity_20260706": {"letter": None, "rule": "none", "correct": False},
         "parity_20260714": {"letter": "C", "rule": "reread_final_is", "correct": False}}}),
], ids=["gold", "wrong", "article-trap", "no-answer", "confidence", "request-failed", "second-parser-only"])
def test_score_decides_the_whole_record(reply: str, expected: dict[str, Any]) -> None:
    record = task.score(_doc(), reply)
    assert {key: record[key] for key in expected} == expected
    assert (record["benchmark"], record["id"], record["domain"], record["source"], record["answer"]) == (
        "robovista", "q_1", "domestic", "paper", "B")
    assert (record["task"], record["ability_type"], record["ability_split"]) == ("tidying", "physical_interaction",
                                                                                 "PL")
    assert record["parity_mode"] == "parity_20260706" and record["judge"] is None
    json.dumps(record)  # plain data only


def _judge(letter: str | None, reason: str | None = None) -> tuple[list[task.ChoiceCall], task.ChoiceJudge]:
    calls: list[task.ChoiceCall] = []

    def judge(asked: Sequence[task.ChoiceCall]) -> list[task.ChoiceVerdict]:
        calls.extend(asked)
        return [task.ChoiceVerdict(letter, reason, {"label": letter or "NONE"}) for _ in asked]

    return calls, judge


@pytest.mark.parametrize(("letter", "reason", "expected"), [
    ("B", None, {"pred": "B", "correct": True, "rule": "judge", "extraction_path": "judge",
                 "no_answer_reason": None, "judge": {"label": "B"}}),
    (None, "judge_none", {"pred": None, "correct": False, "rule": "none", "extraction_path": "none",
                          "no_answer_reason": "judge_none", "judge": {"label": "NONE"}}),
    (None, "transport_error", {"pred": None, "extraction_path": "none", "no_answer_reason": "transport_error"}),
], ids=["judge-letter", "judge-none", "judge-unscored"])
def test_the_judge_reads_only_what_the_rules_could_not(letter: str | None, reason: str | None,
                                                       expected: dict[str, Any]) -> None:
    calls, judge = _judge(letter, reason)
    record = task.score(_doc(), "I cannot tell from these images.", judge)
    assert {key: record[key] for key in expected} == expected
    assert calls == [task.ChoiceCall("q_1", "Which block?", ("red", "green", "blue", "yellow", "purple"),
                                     "I cannot tell from these images.")]
    assert record["pred_parity"] is None and record["score"] == 0.0  # the headline is the runner's parser's


@pytest.mark.parametrize("reply", ["C", "", "[LMMS_EVAL_REQUEST_FAILED after 5 retries]"],
                         ids=["rules-found-one", "empty", "request-failed"])
def test_the_judge_is_not_asked_when_the_rules_decide_or_nothing_was_said(reply: str) -> None:
    calls, judge = _judge("B")
    assert task.score(_doc(), reply, judge)["extraction_path"] != "judge" and calls == []


def test_every_metric_reads_the_record(robovista_docs: Any) -> None:
    record = task.score({**dict(robovista_docs[1]), "icl_example_id": ""}, "B\nConfidence: 70%")
    values = task_values(task, "icl", record)
    assert values["parity_acc"] is record and values["strict_acc"] == {"score": 100.0}
    assert values["calibration_error"] == {"confidence": 0.7, "correct": True}
    assert values["icl_fallback_rate"] == {"score": 100.0} and values["no_answer_rate"] == {"score": 0.0}
    assert values["domain_agriculture_acc"] == {"score": 100.0} and values["domain_domestic_acc"] is None


# --------------------------------------------------------------------------- documents and variants

def test_documents_normalise_rows_and_pass_image_cells_through() -> None:
    cells = [{"bytes": b"x", "path": None}, {"bytes": b"y", "path": None}]
    (doc,) = documents.documents([{**_doc(), "choices": ["a", "b"], "correct_answer": "A", "images": cells,
                                   "domain": "domestic", "ability_type": "", "task": "t", "id": "q_2",
                                   "question": "?"}])
    assert doc["images"] is cells and doc["n_images"] == 2 and doc["metadata_json"]
    assert {k: v for k, v in doc.items() if k != "images"} == records.normalise(
        {"id": "q_2", "question": "?", "choices": ["a", "b"], "correct_answer": "A", "domain": "domestic",
         "task": "t", "ability_type": ""}, 2).to_row()
    with pytest.raises(RecordError, match="images"):
        documents.documents([{"id": "q_3", "question": "?", "choices": ["a"], "correct_answer": "A",
                              "domain": "", "task": "t", "ability_type": ""}])


def _corpus() -> list[dict[str, Any]]:
    def doc(item_id: str, domain: str, task_name: str) -> dict[str, Any]:
        return _doc(id=item_id, domain=domain, task=task_name, images=[f"image of {item_id}"])

    return [doc("a1", "agriculture", "weeding"), doc("a2", "agriculture", "weeding"),
            doc("d1", "domestic", "tidying"), doc("u1", "", "tidying"), doc("a3", "agriculture", "picking")]


@pytest.mark.parametrize(("variant", "ids"), [
    ("agriculture", ["a1", "a2", "a3"]), ("domestic", ["d1"]), ("surgical_robotics", []), ("unlabeled", ["u1"]),
    ("all", ["a1", "a2", "d1", "u1", "a3"]),
])
def test_selection_variants(variant: str, ids: list[str]) -> None:
    docs = _corpus()
    chosen = task.VARIANTS[variant](docs)
    assert [doc["id"] for doc in chosen] == ids
    assert all(doc == next(d for d in docs if d["id"] == doc["id"]) for doc in chosen)
    assert not any(doc is original for doc in chosen for original in docs)  # fresh dicts, the input untouched


@pytest.mark.parametrize("seed", range(5))
def test_icl_variants_add_a_same_task_and_domain_example(seed: int) -> None:
    docs = _corpus()
    before = json.dumps(docs)
    by_id = {doc["id"]: doc for doc in docs}
    chosen = {doc["id"]: doc for doc in task.VARIANTS[f"icl_seed{seed}"](docs)}
    assert json.dumps(docs) == before and list(chosen) == list(by_id)
    assert chosen["a1"]["icl_example_id"] == "a2" and chosen["a2"]["icl_example_id"] == "a1"  # the only candidate
    example = by_id["a2"]
    assert chosen["a1"]["icl_images"] is example["images"]
    assert (chosen["a1"]["icl_question"], chosen["a1"]["icl_options"], chosen["a1"]["icl_answer"],
            chosen["a1"]["icl_reasoning"], chosen["a1"]["icl_seed"]) == (
        example["question"], list(example["options"]), example["answer"], "because", seed)
    for alone in ("d1", "u1", "a3"):  # no other document of its (task, domain): asked zero-shot
        doc = chosen[alone]
        assert (doc["icl_example_id"], doc["icl_question"], doc["icl_options"], doc["icl_answer"]) == ("", "", [], "")
        assert doc["icl_images"] is by_id[alone]["images"]


def test_icl_seeds_draw_different_examples_each_reproducibly() -> None:
    docs = [_doc(id=f"a{i}", domain="agriculture", task="weeding", images=[i]) for i in range(6)]

    def draw(seed: int) -> tuple[str, ...]:
        return tuple(doc["icl_example_id"] for doc in task.VARIANTS[f"icl_seed{seed}"](docs))

    assert len({draw(seed) for seed in range(5)}) > 1 and draw(3) == draw(3)
    assert all(example and example != f"a{i}" for seed in range(5) for i, example in enumerate(draw(seed)))


def test_plugin_process_docs_are_the_cores_variants(robovista_manifest: Any, robovista_docs: Any) -> None:
    rows = [dict(row) for row in robovista_docs]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        for name in task.VARIANTS:
            hook = hooks.load_docs if name == "all" else getattr(hooks, f"docs_{name}")
            assert hook(robovista_manifest).to_list() == task.VARIANTS[name](rows), name


# --------------------------------------------------------------------------- prompt

class _Reader:
    """A `MediaReader` over dataset image cells."""

    def image(self, cell: Any) -> Image.Image:
        return as_pil(cell, where="test")

    def video(self, path: str, n_frames: int) -> Any:
        raise AssertionError("RoboVista has no video")


@pytest.mark.parametrize("name", ["robovista_agriculture", "robovista_cot", "robovista_confidence",
                                  "robovista_icl_seed2", "robovista_icl_reasoning"])
def test_prompt_is_what_the_plugin_shows(name: str, robovista_manifest: Any) -> None:
    config = _config(TASKS / f"{name}.yaml")
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        docs = config["process_docs"](robovista_manifest)
    for doc in docs:
        shown = task.prompt(doc, kwargs, _Reader())
        (system, user) = hooks.doc_to_messages(doc, kwargs)
        assert system["content"] == [{"type": "text", "text": shown.system}]
        parts = [c["text"] if c["type"] == "text" else c["url"] for c in user["content"]]
        assert [p for p in parts if isinstance(p, str)] == shown.texts()
        plugin_images = [p for p in parts if not isinstance(p, str)]
        assert [(i.size, i.tobytes()) for i in plugin_images] == [(i.size, i.tobytes()) for i in shown.media()]
        assert hooks.doc_to_text(doc, kwargs) == f"{shown.system}\n\n{''.join(shown.texts())}"


def test_prompt_refuses_documents_it_cannot_show() -> None:
    doc = _doc()
    with pytest.raises(RecordError, match="'images': is missing"):
        task.prompt({k: v for k, v in doc.items() if k != "images"}, {"protocol": "zero_shot"}, _Reader())
    with pytest.raises(ValueError, match="icl_seed<k> variant"):
        task.prompt({**doc, "images": []}, {"protocol": "icl"}, _Reader())
