"""Agent-X bad-data corpus: a damaged data.json, media paths escaping the dataset folder (``..``, absolute,
symlinks), missing or damaged images and videos: one clear error naming the record, field or file (or a counted
skip), never a library crash or a silently wrong score."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import pytest

from lmms_agentic.tasks.agentx import hooks

from ..bad_data import (
    Case,
    both,
    change_file,
    copy_mini,
    drop_record_field,
    edit_json,
    fifo,
    garbage,
    half,
    nested_list,
    nothing,
    params,
    remove_file,
    run_default,
    run_load_time,
    run_skip,
    set_record,
    truncated_faststart,
    without_frames,
    zeroed_payload,
)

BENCHMARK = "agentx"
ROWS = 10
KWARGS = {"video_mode": "frames", "n_frames": 8}
MB = "Which colour line grows most rapidly? " * 28_000


def visuals(docs: datasets.Dataset, record: str) -> Any:
    return hooks.HOOKS.prompt(docs[docs["id"].index(record)], KWARGS).parts


def _symlink(name: str, target: str) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        (folder / "files" / name).symlink_to(target)
    return build


def _raw(change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        path = folder / "data.json"
        path.write_bytes(change(path.read_bytes()))
    return build


def _non_utf8(data: bytes) -> bytes:
    at = data.index(b"Which")
    return data[:at] + b"\xff\xfe" + data[at:]


def _repeated_key(data: dict[str, Any], folder: Path) -> bytes:
    copy = json.dumps({"3": data["4"]})[1:-1]  # the record of "4" again, under the key "3"
    return json.dumps(data).encode()[:-1] + b", " + copy.encode() + b"}"


def _loads_with_alias(docs: datasets.Dataset) -> None:
    images = visuals(docs, "3")
    assert len(docs) == ROWS and len([p for p in images if not isinstance(p, str)]) == 1


def _long_query(docs: datasets.Dataset) -> None:
    doc = docs[docs["id"].index("6")]
    start = time.perf_counter()
    messages = hooks.doc_to_messages(doc, {**KWARGS, "system_role": True})
    text = messages[1]["content"][-1]["text"]
    assert MB.strip() in text and len(text) > 1_000_000
    assert time.perf_counter() - start < 120  # a hang guard with a wide margin


def _all_rows(docs: datasets.Dataset) -> None:
    assert len(docs) == ROWS


def _deep_steps(depth: int) -> Callable[[Path], None]:
    """Record "4"'s reasoning_steps nested ``depth`` lists deep."""
    def edit(data: dict[str, Any], folder: Path) -> bytes:
        data["4"][0]["reasoning_steps"] = "DEEP"
        return json.dumps(data).replace('"DEEP"', nested_list(depth)).encode()
    return edit_json(edit)


