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
    Case,
    add_column,
    copy_mini,
    drop_column,
    duplicate_id,
    garbage,
    half,
    header_only,
    non_utf8_text,
    nothing,
    params,
    run_default,
    run_load_time,
    run_skip,
    set_field,
    set_image,
    truncate_table,
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
    assert time.perf_counter() - start < 5


def _all_rows(docs: datasets.Dataset) -> None:
    assert len(docs) == ROWS and "extra_column" not in docs.column_names


MEDIA = r"record 'q_mini_03', field 'images\[0\]': image "
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
