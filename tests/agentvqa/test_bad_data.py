"""AgentVQA bad-data corpus: every corruption of the mini split (table, images, videos) ends in one clear error
naming the record, field or file (or a counted skip), never a library crash or a silently wrong score."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import pytest
from PIL import Image

from lmms_agentic.tasks.agentvqa import hooks

from ..bad_data import (
    Case,
    add_column,
    both,
    change_file,
    copy_mini,
    drop_column,
    duplicate_id,
    fifo,
    garbage,
    half,
    header_only,
    image_out_of_the_table,
    non_utf8_text,
    nothing,
    outside_the_copy,
    override,
    params,
    path_cell,
    png_bytes,
    remove_file,
    run_default,
    run_load_time,
    run_skip,
    set_field,
    set_image,
    symlink,
    truncate_table,
    truncated_faststart,
    without_frames,
    zeroed_payload,
)

BENCHMARK = "agentvqa"
ROWS = 15
KWARGS = {"video_mode": "frames", "n_frames": 8, "history_header": "Previous actions:",
          "post_prompt": "Answer with only the letter (A, B, C, or D) of the correct option."}
MB = "Where does the agent move next? " * 32_000


def _doc(record: str) -> dict[str, Any]:
    docs = hooks.all_docs()
    domain = docs[docs["id"].index(record)]["domain"]
    variant = hooks.select_variant(domain)
    return dict(variant[variant["id"].index(record)])


def visuals(docs: datasets.Dataset, record: str) -> Any:
    return hooks.doc_to_visual(_doc(record), KWARGS)


def _gold(record: str, letter: str) -> Callable[[datasets.Dataset], None]:
    def check(docs: datasets.Dataset) -> None:
        assert docs[docs["id"].index(record)]["answer"] == letter and len(docs) == ROWS
    return check


def _long_question(docs: datasets.Dataset) -> None:
    start = time.perf_counter()
    text = hooks.doc_to_text(_doc("gameqa_0001"), KWARGS)
    assert MB.strip() in text and len(text) > 1_000_000
    assert time.perf_counter() - start < 120  # a hang guard with a wide margin


def _all_rows(docs: datasets.Dataset) -> None:
    assert len(docs) == ROWS


def _no_image_size(folder: Path) -> None:
    set_field(1, "image_width", None)(folder)
    set_field(1, "image_height", None)(folder)


def _size_read_from_the_image(docs: datasets.Dataset) -> None:
    row = docs[docs["id"].index("screenspot_0001")]
    meta = json.loads(row["metadata_json"])
    cell = row["images"][0]
    with Image.open(io.BytesIO(cell["bytes"]) if isinstance(cell, dict) else cell) as image:
        assert (meta["image_width"], meta["image_height"]) == image.size


def _image_read_from_the_folder(docs: datasets.Dataset) -> None:
    images = visuals(docs, "gameqa_0001")
    assert len(docs) == ROWS and images and all(image.size[0] > 0 for image in images)


def _domain_of(record: str, domain: str) -> Callable[[datasets.Dataset], None]:
    def check(docs: datasets.Dataset) -> None:
        assert docs[docs["id"].index(record)]["domain"] == domain and len(docs) == ROWS
    return check


IMAGE = r"record 'gameqa_0001', field 'images\[0\]': image "
VIDEO = r"record 'vsibench_0001', field 'video': media path "
KITCHEN = r"videos/kitchen_walk\.mp4"
KITCHEN_RECORD = r"record '(vsibench|openeqa)_0001', field 'video'"
CASES = [
    Case("corrupt_image", set_image(6, 0, garbage), "media_error", (IMAGE + "is unreadable",), "gameqa_0001",
         skip=True),
    Case("truncated_image", set_image(6, 0, half), "media_error", (IMAGE + "is truncated",), "gameqa_0001",
         skip=True),
    Case("png_header_only", set_image(6, 0, header_only), "media_error", (IMAGE + "is truncated",), "gameqa_0001",
         skip=True),
    Case("zero_byte_image", set_image(6, 0, nothing), "media_error", (IMAGE + r"is empty \(0 bytes\)",),
         "gameqa_0001", skip=True),
    Case("truncated_image_of_a_coordinate_item", set_image(1, 0, half), "media_error",
         (r"record 'screenspot_0001', field 'images\[0\]': image is truncated",), "screenspot_0001",
         skip=True),
    Case("truncated_video_index_first", truncated_faststart("videos/kitchen_walk.mp4"), "media_error",
         (KITCHEN + r".*is truncated: box 'mdat'",), "vsibench_0001", skip=True,
         load_match=(KITCHEN_RECORD, KITCHEN + r" is truncated")),
    Case("truncated_video_index_last", change_file("videos/kitchen_walk.mp4", half), "media_error",
         (KITCHEN + r".*is truncated",), "vsibench_0001", skip=True,
         load_match=(KITCHEN_RECORD, KITCHEN + r" is truncated")),
    Case("intact_video_index_first", truncated_faststart("videos/kitchen_walk.mp4", 1.0), "loads",
         check=lambda docs: hooks.doc_to_visual(_doc("vsibench_0001"), KWARGS)),
    Case("missing_video", remove_file("videos/egoplan_cut.mp4"), "media_error",
         (r"record 'egoplan_0001', field 'video': .*egoplan_cut\.mp4 does not exist",), "egoplan_0001",
         skip=True),
    Case("video_path_escaping_the_folder", set_field(3, "video", "../../outside.mp4"), "media_error",
         (r"record 'vsibench_0001', field 'video': media path '\.\./\.\./outside\.mp4' escapes",),
         "vsibench_0001", skip=True),
    Case("absolute_video_path", set_field(3, "video", "/etc/hostname"), "media_error",
         (r"record 'vsibench_0001', field 'video': media path '/etc/hostname' escapes",),
         "vsibench_0001", skip=True),
    Case("gold_outside_the_options", set_field(6, "answer", "E"), "load_error",
         (r"record 'gameqa_0001', field 'answer': 'E' is not a letter A-D",), "gameqa_0001", skip=True),
    Case("gold_lowercase", set_field(6, "answer", "b"), "loads", check=_gold("gameqa_0001", "B")),
    Case("gold_in_parentheses", set_field(6, "answer", "(B)"), "load_error",
         (r"record 'gameqa_0001', field 'answer': '\(B\)' is not a letter A-D",), "gameqa_0001", skip=True),
    Case("duplicate_ids", duplicate_id(6, 7), "load_error",
         (r"record 'gameqa_0001', field 'id': occurs more than once",), "gameqa_0001", skip=True,
         extra={"first_copy_kept": True}),
    Case("empty_options", set_field(6, "options", []), "load_error",
         (r"record 'gameqa_0001', field 'options': must be a list of 4 strings",), "gameqa_0001", skip=True),
    Case("one_empty_option", set_field(6, "options", ["0", "", "2", "3"]), "load_error",
         (r"record 'gameqa_0001', field 'options': has an empty",), "gameqa_0001", skip=True),
    Case("non_utf8_question", non_utf8_text(6, "question"), "load_error",
         (r"record 'gameqa_0001'", r"field 'question'", r"UTF-8", r"copy"), "gameqa_0001", skip=True),
    Case("one_megabyte_question", set_field(6, "question", MB), "loads", check=_long_question),
    Case("truncated_parquet", truncate_table, "load_error", (r"Could not load agentvqa", r"(?i)corrupt", r"copy")),
    Case("truncated_parquet_names_the_file", truncate_table, "load_error", (r"test-00000-of-00001\.parquet",)),
    Case("missing_column", drop_column("answer"), "load_error",
         (r"AgentVQA columns do not match the field map: missing answer \(column 'answer'\)",)),
    Case("extra_column", add_column("extra_column", "x"), "loads", check=_all_rows),
    Case("coordinate_item_without_image_size", _no_image_size, "loads", check=_size_read_from_the_image),
    # paths and files outside the data
    Case("path_only_image_inside_the_folder", image_out_of_the_table(6, 0, "images/gameqa_0001.png"), "loads",
         check=_image_read_from_the_folder),
    Case("path_only_image_absolute", path_cell(6, 0, outside_the_copy("outside.png", png_bytes())), "media_error",
         (r"record 'gameqa_0001', field 'images\[0\]': media path '/.*outside\.png' escapes the dataset folder",),
         "gameqa_0001", skip=True),
    Case("video_symlink_loop", both(symlink("videos/loop.mp4", "loop.mp4"), set_field(3, "video", "videos/loop.mp4")),
         "media_error", (VIDEO + r"'videos/loop\.mp4' is a symbolic link loop",), "vsibench_0001", skip=True),
    Case("video_folder_symlink_loop", both(symlink("clips", "clips"), set_field(3, "video", "clips/a.mp4")),
         "media_error", (VIDEO + r"'clips/a\.mp4' is a symbolic link loop",), "vsibench_0001", skip=True),
    Case("video_fifo", both(fifo("videos/pipe.mp4"), set_field(3, "video", "videos/pipe.mp4")), "media_error",
         (VIDEO + r"'videos/pipe\.mp4' is not a regular file \(a named pipe\)",), "vsibench_0001", skip=True),
    # media that pass a structure check and fail once frames are decoded
    Case("zeroed_video_payload", change_file("videos/kitchen_walk.mp4", zeroed_payload), "media_error",
         (KITCHEN,), "vsibench_0001", skip=True,
         load_match=(KITCHEN_RECORD, KITCHEN + r" is corrupt: its first frame cannot be decoded")),
    Case("video_without_frames", without_frames("videos/kitchen_walk.mp4"), "media_error", (KITCHEN,),
         "vsibench_0001", skip=True, load_match=(KITCHEN_RECORD, KITCHEN + r" (holds no video frames|has no video)")),
    # odd labels
    Case("empty_domain_label", set_field(6, "domain", ""), "load_error",
         (r"unknown domain label\(s\) '' \(1 row\)", r'\n    "": <one of: web_agents, ')),
    Case("empty_domain_label_mapped_by_the_suggested_override",
         both(set_field(6, "domain", ""), override('labels:\n  domain:\n    "": games\n')), "loads",
         check=_domain_of("gameqa_0001", "games")),
    Case("missing_domain_label_mapped_by_the_suggested_override",
         both(set_field(6, "domain", None), override('labels:\n  domain:\n    "": games\n')), "loads",
         check=_domain_of("gameqa_0001", "games")),
]


@pytest.fixture
def load_copy(tmp_path: Path, point_at: Callable[..., None]) -> Callable[..., Callable[[], Any]]:
    def prepare(case: Case, skip: bool = False) -> Callable[[], Any]:
        copy = copy_mini(BENCHMARK, tmp_path / "copy")
        case.build(copy)
        point_at(BENCHMARK, copy, skip=skip)
        return hooks.all_docs
    return prepare


@pytest.mark.parametrize("case", params(CASES, "default"))
def test_bad_data_gives_one_clear_error(case: Case, load_copy: Callable[..., Callable[[], Any]]) -> None:
    run_default(case, load_copy(case), visuals)


@pytest.mark.parametrize("case", params(CASES, "load_time"))
def test_bad_media_is_found_while_loading(case: Case, load_copy: Callable[..., Callable[[], Any]]) -> None:
    run_load_time(case, load_copy(case))


@pytest.mark.parametrize("case", params(CASES, "skip"))
def test_bad_records_are_skipped_and_counted(case: Case, load_copy: Callable[..., Callable[[], Any]]) -> None:
    run_skip(case, BENCHMARK, load_copy(case, skip=True), ROWS)
