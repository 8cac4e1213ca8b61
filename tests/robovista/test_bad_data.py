"""RoboVista bad-data corpus: every corruption of the mini split ends in one clear error naming the record, field
or file (or a counted skip with LMMS_AGENTIC_SKIP_BAD_RECORDS=1), never a library crash or a silently wrong score."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import pytest

from lmms_agentic.tasks.robovista import hooks

from ..bad_data import (
    NOT_AN_IMAGE,
    YAML_BOMB,
    Case,
    add_column,
    both,
    copy_mini,
    corrupt_pages,
    drop_column,
    duplicate_id,
    fifo,
    garbage,
    half,
    header_only,
    image_out_of_the_table,
    no_rows,
    non_utf8_text,
    nothing,
    outside_the_copy,
    override,
    params,
    path_cell,
    png_bytes,
    run_default,
    run_load_time,
    run_skip,
    set_field,
    set_image,
    symlink,
    truncate_table,
    write_file,
)

BENCHMARK = "robovista"
ROWS = 21
KWARGS = {"image_preprocess": "paper", "system_prompt": "You are a robot.", "suffix": "Answer with a letter."}
MB = "Which block is the gripper holding? " * 30_000  # ~1 MB


def visuals(docs: datasets.Dataset, record: str) -> Any:
    doc = docs[docs["id"].index(record)]
    return hooks.doc_to_visual(doc, KWARGS)


def _gold(record: str, letter: str) -> Callable[[datasets.Dataset], None]:
    def check(docs: datasets.Dataset) -> None:
        doc = docs[docs["id"].index(record)]
        assert doc["answer"] == letter and len(docs) == ROWS
    return check


def _long_question(docs: datasets.Dataset) -> None:
    doc = docs[docs["id"].index("q_mini_05")]
    start = time.perf_counter()
    text = hooks.doc_to_text(doc, KWARGS)
    assert MB.strip() in text and len(text) > 1_000_000  # passed on whole, never cut silently
    assert time.perf_counter() - start < 120  # a hang guard with a wide margin


def _all_rows(docs: datasets.Dataset) -> None:
    assert len(docs) == ROWS and "extra_column" not in docs.column_names


def _image_read_from_the_folder(docs: datasets.Dataset) -> None:
    images = visuals(docs, "q_mini_03")
    assert len(docs) == ROWS and images and all(image.size[0] > 0 for image in images)


def _outside(name: str) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        outside_the_copy(name, png_bytes())(folder)
    return build


def _domain_of(record: str, domain: str) -> Callable[[datasets.Dataset], None]:
    def check(docs: datasets.Dataset) -> None:
        assert docs[docs["id"].index(record)]["domain"] == domain and len(docs) == ROWS
    return check


MEDIA = r"record 'q_mini_03', field 'images\[0\]': image "
CELL = r"record 'q_mini_03', field 'images\[0\]': "
NOT_QUOTED = r"^(?![\s\S]*SECRET)"  # the error does not quote the file's bytes
CASES = [
    Case("corrupt_image", set_image(3, 0, garbage), "media_error", (MEDIA + "is unreadable",), "q_mini_03",
         skip=True),
    Case("truncated_image", set_image(3, 0, half), "media_error", (MEDIA + "is truncated",), "q_mini_03", skip=True),
    Case("png_header_only", set_image(3, 0, header_only), "media_error", (MEDIA + "is truncated",), "q_mini_03",
         skip=True),
    Case("zero_byte_image", set_image(3, 0, nothing), "media_error", (MEDIA + r"is empty \(0 bytes\)",),
         "q_mini_03", skip=True),
    Case("gold_outside_the_options", set_field(2, "correct_answer", "F"), "load_error",
         (r"record 'q_mini_02', field 'correct_answer': 'F' is not one of the letters ABCDE",), "q_mini_02",
         skip=True),
    Case("gold_lowercase", set_field(2, "correct_answer", "b"), "loads", check=_gold("q_mini_02", "B")),
    Case("gold_in_parentheses", set_field(2, "correct_answer", "(B)"), "load_error",
         (r"record 'q_mini_02', field 'correct_answer': '\(B\)' is not one of the letters",), "q_mini_02",
         skip=True),
    Case("duplicate_ids", duplicate_id(0, 1), "load_error", (r"record 'q_mini_00', field 'id': occurs more than once",),
         "q_mini_00", skip=True, extra={"first_copy_kept": True}),
    Case("empty_options", set_field(4, "choices", []), "load_error", (r"record 'q_mini_04', field 'choices'",),
         "q_mini_04", skip=True),
    Case("blank_options", set_field(4, "choices", ["", "", "", "", ""]), "load_error",
         (r"record 'q_mini_04', field '(choices|options)': .*empty",), "q_mini_04", skip=True),
    Case("non_utf8_question", non_utf8_text(6, "question"), "load_error",
         (r"record 'q_mini_06'", r"field 'question'", r"UTF-8", r"copy"), "q_mini_06", skip=True),
    Case("one_megabyte_question", set_field(5, "question", MB), "loads", check=_long_question),
    Case("truncated_parquet", truncate_table, "load_error",
         (r"Could not load robovista", r"(?i)corrupt", r"copy"),),
    Case("truncated_parquet_names_the_file", truncate_table, "load_error",
         (r"train-00000-of-00001\.parquet",)),
    Case("missing_column", drop_column("correct_answer"), "load_error",
         (r"robovista: the data lacks correct_answer \(column 'correct_answer'\)",)),
    Case("extra_column", add_column("extra_column", "x"), "loads", check=_all_rows),
    # an image cell that carries only a path: resolved against the data folder, never outside it
    Case("path_only_image_inside_the_folder", image_out_of_the_table(3, 0, "images/q_mini_03.png"), "loads",
         check=_image_read_from_the_folder),
    Case("path_only_image_absolute", path_cell(3, 0, outside_the_copy("outside.png", png_bytes())), "media_error",
         (CELL + r"media path '/.*outside\.png' escapes the dataset folder",), "q_mini_03", skip=True),
    Case("path_only_image_dotdot", both(_outside("outside.png"), path_cell(3, 0, "../outside.png")), "media_error",
         (CELL + r"media path '\.\./outside\.png' escapes the dataset folder",), "q_mini_03", skip=True),
    Case("path_only_image_dev_zero", path_cell(3, 0, "/dev/zero"), "media_error",
         (CELL + r"media path '/dev/zero' escapes the dataset folder",), "q_mini_03", skip=True),
    Case("path_only_image_fifo", both(fifo("images/pipe.png"), path_cell(3, 0, "images/pipe.png")), "media_error",
         (CELL + r"media path 'images/pipe\.png' is not a regular file \(a named pipe\)",), "q_mini_03", skip=True),
    Case("path_only_image_symlink_loop", both(symlink("images/loop.png", "loop.png"),
                                              path_cell(3, 0, "images/loop.png")), "media_error",
         (CELL + r"media path 'images/loop\.png' is a symbolic link loop",), "q_mini_03", skip=True),
    Case("path_only_image_link_out", both(symlink("images/evil.png", "/etc/hostname"),
                                          path_cell(3, 0, "images/evil.png")), "media_error",
         (CELL + r"media path 'images/evil\.png' is a link to /etc/hostname, which escapes",), "q_mini_03",
         skip=True),
    Case("path_only_image_not_an_image", both(write_file("images/notes.png", NOT_AN_IMAGE),
                                              path_cell(3, 0, "images/notes.png")), "media_error",
         (CELL + r"image file .*images/notes\.png is unreadable: no known image format", NOT_QUOTED), "q_mini_03",
         skip=True),
    # hostile or odd files
    Case("yaml_anchor_bomb", override(YAML_BOMB), "load_error",
         (r"lmms_agentic_schema\.yaml", r"line 3", r"aliases \(\*a\)", r"not allowed")),
    Case("override_with_a_huge_value", override("labels:\n  domain:\n    Mars: [" + "1, " * 5_000 + "1]\n"),
         "load_error", (r"labels\.domain\.Mars = \[1, 1, 1, 1, 1, 1, \.\.\.\] is not one of", r"^[\s\S]{0,400}$")),
    Case("override_not_utf8", override(b"labels:\n  domain:\n    \xff\xfeFarm: agriculture\n"), "load_error",
         (r"lmms_agentic_schema\.yaml is not UTF-8 text: byte 0xff at offset 22 \(line 3\)",)),
    Case("override_remaps_a_canonical_label", override("labels:\n  domain:\n    agriculture: domestic\n"),
         "load_error", (r"lmms_agentic_schema\.yaml: labels\.domain\.agriculture = 'domestic'",
                        r"already means 'agriculture'", r"refused", r"remap_known_labels: true")),
    Case("override_remaps_an_accepted_spelling", override("labels:\n  domain:\n    driving: domestic\n"),
         "load_error", (r"labels\.domain\.driving = 'domestic'", r"already means 'autonomous_driving'")),
    Case("override_remaps_a_canonical_label_when_asked",
         both(set_field(2, "domain", "agriculture"),
              override("remap_known_labels: true\nlabels:\n  domain:\n    agriculture: domestic\n")),
         "loads", check=_domain_of("q_mini_02", "domestic")),
    Case("override_restates_a_label", both(set_field(2, "domain", "Driving"),
                                           override("labels:\n  domain:\n    Driving: autonomous_driving\n")),
         "loads", check=_domain_of("q_mini_02", "autonomous_driving")),
    Case("unknown_labels_of_two_fields", both(set_field(2, "domain", "Mars"), set_field(3, "ability_type", "teleport")),
         "load_error", (r"unknown domain label\(s\) 'Mars' \(1 row\)",
                        r"unknown ability_type label\(s\) 'teleport' \(1 row\)")),
    Case("table_without_rows", no_rows, "load_error", (r"train-00000-of-00001\.parquet holds no rows",)),
    Case("corrupt_pages", corrupt_pages, "load_error",
         (r"train-00000-of-00001\.parquet is damaged: row group 0 cannot be read", r"(?i)page header")),
]


@pytest.fixture
def load_copy(tmp_path: Path, point_at: Callable[..., None]) -> Callable[[Case, bool], Callable[[], Any]]:
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


def test_a_path_only_image_is_read_from_the_data_folder_wherever_the_run_starts(
        tmp_path: Path, point_at: Callable[..., None], monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import Image

    copy = copy_mini(BENCHMARK, tmp_path / "copy")
    image_out_of_the_table(3, 0, "images/q_mini_03.png")(copy)
    decoy = tmp_path / "elsewhere" / "images" / "q_mini_03.png"  # the same relative path under the working folder
    decoy.parent.mkdir(parents=True)
    Image.new("RGB", (3, 3), (0, 255, 0)).save(decoy)
    monkeypatch.chdir(tmp_path / "elsewhere")
    point_at(BENCHMARK, copy)
    docs = hooks.all_docs()
    with Image.open(copy / "images" / "q_mini_03.png") as stored:
        size = stored.size
    assert visuals(docs, "q_mini_03")[0].size != (3, 3) and size != (3, 3)
    cell = docs[docs["id"].index("q_mini_03")]["images"][0]
    assert cell["path"] == str((copy / "images" / "q_mini_03.png").absolute())