FILE_PATH = r"record '0', field 'file_path(\[0\])?': "
IMAGE0 = r"record '0', field 'file_path\[0\]': image file .*AgentX_0\.jpg "
VIDEO1 = r"AgentX_1\.mp4"
VIDEO1_RECORD = r"record '1', field 'file_path(\[0\])?'"
CASES = [
    Case("path_with_dotdot", set_record("0", "file_path", "../../etc/hostname"), "media_error",
         (FILE_PATH + r"media path '\.\./\.\./etc/hostname' escapes the dataset folder",), "0", skip=True),
    Case("absolute_path", set_record("0", "file_path", "/etc/hostname"), "media_error",
         (FILE_PATH + r"media path '/etc/hostname' escapes the dataset folder",), "0", skip=True),
    Case("symlink_escaping", both(_symlink("evil.jpg", "/etc/hostname"), set_record("0", "file_path", "evil.jpg")),
         "media_error", (FILE_PATH + r"media path 'evil\.jpg' is a link to /etc/hostname, which escapes",), "0",
         skip=True),
    Case("symlink_inside_the_folder", both(_symlink("alias.jpg", "AgentX_3.jpg"),
                                           set_record("3", "file_path", "alias.jpg")), "loads",
         check=_loads_with_alias),
    Case("missing_image", set_record("0", "file_path", "nope.jpg"), "media_error",
         (FILE_PATH + r"(media|image) file .*nope\.jpg does not exist",), "0", skip=True),
    Case("corrupt_image", change_file("files/AgentX_0.jpg", garbage), "media_error", (IMAGE0 + "is unreadable",),
         "0", skip=True),
    Case("truncated_image", change_file("files/AgentX_0.jpg", half), "media_error", (IMAGE0 + "is truncated",), "0",
         skip=True),
    Case("zero_byte_image", change_file("files/AgentX_0.jpg", nothing), "media_error",
         (IMAGE0 + r"is empty \(0 bytes\)",), "0", skip=True),
    Case("truncated_second_image", change_file("files/AgentX_2b.jpg", half), "media_error",
         (r"record '2', field 'file_path\[1\]': image file .*AgentX_2b\.jpg is truncated",), "2", skip=True),
    Case("truncated_video", change_file("files/AgentX_1.mp4", half), "media_error", (VIDEO1 + r".*is truncated",),
         "1", skip=True, load_match=(VIDEO1_RECORD, VIDEO1 + r" is truncated")),
    Case("truncated_video_index_first", truncated_faststart("files/AgentX_1.mp4"), "media_error",
         (VIDEO1 + r".*is truncated",), "1", skip=True, load_match=(VIDEO1_RECORD, VIDEO1 + r" is truncated")),
    Case("missing_video", remove_file("files/AgentX_1.mp4"), "media_error",
         (r"record '1', field 'file_path(\[0\])?': .*AgentX_1\.mp4 does not exist",), "1", skip=True),
    Case("non_utf8_data_json", _raw(_non_utf8), "load_error", (r"data\.json", r"UTF-8", r"byte")),
    Case("empty_object", edit_json(lambda data, folder: b"{}"), "load_error",
         (r"data\.json holds no usable Agent-X records",)),
    Case("empty_file", edit_json(lambda data, folder: b""), "load_error", (r"data\.json is not valid JSON",)),
    Case("truncated_data_json", _raw(half), "load_error", (r"data\.json is not valid JSON",)),
    Case("list_instead_of_object", edit_json(lambda data, folder: b"[]"), "load_error",
         (r"data\.json must map task keys to records, got list",)),
    Case("repeated_key", edit_json(_repeated_key), "load_error", (r"record '3', field 'id': occurs more than once",),
         "3", skip=True, extra={"first_copy_kept": True, "rows": ROWS + 1}),
    Case("missing_query", drop_record_field("4", "query"), "load_error",
         (r"record '4', field 'query': must be a non-empty string, got missing",), "4", skip=True),
    Case("query_not_a_string", set_record("4", "query", 42), "load_error",
         (r"record '4', field 'query': must be a non-empty string, got a int",), "4", skip=True),
    Case("extra_field", set_record("4", "comment", "unused"), "loads", check=_all_rows),
    Case("one_megabyte_query", set_record("6", "query", MB), "loads", check=_long_query),
    # paths and files outside the data
    Case("symlink_loop", both(_symlink("loop.jpg", "loop.jpg"), set_record("0", "file_path", "loop.jpg")),
         "media_error", (FILE_PATH + r"media path 'loop\.jpg' is a symbolic link loop",), "0", skip=True),
    Case("image_fifo", both(fifo("files/pipe.jpg"), set_record("0", "file_path", "pipe.jpg")), "media_error",
         (FILE_PATH + r"media path 'pipe\.jpg' is not a regular file \(a named pipe\)",), "0", skip=True),
    # media that pass a structure check and fail once frames are decoded
    Case("zeroed_video_payload", change_file("files/AgentX_1.mp4", zeroed_payload), "media_error", (VIDEO1,), "1",
         skip=True, load_match=(VIDEO1_RECORD, VIDEO1 + r" is corrupt: its first frame cannot be decoded")),
    Case("video_without_frames", without_frames("files/AgentX_1.mp4"), "media_error", (VIDEO1,), "1", skip=True,
         load_match=(VIDEO1_RECORD, VIDEO1 + r" (holds no video frames|has no video)")),
    # hostile or odd files
    Case("data_json_nested_100000_deep", _raw(lambda data: nested_list(100_000).encode()), "load_error",
         (r"data\.json nests lists or objects more than \d+ levels deep",)),
    Case("reasoning_steps_3000_deep", _deep_steps(3000), "load_error",
         (r"record '4', field 'reasoning_steps': nests lists or objects more than \d+ levels deep",), "4",
         skip=True),
    Case("reasoning_steps_600_deep", _deep_steps(600), "load_error",
         (r"record '4', field 'reasoning_steps': nests lists or objects more than \d+ levels deep",), "4",
         skip=True),
    Case("reasoning_steps_a_string", set_record("4", "reasoning_steps", "x"), "load_error",
         (r"record '4', field 'reasoning_steps': expected a list .*got the string 'x'",), "4", skip=True),
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
