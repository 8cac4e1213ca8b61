"""The default data path: every benchmark from an offline Hugging Face cache in the standard layout, none of our
variables set.

`huggingface_hub` stores a dataset repository as `datasets--<org>--<name>/` with `refs/main` (the commit), `blobs/`
(the file contents) and `snapshots/<commit>/<path>`, each file a relative link into `../../blobs/`. Media files of
AgentVQA and Agent-X are such links, so the media containment check must judge the path inside the dataset folder,
not where the cache keeps the blob. The cache here is built from the bundled mini splits under the real Hub ids;
`HF_HUB_OFFLINE=1` makes `snapshot_download` serve it without a network.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from lmms_agentic.adapters import benchmarks

from ..conftest import CliRun, run_lmms_eval

pytestmark = pytest.mark.e2e
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def add_to_hub_cache(cache: Path, hub_id: str, folder: Path, commit: str = COMMIT) -> Path:
    """Put every file of `folder` into a hub cache as repository `hub_id` at `commit`; returns the snapshot folder."""
    repo = cache / f"datasets--{hub_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        relative = path.relative_to(folder)
        data = path.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        link = snapshot / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("hf") / "hub"
    for benchmark in benchmarks.all_benchmarks().values():
        snapshot = add_to_hub_cache(cache, benchmark.source.hub_id, benchmark.folder / "data" / "mini")
        assert any(p.is_symlink() for p in snapshot.rglob("*"))
    return cache


@pytest.fixture(scope="module")
def offline_run(hub_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    env = {key: None for key in os.environ if key.startswith("LMMS_AGENTIC_DATA")}
    env.update({"HF_HUB_CACHE": str(hub_cache), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                "HF_DATASETS_CACHE": str(hub_cache.parent / "datasets")})
    names = ",".join(benchmarks.all_benchmarks())
    run = run_lmms_eval(["--model", "agentic_scripted", "--tasks", names], tmp_path_factory.mktemp("out"),
                        env=env)  # type: ignore[arg-type]
    run.assert_ok()
    return run


def test_every_benchmark_runs_from_the_cache_with_its_media(offline_run: CliRun) -> None:
    results = offline_run.results["results"]
    for name in benchmarks.all_benchmarks():
        assert name in results, name
    # agentic_scripted calls doc_to_visual for every request: the linked images and videos were read
    assert "escapes the dataset folder" not in offline_run.log
    samples = offline_run.records("agentvqa_egocentric_videos")
    assert samples and all(s["video"]["n_frames"] == 32 for s in samples if s["video"])


def test_results_record_the_hub_id_and_the_resolved_commit(offline_run: CliRun) -> None:
    data = offline_run.results["lmms_agentic"]["data"]
    for name, benchmark in benchmarks.all_benchmarks().items():
        used = data[name]
        assert (used["kind"], used["hub_id"], used["resolved_commit"]) == ("hub", benchmark.source.hub_id, COMMIT)
        assert used["rows"] > 0


def test_a_link_out_of_the_cache_is_refused(hub_cache: Path, tmp_path: Path) -> None:
    """A file link that points outside the repository's own store is refused; links into blobs/ are fine."""
    from lmms_agentic.adapters.core.schema import RecordError
    from lmms_agentic.adapters.data import resolve_media

    snapshot = next((hub_cache / "datasets--Tajamul21--Agent-X" / "snapshots").iterdir())
    good = resolve_media(snapshot / "files", "AgentX_0.jpg", benchmark="agentx", record_id="0", field_name="file_path")
    assert good.is_symlink() and good.resolve().parent.name == "blobs"
    outside = tmp_path / "secret.jpg"
    outside.write_bytes(b"x")
    (snapshot / "files" / "evil.jpg").symlink_to(outside)
    try:
        with pytest.raises(RecordError, match="escapes the dataset folder"):
            resolve_media(snapshot / "files", "evil.jpg", benchmark="agentx", record_id="1", field_name="file_path")
        for bad in ("../refs/main", "/etc/hostname"):
            with pytest.raises(RecordError, match="escapes"):
                resolve_media(snapshot / "files", bad, benchmark="agentx", record_id="1", field_name="file_path")
    finally:
        (snapshot / "files" / "evil.jpg").unlink()


def test_a_media_folder_linked_to_another_disk_is_fine(tmp_path: Path) -> None:
    from lmms_agentic.adapters.data import resolve_media

    other_disk = tmp_path / "disk2" / "files"
    other_disk.mkdir(parents=True)
    (other_disk / "a.jpg").write_bytes(b"x")
    dataset = tmp_path / "agentx"
    dataset.mkdir()
    (dataset / "files").symlink_to(other_disk, target_is_directory=True)
    found = resolve_media(dataset, "files/a.jpg", benchmark="agentx", record_id="0", field_name="file_path")
    assert found == dataset / "files" / "a.jpg"


def test_hub_cache_helper_matches_the_standard_layout(tmp_path: Path) -> None:
    """The layout `huggingface_hub` itself resolves offline (a guard on the test's own fixture)."""
    from huggingface_hub import snapshot_download

    folder = tmp_path / "src"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "x.json").write_text(json.dumps({"a": 1}))
    add_to_hub_cache(tmp_path / "hub", "org/name", folder)
    found = snapshot_download("org/name", repo_type="dataset", cache_dir=str(tmp_path / "hub"), local_files_only=True)
    assert Path(found).name == COMMIT and json.loads((Path(found) / "data" / "x.json").read_text()) == {"a": 1}
    shutil.rmtree(tmp_path / "hub")


DATASETS_CACHE_SCRIPT = r'''
import glob, os, shutil, sys
from pathlib import Path
import datasets
cache, parquet = Path(sys.argv[1]), sys.argv[2]
# what an earlier online `datasets.load_dataset("sy-xie/robovista")` leaves behind: the arrow cache of the split
datasets.load_dataset("parquet", data_files={"train": parquet}, cache_dir=str(cache))
built = Path(next(p for p in glob.glob(str(cache / "parquet" / "*" / "*" / "*")) if os.path.isdir(p)))
target = cache / "sy-xie___robovista" / "default" / "0.0.0" / built.name
shutil.copytree(built, target)
shutil.rmtree(cache / "parquet")
for arrow in target.glob("parquet-*.arrow"):
    arrow.rename(target / arrow.name.replace("parquet-", "robovista-"))
from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.data import load_split
table, location = load_split(benchmarks.get("robovista").source, environ={})
print(len(table), location.kind, location.root)
'''


def test_a_datasets_cache_already_on_disk_serves_a_benchmark_without_media_files(tmp_path: Path) -> None:
    """No hub snapshot, but the `datasets` arrow cache of an earlier online run: RoboVista (images inside its
    table) loads from it; the location says so (kind hub, no snapshot folder)."""
    import subprocess
    import sys

    parquet = next((benchmarks.get("robovista").folder / "data" / "mini").rglob("*.parquet"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("LMMS_AGENTIC_DATA")}
    env.update(HF_HUB_CACHE=str(tmp_path / "hub"), HF_DATASETS_CACHE=str(tmp_path / "ds"), HF_HUB_OFFLINE="1",
               HF_DATASETS_OFFLINE="1")
    done = subprocess.run([sys.executable, "-c", DATASETS_CACHE_SCRIPT, str(tmp_path / "ds"), str(parquet)],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-3:] == ["21", "hub", "None"]
