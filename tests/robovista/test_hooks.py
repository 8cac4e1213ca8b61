"""RoboVista hooks: loading and splitting the mini data, prompt snapshots, visuals, payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import lmms_agentic
from lmms_agentic.tasks.robovista import hooks
from lmms_agentic.tasks.robovista.core import metrics

SNAPSHOTS = Path(__file__).parent / "snapshots"

TASKS = Path(lmms_agentic.tasks_dir()) / "robovista"
VARIANTS = ["robovista_agriculture", "robovista_cot", "robovista_confidence", "robovista_icl_seed0",
            "robovista_icl_reasoning"]


def _config(task: str) -> dict[str, Any]:
    from lmms_eval import utils

    config: dict[str, Any] = utils.load_yaml_config(str(TASKS / f"{task}.yaml"), mode="full")
    return config


def _docs(task: str, manifest: Any) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        return _config(task)["process_docs"](manifest)


def test_domain_subtasks_partition_the_split(robovista_docs: Any, robovista_manifest: Any) -> None:
    group = _config("robovista")
    sizes = {task: len(_docs(task, robovista_manifest)) for task in group["task"]}
    assert sum(sizes.values()) == len(robovista_docs) == 21
    assert sizes["robovista_unlabeled"] == 1 and all(sizes.values())


def test_icl_examples_share_task_and_domain_and_are_never_the_item(robovista_manifest: Any) -> None:
    docs = _docs("robovista_icl_seed0", robovista_manifest)
    by_id = {row["id"]: row for row in docs}
    with_example = [row for row in docs if row["icl_example_id"]]
    assert 0 < len(with_example) < len(docs)  # the mini split has singleton (task, domain) keys too
    for row in with_example:
        example = by_id[row["icl_example_id"]]
        assert example["id"] != row["id"] and example["domain"] == row["domain"]
        assert json.loads(example["metadata_json"])["task"] == json.loads(row["metadata_json"])["task"]
        assert example["question"] == row["icl_question"] and example["answer"] == row["icl_answer"]
        assert len(row["icl_images"]) == example["n_images"]


def _render(task: str, manifest: Any) -> dict[str, Any]:
    config = _config(task)
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    doc = next(row for row in _docs(task, manifest) if row["id"] == "q_mini_01")
    messages = config["doc_to_messages"](doc, kwargs)
    rendered = [{"role": m["role"], "content": [c["text"] if c["type"] == "text" else f"<image {c['url'].size}>"
                                                for c in m["content"]]} for m in messages]
    return {"text": config["doc_to_text"](doc, kwargs), "messages": rendered}


@pytest.mark.parametrize("task", VARIANTS)
def test_prompt_snapshot(task: str, robovista_manifest: Any, update_snapshots: bool) -> None:
    """The exact prompt of one frozen document per variant; change only on purpose (--update-snapshots)."""
    snapshot = SNAPSHOTS / f"{task}.json"
    rendered = _render(task, robovista_manifest)
    if update_snapshots or not snapshot.exists():
        snapshot.write_text(json.dumps(rendered, indent=2, ensure_ascii=False) + "\n")
        if not update_snapshots:
            pytest.fail(f"created missing snapshot {snapshot.name}; review it and rerun")
    assert rendered == json.loads(snapshot.read_text())


def test_zero_shot_prompt_matches_the_paper_layout(robovista_docs: Any) -> None:
    kwargs = _config("robovista_agriculture")["lmms_eval_specific_kwargs"]["default"]
    doc = robovista_docs[9]  # the item whose option E is empty
    messages = hooks.doc_to_messages(doc, kwargs)
    assert messages[0] == {"role": "system", "content": [{"type": "text", "text": kwargs["system_prompt"]}]}
    user = messages[1]["content"]
    assert [c["type"] for c in user] == ["image"] * doc["n_images"] + ["text"]
    assert user[-1]["text"] == (f"{doc['question']}\n\nOptions:\nA. The red block\nB. The green block\n"
                                "C. The blue block\nD. The yellow block\n\n"
                                "Answer with the letter only (A, B, C, D, or E).")


def test_models_without_system_role_get_it_inside_the_user_turn(robovista_docs: Any) -> None:
    kwargs = {**_config("robovista_agriculture")["lmms_eval_specific_kwargs"]["default"], "system_role": False}
    messages = hooks.doc_to_messages(robovista_docs[0], kwargs)
    assert [m["role"] for m in messages] == ["user"]
    assert messages[0]["content"][0]["text"].startswith(kwargs["system_prompt"])


@pytest.mark.parametrize(("preprocess", "max_side"), [("paper", 720), ("none", 1920)])
def test_visuals_follow_the_declared_preprocessing(robovista_docs: Any, preprocess: str, max_side: int) -> None:
    kwargs = {**_config("robovista_agriculture")["lmms_eval_specific_kwargs"]["default"],
              "image_preprocess": preprocess}
    surgical = next(row for row in robovista_docs if row["id"] == "q_mini_12")  # a 1920x1080 image
    (image,) = hooks.doc_to_visual(surgical, kwargs)
    assert max(image.size) == max_side


@pytest.mark.parametrize(("response", "pred_parity", "pred", "correct_parity", "confidence", "failed"), [
    ("B", "B", "B", True, None, False),
    ("A red block is visible. The answer is B.", "B", "B", True, None, False),
    ("A robot arm should pick the green one, so B", "A", "B", False, None, False),
    ("<think>A or C?</think>B\nConfidence: 85%", "B", "B", True, 0.85, False),
    ("I am not sure.", None, None, False, None, False),
    ("[LMMS_EVAL_REQUEST_FAILED after 5 retries] timeout", None, None, False, None, True),
    ("", None, None, False, None, False),
], ids=["letter", "article-then-answer", "article-trap-parity", "think-and-confidence", "no-answer",
        "request-failed", "empty"])
def test_record(robovista_docs: Any, response: str, pred_parity: str | None, pred: str | None,
                correct_parity: bool, confidence: float | None, failed: bool) -> None:
    """`pred` is the strict extractor's letter (one meaning in every benchmark); the runner's is `pred_parity`."""
    doc = dict(robovista_docs[1])  # gold B
    record = hooks.record(doc, [response])
    assert (record["pred_parity"], record["pred"], record["correct_parity"]) == (pred_parity, pred, correct_parity)
    assert record["correct"] is (pred == "B") and record["benchmark"] == "robovista"
    assert record["confidence"] == confidence and record["request_failed"] is failed
    assert record["id"] == "q_mini_01" and record["domain"] == "agriculture"
    json.dumps(record)  # plain data only


def test_process_results_variants_return_exactly_their_metrics(robovista_docs: Any) -> None:
    doc = dict(robovista_docs[0])
    every_task = {"loop_rate", "truncation_rate"}
    assert set(hooks.process_results(doc, ["A"])) == set(metrics.TASK_METRICS["domain"]) | every_task
    assert set(hooks.process_results_icl(doc, ["A"])) == set(metrics.TASK_METRICS["icl"]) | every_task


def test_malformed_row_in_a_local_copy_names_record_and_field(tmp_path: Path, robovista_manifest: Any) -> None:
    import datasets

    from lmms_agentic.adapters.core.schema import RecordError

    source = datasets.load_dataset("parquet", data_files=str(next((TASKS / "data" / "mini").rglob("*.parquet"))),
                                   split="train")
    broken = source.map(lambda row, i: {"correct_answer": "Z" if i == 3 else row["correct_answer"]},
                        with_indices=True)
    (tmp_path / "robovista").mkdir()
    broken.to_parquet(str(tmp_path / "robovista" / "train-00000-of-00001.parquet"))
    with pytest.MonkeyPatch.context() as patch, pytest.raises(RecordError) as error:
        patch.setenv("LMMS_AGENTIC_DATA", str(tmp_path))
        hooks.load_docs(robovista_manifest)
    assert "q_mini_03" in str(error.value) and "correct_answer" in str(error.value)
