"""Agent-X hooks: loading the release layout, the released prompt layout, media handling, payloads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import datasets
import pytest

import lmms_agentic
from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.tasks.agentx import hooks
from lmms_agentic.tasks.agentx.core import release_data

from ..conftest import placeholder

TASKS = Path(lmms_agentic.tasks_dir()) / "agentx"
MINI = TASKS / "data" / "mini"
KWARGS = {"video_mode": "frames", "n_frames": 8, "system_role": True}


@pytest.fixture(scope="module")
def manifest() -> datasets.Dataset:
    return placeholder("agentx")


@pytest.fixture(scope="module")
def docs(manifest: datasets.Dataset) -> dict[str, dict[str, Any]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        return {row["id"]: row for row in hooks.all_docs()}


def test_generative_tasks_are_chosen_by_key(manifest: datasets.Dataset, docs: dict[str, Any]) -> None:
    assert sorted(k for k, d in docs.items() if d["is_generative"]) == ["1", "8"]  # real generative ids 1 and 8
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        assert len(hooks.docs_text_answer(manifest)) == 8 and len(hooks.docs_generative(manifest)) == 2
    assert docs["2"]["media_type"] == "multi_image" and docs["5"]["media_type"] == "video"
    assert json.loads(docs["2"]["gt_steps_flat_json"])[0]["step"] == 1  # [[...]] unwrapped for our own checks
    assert json.loads(docs["2"]["gt_steps_json"])[0][0]["step"] == 1  # ... and kept as released for the judge


def test_messages_follow_the_released_layout(docs: dict[str, Any]) -> None:
    messages = hooks.doc_to_messages(docs["2"], KWARGS)
    assert messages[0] == {"role": "system", "content": [{"type": "text", "text": release_data.system_message()}]}
    user = messages[1]["content"]
    assert [c["type"] for c in user] == ["image", "image", "text"]
    assert user[-1]["text"] == "Query: " + docs["2"]["query"]


def test_video_gets_eight_labelled_frames_logged_per_sample(docs: dict[str, Any]) -> None:
    user = hooks.doc_to_messages(docs["5"], KWARGS)[1]["content"]
    video = hooks.record(docs["5"], [""], judge=False)["video"]
    assert video["n_frames"] == 8 and video["indices"] == [0, 4, 8, 12, 17, 21, 25, 29] and video["total_frames"] == 30
    assert [c["text"] for c in user if c["type"] == "text"][:3] == ["Frame1:", "Frame2:", "Frame3:"]
    assert sum(c["type"] == "image" for c in user) == 8
    native = hooks.doc_to_messages(docs["5"], {**KWARGS, "video_mode": "native"})[1]["content"]
    assert native[0]["type"] == "video" and native[0]["url"].endswith("AgentX_5.mp4")


@pytest.mark.parametrize("path", ["system_role", "no_system_role", "simple_backend"])
def test_the_system_text_reaches_every_backend_byte_for_byte(docs: dict[str, Any], path: str) -> None:
    """The released GPT script's system message is `instruction_prompt + '\n\n'`; the bytes arrive unchanged."""
    expected = release_data.instruction().encode("utf-8") + b"\n\n"
    query = docs["2"]["query"]
    if path == "simple_backend":
        assert hooks.doc_to_text(docs["2"], KWARGS).encode("utf-8") == expected + f"Query: {query}".encode()
        return
    messages = hooks.doc_to_messages(docs["2"], {**KWARGS, "system_role": path == "system_role"})
    first = messages[0]["content"][0]
    assert first["type"] == "text" and first["text"].encode("utf-8") == expected
    user = messages[-1]["content"]
    assert [m["role"] for m in messages] == (["system", "user"] if path == "system_role" else ["user"])
    assert user[-1] == {"type": "text", "text": f"Query: {query}"}
    assert sum(part["type"] == "image" for part in user) == 2


def test_simple_backends_and_models_without_system_role(docs: dict[str, Any]) -> None:
    assert hooks.doc_to_text(docs["0"], KWARGS) == f"{release_data.instruction()}\n\nQuery: {docs['0']['query']}"
    assert len(hooks.doc_to_visual(docs["2"], KWARGS)) == 2
    messages = hooks.doc_to_messages(docs["0"], {**KWARGS, "system_role": False})
    assert [m["role"] for m in messages] == ["user"]
    assert messages[0]["content"][0]["text"].startswith("You are an intelligent multi-modal agent.")


def test_png_bytes_under_a_jpg_name_load(docs: dict[str, Any]) -> None:
    (image,) = hooks.doc_to_visual(docs["4"], KWARGS)
    assert image.mode == "RGB" and image.size == (480, 320)


def test_media_escaping_the_dataset_folder_is_rejected(docs: dict[str, Any]) -> None:
    doc = {**docs["0"], "id": "evil", "media": ["../../../../etc/hostname"]}
    with pytest.raises(RecordError, match="escapes the dataset folder"):
        hooks.doc_to_visual(doc, KWARGS)


def _model_reply(doc: dict[str, Any]) -> str:
    """The GT trace written as a model would (tool_used / tool_output keys), in a fence with prose around it."""
    steps = [{"step": s["step"], "task": s["task"], "tool_used": s["tool"], "tool_output": s["output"],
              "thought": s["thought"]} for s in json.loads(doc["gt_steps_flat_json"])]
    final = json.loads(doc["gt_final_answer_json"])
    body = {"query": doc["query"], "reasoning_steps": steps, "final_answer": final}
    return "Here is my answer:\n```json\n" + json.dumps(body) + "\n```\nHope this helps."


def test_payload_of_a_good_trace(docs: dict[str, Any]) -> None:
    record = hooks.record(docs["0"], [_model_reply(docs["0"])], judge=False)
    assert record["parse_failure"] is None and record["format_ok"] and record["n_steps"] == 2
    assert record["toolset_f1_prog"] == 1.0 and record["exact_match"] is True
    assert not any(record["errors"].values())
    json.dumps(record)
    # a purely numeric GT answer has no keywords, so the notebook's keyword check flags it (any([]) is False)
    assert hooks.record(docs["3"], [_model_reply(docs["3"])], judge=False)["errors"]["misinterpreting_visual_content"]


@pytest.mark.parametrize(("reply", "failure"), [("", "no_output"), ("I cannot see the image.", "invalid_json"),
                                                ("[LMMS_EVAL_REQUEST_FAILED after 3 retries]", "no_output")])
def test_payload_of_bad_output_is_classified(docs: dict[str, Any], reply: str, failure: str) -> None:
    record = hooks.record(docs["0"], [reply], judge=False)
    assert record["parse_failure"] == failure and record["toolset_f1_prog"] == 0.0
    assert record["prediction"]["final_answer"] == {"value": "", "justification": ""}  # the judged empty record


def test_malformed_task_names_key_and_field(tmp_path: Path, manifest: datasets.Dataset) -> None:
    copy = tmp_path / "agentx"
    shutil.copytree(MINI, copy)
    data = json.loads((copy / "data.json").read_text())
    data["7"][0]["final_answer"] = 42
    (copy / "data.json").write_text(json.dumps(data))
    with pytest.MonkeyPatch.context() as patch, pytest.raises(RecordError) as error:
        patch.setenv("LMMS_AGENTIC_DATA", str(tmp_path))
        hooks.all_docs()
    assert "record '7', field 'final_answer'" in str(error.value)
