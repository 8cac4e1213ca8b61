"""Data location: environment rules, local layouts (parquet, save_to_disk, data.json) and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from lmms_agentic.adapters.data import DataLoadError, DataSource, load_local, load_split, locate, mini_dir

SOURCE = DataSource("robovista", "sy-xie/robovista", "train")


@pytest.mark.parametrize(("environ", "kind", "where", "chosen_by"), [
    ({}, "hub", "sy-xie/robovista", "LMMS_AGENTIC_DATA unset"),
    ({"LMMS_AGENTIC_DATA": ""}, "hub", "sy-xie/robovista", "LMMS_AGENTIC_DATA unset"),
    ({"LMMS_AGENTIC_DATA": "mini"}, "mini", str(mini_dir("robovista")), "LMMS_AGENTIC_DATA=mini"),
    ({"LMMS_AGENTIC_DATA": "/data"}, "local", "/data/robovista", "LMMS_AGENTIC_DATA=/data"),
    ({"LMMS_AGENTIC_DATA": "/data", "LMMS_AGENTIC_DATA_ROBOVISTA": "/copies/rv"}, "local", "/copies/rv",
     "LMMS_AGENTIC_DATA_ROBOVISTA=/copies/rv"),
    ({"LMMS_AGENTIC_DATA_ROBOVISTA": "mini"}, "mini", str(mini_dir("robovista")), "LMMS_AGENTIC_DATA_ROBOVISTA=mini"),
    ({"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_DATA_AGENTX": "/elsewhere"}, "mini", str(mini_dir("robovista")),
     "LMMS_AGENTIC_DATA=mini"),
], ids=["unset", "empty", "mini", "root", "per-benchmark-wins", "per-benchmark-mini", "other-benchmark-ignored"])
def test_locate(environ: dict[str, str], kind: str, where: str, chosen_by: str) -> None:
    location = locate(SOURCE, environ)
    assert (location.kind, location.where, location.chosen_by) == (kind, where, chosen_by)


def test_pinned_revision_is_shown() -> None:
    assert locate(DataSource("x", "org/x", "test", revision="abc123"), {}).where == "org/x@abc123"


def _dataset(n: int = 3) -> datasets.Dataset:
    return datasets.Dataset.from_dict({"id": [f"r{i}" for i in range(n)], "value": list(range(n))})


def test_hub_layout_parquet_picks_the_requested_split(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    _dataset(3).to_parquet(str(tmp_path / "data" / "train-00000-of-00001.parquet"))
    _dataset(5).to_parquet(str(tmp_path / "data" / "test-00000-of-00001.parquet"))
    assert len(load_local(tmp_path, "train")) == 3
    assert len(load_local(tmp_path, "test")) == 5


def test_save_to_disk_folder(tmp_path: Path) -> None:
    datasets.DatasetDict({"train": _dataset(4)}).save_to_disk(str(tmp_path / "dd"))
    _dataset(2).save_to_disk(str(tmp_path / "single"))
    assert len(load_local(tmp_path / "dd", "train")) == 4
    assert len(load_local(tmp_path / "single", "train")) == 2


def test_data_json_with_media(tmp_path: Path) -> None:
    (tmp_path / "data.json").write_text(json.dumps([{"id": "a", "image": "media/a.png"}, {"id": "b", "image": ""}]))
    assert load_local(tmp_path, "test")["id"] == ["a", "b"]


def test_environment_root_loads_local_copy(tmp_path: Path) -> None:
    (tmp_path / "robovista" / "data").mkdir(parents=True)
    _dataset(3).to_parquet(str(tmp_path / "robovista" / "data" / "train-00000-of-00001.parquet"))
    dataset, location = load_split(SOURCE, {"LMMS_AGENTIC_DATA": str(tmp_path)})
    assert len(dataset) == 3 and location.kind == "local"


@pytest.mark.parametrize(("layout", "message"), [
    ("missing", "does not exist"),
    ("empty", "neither parquet files"),
])
def test_unloadable_local_copy_says_where_and_how_to_fix(tmp_path: Path, layout: str, message: str) -> None:
    if layout == "empty":
        (tmp_path / "robovista").mkdir()
    with pytest.raises(DataLoadError) as error:
        load_split(SOURCE, {"LMMS_AGENTIC_DATA": str(tmp_path)})
    text = str(error.value)
    assert message in text and str(tmp_path / "robovista") in text
    assert "LMMS_AGENTIC_DATA=mini" in text and "hf download sy-xie/robovista" in text
    assert "huggingface-cli" not in text  # the installed huggingface_hub ships `hf` only


def test_unreachable_hub_fails_with_the_fix_and_never_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    with pytest.raises(DataLoadError) as error:
        load_split(DataSource("robovista", "sy-xie/robovista-does-not-exist", "train"), {})
    text = str(error.value)
    assert "hub data at sy-xie/robovista-does-not-exist" in text and "LMMS_AGENTIC_DATA unset" in text
    assert "LMMS_AGENTIC_DATA=/data" in text and "LMMS_AGENTIC_DATA_ROBOVISTA" in text


# ------------------------------------------------------------------ media paths: inside the folder, plain files only

def _resolve(root: Path, relative: str) -> Path:
    from lmms_agentic.adapters.data import resolve_media

    return resolve_media(root, relative, benchmark="agentx", record_id="7", field_name="file_path[0]")


def _build(root: Path, layout: str) -> str:
    import os

    (root / "files").mkdir(parents=True)
    if layout == "self_loop":
        (root / "files" / "a.jpg").symlink_to("a.jpg")
        return "files/a.jpg"
    if layout == "two_link_loop":
        (root / "files" / "a.jpg").symlink_to("b.jpg")
        (root / "files" / "b.jpg").symlink_to("a.jpg")
        return "files/a.jpg"
    if layout == "folder_loop":
        (root / "clips").symlink_to("clips")
        return "clips/a.jpg"
    if layout == "fifo":
        os.mkfifo(root / "files" / "a.jpg")
        return "files/a.jpg"
    if layout == "folder":
        (root / "files" / "a.jpg").mkdir()
        return "files/a.jpg"
    assert layout == "link_to_a_device"
    (root / "files" / "a.jpg").symlink_to("/dev/zero")
    return "files/a.jpg"


@pytest.mark.parametrize(("layout", "problem"), [
    ("self_loop", r"is a symbolic link loop"),
    ("two_link_loop", r"is a symbolic link loop"),
    ("folder_loop", r"is a symbolic link loop"),
    ("fifo", r"is not a regular file \(a named pipe\)"),
    ("folder", r"is not a regular file \(a folder\)"),
    ("link_to_a_device", r"is a link to /dev/zero, which escapes the dataset folder"),
])
def test_a_media_path_that_is_no_plain_file_of_the_folder_is_a_record_error(tmp_path: Path, layout: str,
                                                                             problem: str) -> None:
    from lmms_agentic.adapters.core.schema import RecordError
    from lmms_agentic.harness.host import deterministic_errors

    relative = _build(tmp_path, layout)
    with pytest.raises(RecordError, match=rf"agentx record '7', field 'file_path\[0\]': media path "
                                          rf"'{relative}' {problem}") as err:
        _resolve(tmp_path, relative)
    assert isinstance(err.value, deterministic_errors())  # lmms-eval gives up at once instead of retrying


# ------------------------------------------------------------------ parquet files that hide their problem

def _parquet(folder: Path, rows: int, name: str = "train-00000-of-00001.parquet") -> Path:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    path = folder / "data" / name
    _dataset(max(rows, 1)).select(range(rows)).to_parquet(str(path))
    return path


def test_a_parquet_file_without_rows_is_named(tmp_path: Path) -> None:
    path = _parquet(tmp_path, 0)
    with pytest.raises(DataLoadError, match=rf"{path} holds no rows") as err:
        load_local(tmp_path, "train")
    assert "DatasetGenerationError" not in str(err.value)


def test_an_empty_parquet_file_next_to_full_ones_adds_nothing(tmp_path: Path) -> None:
    _parquet(tmp_path, 3, "train-00000-of-00002.parquet")
    _parquet(tmp_path, 0, "train-00001-of-00002.parquet")
    assert len(load_local(tmp_path, "train")) == 3


def test_a_parquet_file_with_damaged_pages_is_named_with_the_cause(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    path = _parquet(tmp_path, 3)
    pq.write_table(pq.read_table(path), path, compression="NONE")
    chunk = pq.read_metadata(path).row_group(0).column(0)
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset:chunk.data_page_offset + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    with pytest.raises(DataLoadError, match=rf"{path} is damaged: row group 0 cannot be read \(OSError: .*page"):
        load_local(tmp_path, "train")


def test_a_parquet_name_on_a_named_pipe_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    (tmp_path / "data").mkdir()
    os.mkfifo(tmp_path / "data" / "train-00000-of-00001.parquet")
    with pytest.raises(DataLoadError, match=r"train-00000-of-00001\.parquet is not a regular file \(a named pipe\)"):
        load_local(tmp_path, "train")
