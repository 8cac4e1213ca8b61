"""The harness glue (`adapters.glue`) over a miniature core built here: documents per variant from a loaded split,
prompts as each harness wants them (images from dataset cells and repository files, video frames with PyAV, native
video as a file), every declared metric per item and one aggregation per metric."""

from __future__ import annotations

import io
import json
import math
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters.core.task import Metric, Prompt, check_core_task, metric_table, whole_record

Image = pytest.importorskip("PIL.Image")
datasets = pytest.importorskip("datasets")

from lmms_agentic.adapters.glue import hub_media  # noqa: E402
from lmms_agentic.adapters.glue.lm_eval_glue import LmEvalHooks  # noqa: E402
from lmms_agentic.adapters.glue.lmms_eval_glue import LmmsEvalHooks  # noqa: E402


def _mean(values: Sequence[Any]) -> float:
    counted = [v for v in values if v is not None]
    return sum(counted) / len(counted) if counted else math.nan


def _record_mean(values: Sequence[Any]) -> float:
    return _mean([v["score"] for v in values])


def _core() -> Any:
    """A miniature core: documents keep the image cell; a `red` variant; the record's score is 100 for the answer."""

    def documents(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [{"id": str(r["qid"]), "answer": r["gold"], "colour": r["colour"], "image": r["picture"],
                 "video": r.get("clip") or ""} for r in rows]

    def prompt(doc: Mapping[str, Any], settings: Mapping[str, Any], media: Any) -> Prompt:
        parts: list[Any] = [f"Look{settings.get('suffix', '')}: ", media.image(doc["image"])]
        if doc["video"]:
            parts += [" and ", media.video(doc["video"], int(settings.get("n_frames", 2)))]
        return Prompt(system=settings.get("system"), parts=(*parts, " Which colour?"))

    def score(doc: Mapping[str, Any], reply: object, judge: Any = None) -> dict[str, Any]:
        said = judge([reply])[0] if judge else str(reply).strip()
        correct = said == doc["answer"]
        return {"id": doc["id"], "pred": said, "score": 100.0 if correct else 0.0, "colour": doc["colour"]}

    metrics = metric_table(
        Metric("acc", whole_record, _record_mean),
        Metric("red_acc", lambda r: (r["score"] if r["colour"] == "red" else None), _mean),
        Metric("answered", lambda r: 100.0 if r["pred"] else 0.0, _mean, higher_is_better=False))
    core = types.SimpleNamespace(
        BENCHMARK="mini", METRICS=metrics, TASK_METRICS={"all": ("acc", "red_acc", "answered"), "short": ("acc",)},
        VARIANTS={"all": lambda docs: docs, "red": lambda docs: [d for d in docs if d["colour"] == "red"]},
        documents=documents, prompt=prompt, score=score)
    return check_core_task(core)


def _png(colour: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 3), colour).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def split() -> Any:
    features = datasets.Features({"qid": datasets.Value("int64"), "gold": datasets.Value("string"),
                                  "colour": datasets.Value("string"), "picture": datasets.Image(),
                                  "clip": datasets.Value("string")})
    rows = {"qid": [1, 2, 3], "gold": ["red", "blue", "red"], "colour": ["red", "blue", "red"],
            "picture": [{"bytes": _png(c), "path": None} for c in ("red", "blue", "red")], "clip": ["", "", ""]}
    return datasets.Dataset.from_dict(rows, features=features)


def test_process_docs_selects_the_variant_and_keeps_image_cells_undecoded(split: Any) -> None:
    hooks = LmmsEvalHooks(_core(), "owner/mini", "abc123")
    docs = hooks.process_docs("red")(split)
    assert docs["id"] == ["1", "3"]
    assert isinstance(docs[0]["image"], dict) and docs[0]["image"]["bytes"] == _png("red")
    with pytest.raises(KeyError, match="no variant 'blue'"):
        hooks.process_docs("blue")(split)


