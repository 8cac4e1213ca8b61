"""The plugin's generic lmms-eval hooks (`adapters.plugin_task`): one wrapper for every benchmark core."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
import pytest
from PIL import Image

from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.adapters.core.task import Prompt
from lmms_agentic.adapters.plugin_task import PluginBenchmark, PluginMedia, PluginTask
from lmms_agentic.tasks.agentvqa import hooks as agentvqa_hooks
from lmms_agentic.tasks.agentx import hooks as agentx_hooks
from lmms_agentic.tasks.robovista import hooks as robovista_hooks

ALL = [agentvqa_hooks, robovista_hooks, agentx_hooks]


@pytest.mark.parametrize("hooks", ALL, ids=lambda h: h.PLUGIN.core.BENCHMARK)
def test_the_harness_copies_and_pickles_of_a_hook_are_the_bound_hooks(hooks: Any) -> None:
    for hook in (hooks.doc_to_messages, hooks.doc_to_text, hooks.all_docs):
        assert copy.deepcopy(hook).__self__ is hooks.HOOKS
        assert pickle.loads(pickle.dumps(hook)).__self__ is hooks.HOOKS
    assert copy.deepcopy({"process_docs": hooks.HOOKS})["process_docs"] is hooks.HOOKS


def test_an_unknown_variant_is_named() -> None:
    with pytest.raises(KeyError, match="robovista has no variant 'kitchen'"):
        robovista_hooks.HOOKS.process_docs("kitchen")


def test_a_variant_gets_the_image_cells_of_the_rows_it_names(mini_env: None) -> None:
    """RoboVista's in-context variant names its example's row: the example's images come from that row."""
    docs = robovista_hooks.docs_icl_seed0(datasets.Dataset.from_list([{"x": 1}]))
    table = robovista_hooks.all_docs()
    row_of = {doc_id: index for index, doc_id in enumerate(table["id"])}
    assert len(docs) > 0
    for doc in docs:
        assert doc["images"] == table[row_of[doc["id"]]]["images"]
        if doc["icl_example_id"]:
            assert doc["icl_images"] == table[row_of[doc["icl_example_id"]]]["images"]
    assert any(doc["icl_example_id"] for doc in docs)


def test_text_prompts_read_no_media_and_need_no_image_column(mini_env: None) -> None:
    """lmms-eval hands `doc_to_text` documents without their image columns."""
    doc = dict(robovista_hooks.docs_domestic(datasets.Dataset.from_list([{"x": 1}]))[0])
    settings = {"protocol": "zero_shot", "system_prompt": "Be brief.", "suffix": "Answer.", "confidence_request": "",
                "icl_system_prompt": "", "icl_reasoning": False, "image_preprocess": "paper"}
    with_images = robovista_hooks.doc_to_text(doc, settings)
    del doc["images"]
    assert robovista_hooks.doc_to_text(doc, settings) == with_images
    assert with_images.startswith("Be brief.\n\n")


class _Core:
    """A one-document core whose prompt is given per test."""

    BENCHMARK = "fake"
    METRICS: Mapping[str, Any] = {}
    TASK_METRICS: Mapping[str, tuple[str, ...]] = {}
    VARIANTS: Mapping[str, Any] = {}

    def __init__(self, shown: Prompt) -> None:
        self.shown = shown

    def documents(self, rows: Any) -> Any:
        return rows

    def prompt(self, doc: Mapping[str, Any], settings: Mapping[str, Any], media: Any) -> Prompt:
        return self.shown

    def score(self, doc: Mapping[str, Any], reply: object, judge: Any = None) -> dict[str, Any]:
        return {}


IMAGE = Image.new("RGB", (2, 2))


@pytest.mark.parametrize(("system", "system_role", "expected"), [
    ("Be brief.", True, [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
                         {"role": "user", "content": [{"type": "image", "url": IMAGE},
                                                      {"type": "text", "text": "Q"}]}]),
    ("Be brief.", False, [{"role": "user", "content": [{"type": "text", "text": "Be brief.\n\n"},
                                                       {"type": "image", "url": IMAGE},
                                                       {"type": "text", "text": "Q"}]}]),
    ("Released text\n\n", False, [{"role": "user", "content": [{"type": "text", "text": "Released text\n\n"},
                                                               {"type": "image", "url": IMAGE},
                                                               {"type": "text", "text": "Q"}]}]),
    (None, True, [{"role": "user", "content": [{"type": "image", "url": IMAGE}, {"type": "text", "text": "Q"}]}]),
])
def test_messages_from_the_prompt(system: str | None, system_role: bool, expected: list[dict[str, Any]]) -> None:
    task = PluginTask(PluginBenchmark(core=_Core(Prompt(system, ((IMAGE,), "Q"))), load=lambda: None), "x")
    assert task.doc_to_messages({"id": "1"}, {"system_role": system_role}) == expected
    assert task.doc_to_visual({"id": "1"}, {}) == [IMAGE]


