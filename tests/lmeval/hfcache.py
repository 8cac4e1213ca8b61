"""A Hugging Face home holding a benchmark's mini split as if it had been downloaded from the Hub.

Exported task folders load the Hub dataset by its id (`dataset_path: sy-xie/robovista`). Offline
(`HF_HUB_OFFLINE=1`, `HF_DATASETS_OFFLINE=1`) `datasets.load_dataset(<hub id>)` reads its own cache
(`$HF_HOME/datasets/<org>___<name>/<config>/<version>/<hash>/`) and `huggingface_hub.snapshot_download` the hub cache
(`$HF_HOME/hub/datasets--<org>--<name>/snapshots/<commit>/`, `refs/main`). `seed` writes both from a local folder,
so an exported folder runs unmodified on the mini split with no network.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from pathlib import Path
from typing import Any

import datasets
from datasets.naming import camelcase_to_snakecase

COMMIT = "0" * 40


def _datasets_cache(hf_home: Path, hub_id: str, split: str, folder: Path, data_files: dict[str, str] | None) -> None:
    """Prepare the table with the packaged builder, then file it under the repository's cache name."""
    work = hf_home / "seed-work"
    if data_files:
        files = {name: str(folder / path) for name, path in data_files.items()}
        builder = "json"
    else:
        files = {split: sorted(str(p) for p in folder.rglob("*.parquet"))}
        builder = "parquet"
    datasets.load_dataset(builder, data_files=files, cache_dir=str(work))
    prepared = next(Path(p) for p in glob.glob(str(work / builder / "*" / "*" / "*")) if os.path.isdir(p))
    config_id = "default"
    if data_files:  # the cache builder looks for the config id derived from the data_files given at load time
        config_id = datasets.BuilderConfig("default").create_config_id(config_kwargs={"data_files": data_files})
    namespace, name = hub_id.split("/")
    target = hf_home / "datasets" / f"{namespace}___{camelcase_to_snakecase(name)}" / config_id / "0.0.0" / "seeded"
    target.mkdir(parents=True)
    for path in prepared.iterdir():
        if path.suffix == ".arrow":
            shutil.copy(path, target / path.name.replace(f"{builder}-", f"{camelcase_to_snakecase(name)}-", 1))
        elif path.name == "dataset_info.json":
            info: dict[str, Any] = json.loads(path.read_text())
            info.update(config_name="default", dataset_name=camelcase_to_snakecase(name))
            (target / path.name).write_text(json.dumps(info))
    shutil.rmtree(work)


def _hub_snapshot(hf_home: Path, hub_id: str, folder: Path) -> None:
    repo = hf_home / "hub" / f"datasets--{hub_id.replace('/', '--')}"
    shutil.copytree(folder, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)


def seed(hf_home: Path, hub_id: str, split: str, folder: Path, data_files: dict[str, str] | None = None) -> None:
    """Make `hub_id` loadable offline from `hf_home`, with the contents of `folder` (a local copy of the repo)."""
    _datasets_cache(hf_home, hub_id, split, folder, data_files)
    _hub_snapshot(hf_home, hub_id, folder)
