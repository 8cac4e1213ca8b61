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
    assert "LMMS_AGENTIC_DATA=mini" in text and "huggingface-cli download sy-xie/robovista" in text


def test_unreachable_hub_fails_with_the_fix_and_never_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    with pytest.raises(DataLoadError) as error:
        load_split(DataSource("robovista", "sy-xie/robovista-does-not-exist", "train"), {})
    text = str(error.value)
    assert "hub data at sy-xie/robovista-does-not-exist" in text and "LMMS_AGENTIC_DATA unset" in text
    assert "LMMS_AGENTIC_DATA=/data" in text and "LMMS_AGENTIC_DATA_ROBOVISTA" in text
