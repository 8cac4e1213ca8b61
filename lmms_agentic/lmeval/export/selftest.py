"""Tests of one benchmark's exported tasks, run in the harness's repository.

Every task and group is registered; then, on a few documents built here (their text from the dataset's rows,
their images drawn with Pillow at the released sizes, their videos encoded with PyAV), each task's prompt, its
visuals, the scores of known replies (the answer extractor's hard cases among them) and every aggregation equal the
values recorded when the folder was written (`testdata/<benchmark>_cases.json` next to this file: `sample`, the
rows with each image cell as `{"draw": [width, height]}` and the repository files they name; `cases`, per task its
hooks, prompt settings and, per document, its prompt, replies and metric values). Skipped cleanly where Pillow,
PyAV or `datasets` is not installed.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PACKAGE = "lmms_eval"
BENCHMARK = ""
RECORDED = Path(__file__).parent / "testdata" / f"{BENCHMARK}_cases.json"


def recorded() -> dict[str, Any]:
    """The recorded sample and cases (none where the file is absent)."""
    if not BENCHMARK or not RECORDED.is_file():
        return {"sample": {"rows": [], "files": {}}, "cases": {}}
    data: dict[str, Any] = json.loads(RECORDED.read_text(encoding="utf-8"))
    return data


CASES = recorded()["cases"]
COLOURS = ((200, 30, 30), (30, 160, 60), (40, 60, 200), (220, 200, 40), (120, 40, 160))


def draw(width: int, height: int, index: int) -> bytes:
    """A PNG of the given size: one colour per index, a white square in its top-left corner."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), COLOURS[index % len(COLOURS)])
    ImageDraw.Draw(image).rectangle((0, 0, width // 4, height // 4), fill=(255, 255, 255))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def encode_video(path: Path, n_frames: int, index: int) -> None:
    """An MPEG-4 video of `n_frames` 32x32 frames whose colours cycle from `index`."""
    import av
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=4)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for frame in range(n_frames):
            image = Image.new("RGB", (32, 32), COLOURS[(index + frame) % len(COLOURS)])
            frame_image = av.VideoFrame.from_image(image)  # type: ignore[no-untyped-call]
            for packet in stream.encode(frame_image):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def _cell(value: Any, counter: list[int]) -> Any:
    if isinstance(value, dict) and set(value) == {"draw"}:
        counter[0] += 1
        width, height = value["draw"]
        return {"bytes": draw(int(width), int(height), counter[0]), "path": None}
    if isinstance(value, list):
        return [_cell(item, counter) for item in value]
    return value


def sample_dataset(sample: dict[str, Any], folder: Path) -> Any:
    """The sample's rows as a `datasets.Dataset` (images drawn), its files written under `folder`."""
    import datasets

    for index, (name, (kind, *shape)) in enumerate(sorted(sample["files"].items())):
        target = folder / name
        if kind == "video":
            encode_video(target, int(shape[0]), index)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(draw(int(shape[0]), int(shape[1]), index))
    counter = [0]
    rows = [{k: _cell(v, counter) for k, v in row.items()} for row in sample["rows"]]
    if sample.get("release_file"):  # a keyed JSON release: the hooks read the file, the loaded split is a stand-in
        entries = {row["id"]: [{k: v for k, v in row.items() if k != "id"}] for row in rows}
        (folder / sample["release_file"]).write_text(json.dumps(entries), encoding="utf-8")
        return datasets.Dataset.from_list([{"id": row["id"]} for row in rows])
    return datasets.Dataset.from_list(rows)


def comparable(value: Any) -> Any:
    """A metric value as recorded: a dict's `score` (or its sorted items), NaN as the string "nan"."""
    if isinstance(value, dict):
        return value["score"] if "score" in value else {k: comparable(v) for k, v in sorted(value.items())}
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float):
        return round(value, 9)
    return value


def counted(values: dict[str, Any]) -> dict[str, Any]:
    """The metric values an item counts for (None: the item does not count), as recorded."""
    return {name: comparable(value) for name, value in values.items() if value is not None}


def visual_shape(item: Any) -> Any:
    """An image as its size, a video file as its name."""
    return list(item.size) if hasattr(item, "size") else os.path.basename(str(item))


def prompt_of(utils: Any, doc: Any, settings: Any) -> dict[str, Any]:
    """What a task shows for one document: its text and the shape of each visual."""
    if hasattr(utils, "doc_to_messages"):
        text = utils.doc_to_text(doc, settings)
        visuals = utils.doc_to_visual(doc, settings)
        roles = [turn["role"] for turn in utils.doc_to_messages(doc, settings)]
        return {"text": text, "visuals": [visual_shape(v) for v in visuals], "roles": roles}
    return {"text": utils.doc_to_text(doc), "visuals": [visual_shape(v) for v in utils.doc_to_image(doc)],
            "system": doc["system_prompt"]}


@pytest.fixture(scope="module")
def utils() -> Any:
    pytest.importorskip("PIL")
    pytest.importorskip("datasets")
    return importlib.import_module(f"{PACKAGE}.tasks.{BENCHMARK}.utils")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sample = recorded()["sample"]
    if any(kind == "video" for kind, *_ in sample["files"].values()):
        pytest.importorskip("av")
    folder = tmp_path_factory.mktemp("sample")
    here = os.getcwd()
    os.chdir(folder)  # the rows name their files relative to the dataset repository
    try:
        yield sample_dataset(sample, folder)
    finally:
        os.chdir(here)


def test_every_task_and_group_is_found() -> None:
    tasks = importlib.import_module(f"{PACKAGE}.tasks")
    folder = Path(importlib.import_module(f"{PACKAGE}.tasks.{BENCHMARK}").__path__[0])
    manager = tasks.TaskManager(include_path=str(folder), include_defaults=False)
    names = {path.stem for path in folder.glob("*.yaml")}
    assert names and not names - set(manager.all_tasks)


@pytest.mark.parametrize("task", sorted(CASES))
def test_prompts_visuals_scores_and_aggregations(task: str, utils: Any, dataset: Any) -> None:
    case = CASES[task]
    docs = getattr(utils, case["process_docs"])(dataset)
    process_results = getattr(utils, case["process_results"])
    values: dict[str, list[Any]] = {}
    docs = docs.select(range(min(len(docs), len(case["documents"]))))
    assert [str(doc["id"]) for doc in docs] == case["ids"]
    for doc, expected in zip(docs, case["documents"], strict=True):
        assert prompt_of(utils, doc, case["settings"]) == expected["prompt"]
        for reply, wanted in zip(expected["replies"], expected["values"], strict=True):
            got = process_results(doc, [reply])
            assert set(got) == set(case["aggregations"]), reply  # every declared metric, on every row
            assert counted(got) == wanted, reply
            for name, value in got.items():
                values.setdefault(name, []).append(value)
    aggregated = {name: comparable(getattr(utils, function)(values.get(name, [])))
                  for name, function in case["aggregations"].items()}
    assert aggregated == case["aggregated"]