def test_a_native_video_is_a_video_part_and_its_path_the_visual(tmp_path: Path) -> None:
    video_file = tmp_path / "clip.mp4"
    video_file.write_bytes(b"not decoded in native mode")
    plugin = PluginBenchmark(core=_Core(Prompt(None)), load=lambda: None)
    doc = {"id": "1", "media_root": str(video_file.parent)}
    handed = PluginMedia(plugin, doc, {"video_mode": "native"}).video(video_file.name, 8)
    task = PluginTask(PluginBenchmark(core=_Core(Prompt(None, (handed, "Q"))), load=lambda: None), "x")
    assert task.doc_to_messages(doc, {})[0]["content"][0] == {"type": "video", "url": str(video_file)}
    assert task.doc_to_visual(doc, {}) == [str(video_file)]


@pytest.mark.parametrize(("cell", "error", "match"), [
    ("../outside.png", RecordError, "escapes the dataset folder"),
    ("/etc/passwd", RecordError, "escapes the dataset folder"),
    ("missing.png", FileNotFoundError, "missing.png"),
])
def test_a_media_file_outside_the_data_folder_or_missing_is_named(tmp_path: Path, cell: str, error: type[Exception],
                                                                 match: str) -> None:
    plugin = PluginBenchmark(core=_Core(Prompt(None)), load=lambda: None)
    media = PluginMedia(plugin, {"id": "r1", "media_root": str(tmp_path)}, {})
    with pytest.raises(error, match=match):
        media.image(cell)


def test_an_unknown_video_mode_is_refused(tmp_path: Path) -> None:
    plugin = PluginBenchmark(core=_Core(Prompt(None)), load=lambda: None)
    (tmp_path / "clip.mp4").write_bytes(b"")
    media = PluginMedia(plugin, {"id": "r1", "media_root": str(tmp_path)}, {"video_mode": "stream"})
    with pytest.raises(ValueError, match="video_mode must be 'frames' or 'native', got 'stream'"):
        media.video("clip.mp4", 4)


def test_an_image_file_is_decoded_once_per_question(tmp_path: Path) -> None:
    Image.new("L", (3, 2), 7).save(tmp_path / "a.png")
    plugin = PluginBenchmark(core=_Core(Prompt(None)), load=lambda: None)
    first = PluginMedia(plugin, {"id": "r1", "group_id": "q1", "media_root": str(tmp_path)}, {}).image("a.png")
    again = PluginMedia(plugin, {"id": "r2", "group_id": "q1", "media_root": str(tmp_path)}, {}).image("a.png")
    assert first is again and first.mode == "RGB" and first.size == (3, 2)
    stored = _Core(Prompt(None))
    stored.IMAGE_MODE = None  # type: ignore[attr-defined]  # the core's image policy converts (RoboVista's)
    kept = PluginBenchmark(core=stored, load=lambda: None)
    assert PluginMedia(kept, {"id": "r3", "media_root": str(tmp_path)}, {}).image("a.png").mode == "L"


ROBOVISTA_TEXTS = {"protocol": "zero_shot", "system_prompt": "SYS", "suffix": "Answer with a letter.",
                   "icl_system_prompt": "ICL-SYS", "icl_reasoning": False, "confidence_request": ""}


@pytest.mark.parametrize(("texts", "starts"), [
    (ROBOVISTA_TEXTS, "SYS\n\nWhich block?"),
    ({**ROBOVISTA_TEXTS, "system_prompt": ""}, "Which block?"),
    ({**ROBOVISTA_TEXTS, "protocol": "icl"},
     "ICL-SYS\n\n=== EXAMPLE ===\n[Image 1: Example image]\n\nQuestion: Which cup?"),
], ids=["system-leads", "no-system", "icl"])
def test_the_text_prompt_is_the_system_text_leading_the_user_texts(texts: dict[str, Any], starts: str) -> None:
    """A RoboVista document as lmms-eval hands it to `doc_to_text` (no image columns): its texts, no media read."""
    from lmms_agentic.tasks.robovista.core import prompt, records

    row = {"id": "q_1", "question": "Which block?", "choices": ["red", "green", "blue", "yellow", "purple"],
           "correct_answer": "B", "reasoning": "because", "domain": "domestic", "task": "tidying",
           "ability_type": "scene_understanding", "ability_subcategory": "grasp", "publication_source": "paper"}
    doc = {**records.normalise(row, n_images=1).to_row(), "icl_example_id": "q_2", "icl_question": "Which cup?",
           "icl_options": ["left", "", "right"], "icl_answer": "C", "icl_reasoning": "it is right"}
    doc.pop("images", None)
    text = robovista_hooks.doc_to_text(doc, texts)
    assert text.startswith(starts) and text.endswith(prompt.user_text(doc, texts))


def test_a_native_video_reaches_the_messages_of_a_core_that_lays_it_out(mini_env: None) -> None:
    """AgentVQA's core puts what the reader hands over for a native video after the images (it once iterated it)."""
    docs = agentvqa_hooks.docs_egocentric_videos(datasets.Dataset.from_list([{"x": 1}]))
    doc = next(doc for doc in docs if doc.get("video"))
    settings = {"history_header": "H:", "post_prompt": "P", "video_mode": "native", "n_frames": 8}
    parts = agentvqa_hooks.doc_to_messages(doc, settings)[0]["content"]
    videos = [part for part in parts if part["type"] == "video"]
    assert len(videos) == 1 and videos[0]["url"].endswith(doc["video"])
    assert agentvqa_hooks.doc_to_visual(doc, settings)[-1] == videos[0]["url"]