def test_lmms_eval_prompt_hooks(split: Any) -> None:
    hooks = LmmsEvalHooks(_core(), "owner/mini", "abc123")
    doc = hooks.process_docs("all")(split)[1]
    settings = {"system": "Be brief.", "suffix": " closely"}
    [image] = hooks.doc_to_visual(doc, settings)
    assert image.mode == "RGB" and image.getpixel((0, 0)) == (0, 0, 255)
    assert hooks.doc_to_text(doc, settings) == "Be brief.\n\nLook closely:  Which colour?"
    system, user = hooks.doc_to_messages(doc, settings)
    assert system == {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    assert [part["type"] for part in user["content"]] == ["text", "image", "text"]
    [only] = hooks.doc_to_messages(doc, {**settings, "system_role": False})
    assert only["content"][0] == {"type": "text", "text": "Be brief.\n\n"} and len(only["content"]) == 4
    assert hooks.doc_to_messages(doc, {})[0]["role"] == "user"
    assert hooks.doc_to_target(doc) == "blue"


def test_every_declared_metric_is_reported_and_aggregated(split: Any) -> None:
    hooks = LmmsEvalHooks(_core(), "owner/mini", "abc123")
    docs = hooks.process_docs("all")(split)
    score = hooks.process_results("all")
    values = [score(doc, [reply]) for doc, reply in zip(docs, ["red", "red", ""], strict=True)]
    assert [set(v) for v in values] == [{"acc", "red_acc", "answered"}] * 3
    assert values[1]["red_acc"] is None and values[0]["acc"]["score"] == 100.0
    assert hooks.aggregation("acc")([v["acc"] for v in values]) == pytest.approx(100 / 3)
    assert hooks.aggregation("red_acc")([v["red_acc"] for v in values]) == 50.0
    assert hooks.aggregation("answered")([v["answered"] for v in values]) == pytest.approx(200 / 3)
    assert math.isnan(hooks.aggregation("red_acc")([None]))
    assert set(hooks.process_results("short")(docs[0], ["red"])) == {"acc"}
    judged = hooks.process_results("short", judge=lambda: lambda replies: ["blue" for _ in replies])
    assert judged(docs[1], ["no idea"])["acc"]["score"] == 100.0
    with pytest.raises(KeyError):
        hooks.process_results("long")
    with pytest.raises(KeyError):
        hooks.aggregation("f1")


def test_lm_eval_documents_carry_their_settings_and_placeholders(split: Any) -> None:
    hooks = LmEvalHooks(_core(), "owner/mini", "abc123")
    settings = {"system": "Be brief.", "suffix": "!"}
    docs = hooks.process_docs("red", settings)(split)
    doc = docs[0]
    assert json.loads(doc["prompt_settings"]) == settings and doc["system_prompt"] == "Be brief."
    assert hooks.doc_to_text(doc) == "Look!: <image> Which colour?"
    [image] = hooks.doc_to_image(doc)
    assert image.getpixel((1, 1)) == (255, 0, 0)
    assert hooks.doc_to_target(doc) == "red"
    values = hooks.process_results("all")(doc, ["blue"])
    assert values["acc"]["score"] == 0.0 and values["red_acc"] == 0.0
    assert hooks.aggregation("red_acc")([values["red_acc"], None]) == 0.0
    blue = hooks.process_docs("all", settings)(split)[1]
    blue_values = hooks.process_results("all")(blue, ["blue"])
    assert set(blue_values) == {"acc", "answered", "red_acc"} and blue_values["red_acc"] is None  # does not apply
    assert math.isnan(hooks.aggregation("red_acc")([blue_values["red_acc"]]))  # no item counts: NaN, not 0
    assert hooks.process_docs("all", {})(split)[1]["system_prompt"] == ""


def _video(path: Path, colours: Sequence[tuple[int, int, int]]) -> None:
    av = pytest.importorskip("av")
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=5)
        stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        for colour in colours:
            frame = av.VideoFrame.from_image(Image.new("RGB", (16, 16), colour))
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def test_uniform_indices_follow_the_half_up_rule() -> None:
    assert hub_media.uniform_indices(3, 8) == [0, 1, 2]
    assert hub_media.uniform_indices(10, 1) == [4]
    assert hub_media.uniform_indices(10, 4) == [0, 3, 6, 9]
    assert hub_media.uniform_indices(6, 3) == [0, 3, 5]  # 2.5 rounds up


