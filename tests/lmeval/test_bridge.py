"""The lm-eval adapter: chat messages -> (system prompt, text with <image> placeholders, images), and its documents."""

from __future__ import annotations

import dataclasses
import io
import logging
import pickle
from typing import Any

import datasets
import pytest
from PIL import Image

from lmms_agentic.lmeval import bridge, task_functions
from lmms_agentic.lmeval.bridge import SYSTEM_FIELD, TASK_FIELD, Doc, TaskSpec


def _image(color: str) -> Image.Image:
    return Image.new("RGB", (4, 3), color)


def _png(color: str) -> bytes:
    buffer = io.BytesIO()
    _image(color).save(buffer, format="PNG")
    return buffer.getvalue()


def _messages(doc: Any, kwargs: Any) -> list[dict[str, Any]]:
    calls.append(doc["id"])
    return [{"role": "system", "content": [{"type": "text", "text": kwargs["system"]}]},
            {"role": "user", "content": [{"type": "text", "text": "Example:\n"},
                                         {"type": "image", "url": _image("red")},
                                         {"type": "text", "text": "\nYours:\n"},
                                         {"type": "image", "url": _image("blue")},
                                         {"type": "image", "url": _image("green")},
                                         {"type": "text", "text": doc["question"]}]}]


def _target(doc: Any) -> str:
    return str(doc["answer"])


def _results(doc: Any, results: list[Any]) -> dict[str, Any]:
    return {"acc": {"benchmark": "x", "id": doc["id"]}, "extra": 1, "sparse": None}


calls: list[str] = []
SPEC = TaskSpec(task="demo", doc_to_messages=_messages, doc_to_target=_target, process_results=_results,
                kwargs={"system": "Be brief."}, metrics=("acc", "sparse"))


def test_render_keeps_order_and_puts_one_placeholder_per_image() -> None:
    rendered = bridge.render(_messages({"id": "1", "question": "Which?"}, {"system": "S"}))
    assert rendered.system == "S"
    assert rendered.text == "Example:\n<image>\nYours:\n<image><image>Which?"
    assert [image.getpixel((0, 0)) for image in rendered.images] == [(255, 0, 0), (0, 0, 255), (0, 128, 0)]


@pytest.mark.parametrize(("message", "problem"), [
    ({"role": "user", "content": [{"type": "video", "url": "a.mp4"}]}, "no video input"),
    ({"role": "assistant", "content": "B"}, "a system and a user turn"),
    ({"role": "user", "content": [{"type": "audio", "url": "a.wav"}]}, "unsupported 'audio'"),
])
def test_render_refuses_what_lm_eval_cannot_send(message: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        bridge.render([message], "demo")


def test_a_plain_string_content_is_text() -> None:
    assert bridge.render([{"role": "user", "content": "hello"}]).text == "hello"


def test_doc_renders_once_and_exposes_the_system_prompt_as_a_virtual_field() -> None:
    calls.clear()
    doc = Doc({"id": "7", "question": "Which?", "answer": "B"}, SPEC)
    assert SYSTEM_FIELD in doc and SYSTEM_FIELD not in dict(doc) and doc[TASK_FIELD] == "demo"
    assert doc[SYSTEM_FIELD] == "Be brief."
    assert bridge.doc_to_text(doc).endswith("Which?") and len(bridge.doc_to_image(doc)) == 3
    assert calls == ["7"], "the messages are built once per document object"
    with pytest.raises(KeyError):
        doc["missing"]
    copy = pickle.loads(pickle.dumps(doc))
    assert copy == doc and copy.spec == SPEC and copy._rendered is None


def test_doclist_opens_encoded_images_lazily_and_behaves_like_a_sequence() -> None:
    features = datasets.Features({"id": datasets.Value("string"), "question": datasets.Value("string"),
                                  "answer": datasets.Value("string"),
                                  "images": datasets.List(datasets.Image(decode=False))})
    table = datasets.Dataset.from_dict({"id": ["1", "2"], "question": ["q1", "q2"], "answer": ["A", "B"],
                                        "images": [[{"bytes": _png("red"), "path": None}], []]}, features=features)
    docs = bridge.documents(SPEC, table)
    assert len(docs) == 2 and "images" in docs.features and [d["id"] for d in docs] == ["1", "2"]
    first = docs[0]
    assert isinstance(first, Doc) and isinstance(first["images"][0], Image.Image)
    assert "bytes" not in repr(dict(first)), "the logged document shows an image repr, not its bytes"
    assert [d["id"] for d in docs[0:2]] == ["1", "2"]
    assert bridge.doc_to_target(first) == "A"


def test_process_results_keeps_the_metric_list_and_drops_rows_that_do_not_count(
        caplog: pytest.LogCaptureFixture) -> None:
    bridge._WARNED.discard("demo")
    doc = Doc({"id": "3", "question": "q", "answer": "A"}, SPEC)
    with caplog.at_level(logging.WARNING):
        assert bridge.process_results(doc, ["A"]) == {"acc": {"benchmark": "x", "id": "3"}}
        bridge.process_results(doc, ["A"])
    assert caplog.text.count("extra") == 1, "one warning per task"


def test_hooks_refuse_documents_the_adapter_did_not_build() -> None:
    with pytest.raises(TypeError, match="custom_dataset"):
        bridge.doc_to_text({"id": "1"})


@pytest.mark.parametrize(("limit", "stops"), [(None, False), (3, False), (64, False), (2, True), (1, True)])
def test_a_document_with_more_images_than_the_model_receives_stops_the_run(limit: int | None, stops: bool) -> None:
    spec = dataclasses.replace(SPEC, max_images=limit, max_images_source="max_images in --model_args")
    doc = Doc({"id": "9", "question": "Which?", "answer": "B"}, spec)
    if not stops:
        images = bridge.doc_to_image(doc)
        assert len(images) == 3 and all(image.info[bridge.IMAGE_MARK] for image in images)
        return
    with pytest.raises(bridge.ImageLimitError) as raised:
        bridge.doc_to_image(doc)
    message = str(raised.value)
    assert "\n" not in message and message.startswith("demo: document 9 has 3 images")
    assert f"at most {limit} (max_images in --model_args)" in message and "pass max_images=64" in message


@pytest.mark.parametrize(("metadata", "limit", "source"), [
    ({}, 1, "API backends default to max_images=1"),
    ({"model": "gpt-4o", "base_url": "http://x"}, 1, "API backends default"),
    ({"pretrained": "Qwen/Qwen2.5-VL-7B-Instruct"}, 999, "local backends' default"),
    ({"pretrained": "q", "max_images": 2}, 2, "max_images in --model_args"),
    ({"max_images": "64"}, 64, "max_images in --model_args"),
])
def test_the_image_limit_comes_from_lm_evals_model_arguments(metadata: dict[str, Any], limit: int,
                                                             source: str) -> None:
    found, where = task_functions.image_limit(metadata)
    assert found == limit and source in where


def test_a_bad_max_images_is_named() -> None:
    with pytest.raises(ValueError, match="max_images='many' in --model_args is not a whole number"):
        task_functions.image_limit({"max_images": "many"})