def test_videos_from_the_dataset_repository(tmp_path: Path, split: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _video(tmp_path / "clip.mp4", [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)])
    asked: list[tuple[str, str, str, str]] = []

    def download(repo_id: str, filename: str, repo_type: str, revision: str) -> str:
        asked.append((repo_id, filename, repo_type, revision))
        return str(tmp_path / filename)

    monkeypatch.setattr("huggingface_hub.hf_hub_download", download)
    with_clip = split.map(lambda row: {"clip": "clip.mp4"})
    lm = LmEvalHooks(_core(), "owner/mini", "abc123")
    doc = lm.process_docs("all", {"n_frames": 2})(with_clip)[0]
    assert lm.doc_to_text(doc) == "Look: <image> and <image><image> Which colour?"
    _, first, last = lm.doc_to_image(doc)
    assert first.getpixel((8, 8))[0] > 200 and last.getpixel((8, 8))[2] > 200 and last.getpixel((8, 8))[1] > 200
    assert asked[0] == ("owner/mini", "clip.mp4", "dataset", "abc123")
    lmms = LmmsEvalHooks(_core(), "owner/mini", "abc123")
    native = {"video_mode": "native"}
    assert lmms.doc_to_visual(doc, native)[1] == str(tmp_path / "clip.mp4")
    assert [p["type"] for p in lmms.doc_to_messages(doc, native)[0]["content"]] == ["text", "image", "text",
                                                                                    "video", "text"]
    (tmp_path / "empty.mp4").write_bytes(b"")
    with pytest.raises(Exception):  # noqa: B017 (PyAV's own error type for a file that is no video)
        hub_media.sample_frames(str(tmp_path / "empty.mp4"), 2)


def test_image_cells_of_every_shape(tmp_path: Path) -> None:
    media = hub_media.HubMedia("owner/mini", "abc123")
    (tmp_path / "a.png").write_bytes(_png("green"))
    path = str(tmp_path / "a.png")
    for cell in (_png("green"), {"bytes": _png("green"), "path": None}, {"bytes": None, "path": path},
                 Image.new("L", (2, 2), 150), path):
        assert media.image(cell).mode == "RGB"
    with pytest.raises(ValueError, match="neither bytes nor a path"):
        media.image({"bytes": None, "path": None})
    with pytest.raises(TypeError):
        media.image(3)
    assert hub_media.flat_media(["a", [1, (2, 3)], 4]) == [1, 2, 3, 4]
    stored = hub_media.HubMedia("owner/mini", "abc123", rgb=False)
    Image.new("L", (2, 2), 150).save(tmp_path / "gray.png")
    for cell in ((tmp_path / "gray.png").read_bytes(), str(tmp_path / "gray.png"), Image.new("L", (2, 2), 150)):
        assert stored.image(cell).mode == "L"
    assert hub_media.converts_to_rgb(object()) and not hub_media.converts_to_rgb(types.SimpleNamespace(IMAGE_MODE=None))


def test_the_harness_may_deep_copy_a_task_config() -> None:
    import copy

    for hooks in (LmmsEvalHooks(_core(), "owner/mini", "abc123"), LmEvalHooks(_core(), "owner/mini", "abc123")):
        config = {"doc_to_text": hooks.doc_to_text, "process_results": hooks.process_results("all")}
        copied = copy.deepcopy(config)
        assert copied["doc_to_text"].__self__ is hooks


@pytest.mark.parametrize("benchmark", ["agentvqa", "robovista"])
def test_the_text_hook_works_on_documents_without_their_image_columns(benchmark: str, mini_env: None) -> None:
    """lmms-eval hands `doc_to_text` the documents with their `datasets.Image` columns removed: the exported hook lays
    the core's media fields out empty instead of failing on the missing column (RoboVista's core refuses a document
    without `images`), and gives the text it gives on the whole document."""
    import importlib

    import datasets

    core = importlib.import_module(f"lmms_agentic.tasks.{benchmark}.core.task")
    plugin = importlib.import_module(f"lmms_agentic.tasks.{benchmark}.hooks")
    variant = "domestic" if benchmark == "robovista" else "web_agents"
    doc = dict(plugin.HOOKS.process_docs(variant)(datasets.Dataset.from_list([{"x": 1}]))[0])
    settings = {"protocol": "zero_shot", "system_prompt": "S", "suffix": "A", "confidence_request": "",
                "icl_system_prompt": "", "icl_reasoning": False, "history_header": "H:", "post_prompt": "P"}
    hooks = LmmsEvalHooks(core, "org/name", "main")
    whole = hooks.doc_to_text(doc, settings)
    stripped = {key: value for key, value in doc.items() if key not in core.MEDIA_FIELDS}
    assert hooks.doc_to_text(stripped, settings) == whole == plugin.doc_to_text(stripped, settings)
