"""Where benchmark data comes from: the Hub, a local copy, or the bundled mini split.

One rule for every benchmark, read when data is loaded (never at import):

- `LMMS_AGENTIC_DATA_<BENCHMARK>=/path` (e.g. `LMMS_AGENTIC_DATA_ROBOVISTA`) — this benchmark's copy;
- `LMMS_AGENTIC_DATA=mini` — the bundled mini splits (`tasks/<benchmark>/data/mini`), smoke tests only;
- `LMMS_AGENTIC_DATA=/root` — local copies at `/root/<benchmark>`;
- neither set — the real dataset from the Hugging Face Hub.

A local copy may be laid out as downloaded from the Hub (parquet files, e.g.
`data/train-00000-of-00001.parquet`, or a `data.json` plus media) or be a `Dataset.save_to_disk`
folder. Data is never swapped silently: if the chosen location cannot be loaded, `DataLoadError`
says where it looked and how to fix it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Literal

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

DATA_ENV = "LMMS_AGENTIC_DATA"
MINI = "mini"
JSON_NAMES = ("data.json", "data.jsonl")

Kind = Literal["hub", "mini", "local"]


class DataLoadError(RuntimeError):
    """The benchmark data could not be loaded from the location the environment chose."""


@dataclass(frozen=True)
class DataSource:
    """How a benchmark is published: Hub id, config, split and pinned revision."""

    benchmark: str
    hub_id: str
    split: str
    revision: str | None = None
    config: str | None = None
    #: the Hub repo holds media files next to the table (videos, data.json + images): download the
    #: whole snapshot and load it like a local copy, so relative media paths resolve
    snapshot: bool = False

    @property
    def env_override(self) -> str:
        return f"{DATA_ENV}_{self.benchmark.upper()}"


@dataclass(frozen=True)
class Location:
    """The resolved place to load from and the setting that chose it (for messages and logs)."""

    kind: Kind
    where: str
    chosen_by: str
    #: local folder that relative media paths are resolved against (None: media are embedded)
    root: str | None = None

    def describe(self) -> str:
        return f"{self.kind} data at {self.where} (chosen by {self.chosen_by})"


def mini_dir(benchmark: str) -> Path:
    """The bundled mini split of a benchmark inside the installed task package."""
    return Path(str(resources.files("lmms_agentic.tasks"))) / benchmark / "data" / "mini"


def _folder(kind: Kind, path: Path, chosen_by: str) -> Location:
    return Location(kind, str(path), chosen_by, root=str(path))


def locate(source: DataSource, environ: dict[str, str] | None = None) -> Location:
    """Resolve the data location from the environment (see the module docstring for the order)."""
    env = os.environ if environ is None else environ
    override = env.get(source.env_override, "").strip()
    if override:
        if override == MINI:
            return _folder("mini", mini_dir(source.benchmark), f"{source.env_override}=mini")
        return _folder("local", Path(override).expanduser(), f"{source.env_override}={override}")
    root = env.get(DATA_ENV, "").strip()
    if root == MINI:
        return _folder("mini", mini_dir(source.benchmark), f"{DATA_ENV}=mini")
    if root:
        return _folder("local", Path(root).expanduser() / source.benchmark, f"{DATA_ENV}={root}")
    where = source.hub_id + (f"@{source.revision}" if source.revision else "")
    return Location("hub", where, f"{DATA_ENV} unset")


def _fix_hint(source: DataSource) -> str:
    return (
        "Fix it in one of these ways:\n"
        f"  - real data from the Hub ({DATA_ENV} and {source.env_override} unset): make the Hub reachable "
        "(and run `hf auth login` if the dataset is gated);\n"
        f"  - a local copy: `hf download {source.hub_id} --repo-type dataset "
        f"--local-dir /data/{source.benchmark}` on a connected machine, then set {DATA_ENV}=/data "
        f"(or {source.env_override}=/data/{source.benchmark});\n"
        f"  - smoke test only: {DATA_ENV}=mini runs the bundled mini split (not a benchmark score);\n"
        f"  - analysing an earlier run (rescore, errors): the data must be the run's; its results record where they "
        f"came from (`lmms_agentic.data`), except results written before that record existed (lm-eval runs of "
        f"lmms-agentic 0.1.0): set {DATA_ENV} as for the run."
    )


def _select_split(loaded: datasets.Dataset | datasets.DatasetDict, split: str, where: str) -> datasets.Dataset:
    if isinstance(loaded, datasets.DatasetDict):
        if split in loaded:
            return loaded[split]
        if len(loaded) == 1:
            return next(iter(loaded.values()))
        raise DataLoadError(f"{where} has splits {sorted(loaded)} but not {split!r}")
    return loaded


def _split_files(files: Sequence[Path], split: str) -> list[Path]:
    """Parquet files of one split in the Hub layouts `<split>-*.parquet`, `<split>.parquet`, `<split>/*`."""
    chosen = [f for f in files if f.name.startswith(f"{split}-") or f.stem == split or f.parent.name == split]
    return sorted(chosen or files)


def _damaged_part(file: Path) -> str | None:
    """Which part of a parquet file cannot be read, with the reader's reason (None: every row group reads)."""
    try:
        reader = pq.ParquetFile(file)
        for group in range(reader.num_row_groups):
            try:
                reader.read_row_group(group)
            except (pa.ArrowException, OSError) as exc:
                reason = " ".join(str(exc).split())
                return f"row group {group} cannot be read ({type(exc).__name__}: {reason[:300]})"
    except (pa.ArrowException, OSError) as exc:
        return f"it cannot be opened ({type(exc).__name__}: {' '.join(str(exc).split())[:300]})"
    return None


def _load_parquet(files: Sequence[Path], split: str) -> datasets.Dataset:
    """The split from its parquet files; a damaged or empty file is named with what is wrong (datasets' own error
    says neither which file nor why: "An error occurred while generating the dataset")."""
    rows: dict[Path, int] = {}
    for file in files:
        try:
            mode = file.stat().st_mode
            if not stat.S_ISREG(mode):  # a named pipe would block the reader forever
                from lmms_agentic.adapters.media import file_kind

                raise DataLoadError(f"{file} is not a regular file ({file_kind(mode)}); replace it with the parquet "
                                    "file")
            rows[file] = pq.read_metadata(file).num_rows
        except (pa.ArrowException, OSError) as exc:
            raise DataLoadError(f"{file} is not a readable parquet file (truncated or corrupt: {exc}); replace it "
                                "with a complete copy") from exc
    if not any(rows.values()):
        named = files[0] if len(files) == 1 else f"the parquet files {', '.join(str(f) for f in files)}"
        raise DataLoadError(f"{named} holds no rows (the table has its columns but no record); replace it with a "
                            "complete copy")
    files = [file for file in files if rows[file]]  # a file of 0 rows adds nothing (and makes the reader fail)
    try:
        return datasets.load_dataset("parquet", data_files={split: [str(f) for f in files]}, split=split)
    except Exception as exc:  # find the file and the part the reader refuses, and say so
        for file in files:
            problem = _damaged_part(file)
            if problem is not None:
                raise DataLoadError(f"{file} is damaged: {problem}; replace it with a complete copy") from exc
        cause = exc.__cause__ or exc.__context__
        detail = f"{type(exc).__name__}: {exc}" + (f" (caused by {type(cause).__name__}: {cause})" if cause else "")
        raise DataLoadError(f"the parquet files {', '.join(str(f) for f in files)} cannot be read: {detail}") from exc


def load_local(path: Path, split: str) -> datasets.Dataset:
    """Load one split from a local folder (save_to_disk folder, parquet files, or data.json)."""
    if not path.exists():
        raise DataLoadError(f"the folder {path} does not exist")
    if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
        return _select_split(datasets.load_from_disk(str(path)), split, str(path))
    parquet = sorted(path.rglob("*.parquet"))
    if parquet:
        return _load_parquet(_split_files(parquet, split), split)
    for name in JSON_NAMES:
        json_file = path / name
        if json_file.exists():
            return datasets.load_dataset("json", data_files={split: str(json_file)}, split=split)
    raise DataLoadError(
        f"{path} holds neither parquet files, nor {' / '.join(JSON_NAMES)}, nor a save_to_disk folder"
    )


def _load_error(source: DataSource, location: Location, detail: str) -> DataLoadError:
    """The one message for data that cannot be loaded: what failed, where we looked, and how to fix it."""
    return DataLoadError(f"Could not load {source.benchmark}: {detail}.\nLooked at: {location.describe()}.\n"
                         f"{_fix_hint(source)}")


def _snapshot(source: DataSource) -> str:
    """The Hub snapshot folder (downloaded, or read from the Hugging Face cache when HF_HUB_OFFLINE=1)."""
    from huggingface_hub import snapshot_download

    return str(snapshot_download(source.hub_id, repo_type="dataset", revision=source.revision))


def fetch_folder(source: DataSource, environ: dict[str, str] | None = None) -> Location:
    """The local folder holding a benchmark's files (the Hub snapshot when no copy is configured); `root` is set.

    Hub data comes through `huggingface_hub.snapshot_download`, so a Hugging Face cache in the standard layout
    (`datasets--<org>--<name>/snapshots/<commit>/...`, files linked into `blobs/`) serves offline runs unchanged."""
    location = locate(source, environ)
    if location.kind == "hub":
        try:
            folder = _snapshot(source)
        except Exception as exc:  # the Hub failed: say where and how to fix it
            raise _load_error(source, location, f"{type(exc).__name__}: {exc}") from exc
        return replace(location, root=folder)
    if not Path(location.where).is_dir():
        raise _load_error(source, location, f"the folder {location.where} does not exist")
    return location


def record_provenance(source: DataSource, location: Location, rows: int) -> None:
    from lmms_agentic.adapters import provenance

    facts: dict[str, object] = {"kind": location.kind, "chosen_by": location.chosen_by, "rows": rows}
    if location.kind == "hub":
        facts.update(hub_id=source.hub_id, requested_revision=source.revision or "main",
                     resolved_commit=provenance.snapshot_commit(location.root) if location.root else None,
                     read_from=location.root or f"datasets cache of {source.hub_id}")
    else:
        root = location.root or location.where
        facts.update(path=root, fingerprint=provenance.fingerprint(root))
    provenance.record(source.benchmark, **facts)


def load_split(source: DataSource, environ: dict[str, str] | None = None) -> tuple[datasets.Dataset, Location]:
    """Load the raw split of a benchmark from the location the environment chooses.

    Hub data: the snapshot (see `fetch_folder`), read like a local copy. If no snapshot can be had (offline, not in
    the Hugging Face hub cache) a benchmark without media files next to its table is read through
    `datasets.load_dataset`, which also serves a `datasets` cache already on disk; the location says which."""
    location = locate(source, environ)
    errors: list[str] = []
    if location.kind == "hub":
        try:
            location = replace(location, root=_snapshot(source))
        except Exception as exc:  # no snapshot: maybe the datasets cache has it
            errors.append(f"hub snapshot: {type(exc).__name__}: {exc}")
            if source.snapshot:  # media live next to the table: only a snapshot has them
                raise _load_error(source, location, errors[0]) from exc
    try:
        if location.kind == "hub" and location.root is None:
            dataset = datasets.load_dataset(source.hub_id, name=source.config, split=source.split,
                                            revision=source.revision)
        else:
            dataset = load_local(Path(location.root or location.where), source.split)
    except DataLoadError as exc:
        raise _load_error(source, location, "; ".join([*errors, str(exc)])) from exc
    except Exception as exc:  # the Hub or the datasets library failed: say where and how to fix it
        raise _load_error(source, location, "; ".join([*errors, f"{type(exc).__name__}: {exc}"])) from exc
    if not isinstance(dataset, datasets.Dataset):
        raise DataLoadError(f"{location.describe()} did not give a single split for {source.benchmark}")
    record_provenance(source, location, len(dataset))
    return dataset, location


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def resolve_media(root: str | Path, relative: str, *, benchmark: str, record_id: str, field_name: str) -> Path:
    """A media path from a record, inside the dataset folder `root` (returned unresolved, as the dataset names it).

    Containment is judged on the path as written: an absolute path or a `..` component is refused. Links are then
    judged by where they may legitimately point: a media *folder* that is a link (to another disk) is fine; a media
    *file* that is a link must point inside the dataset folder, or, in a Hugging Face cache snapshot
    (`.../datasets--org--name/snapshots/<commit>/`), into that repository's own store (`../../blobs/`), which is how
    the cache stores every file. A file link pointing anywhere else, a link loop (in the file or in a folder on the
    way) and anything but a regular file (a named pipe, which would block the run, a device such as `/dev/zero`, a
    folder) are refused with a `RecordError` naming the record, the field and the path. A missing file raises
    `FileNotFoundError` naming the record, the field and the path.
    """
    from lmms_agentic.adapters.core.schema import RecordError
    from lmms_agentic.adapters.media import file_kind

    def refuse(problem: str) -> RecordError:
        return RecordError(benchmark, record_id, field_name, f"media path {relative!r} {problem}")

    written = Path(relative)
    if written.is_absolute() or relative.startswith(("/", "\\")) or ".." in written.parts:
        raise refuse(f"escapes the dataset folder {root} (absolute paths and '..' are not allowed)")
    base = Path(root)
    candidate = base / written
    try:
        facts = os.stat(candidate)  # follows links: a loop anywhere on the way is ELOOP
    except FileNotFoundError:
        raise FileNotFoundError(f"{benchmark} record {record_id!r}, field {field_name!r}: "
                                f"media file {candidate} does not exist") from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise refuse(f"is a symbolic link loop (following its links never reaches a file: {candidate})") from None
        if err.errno == errno.ENOTDIR:
            raise FileNotFoundError(f"{benchmark} record {record_id!r}, field {field_name!r}: "
                                    f"media file {candidate} does not exist") from None
        raise refuse(f"cannot be read ({err.strerror or err})") from None
    if candidate.is_symlink():
        target = candidate.resolve()
        allowed = [base.resolve(), candidate.parent.resolve()]
        for folder in (base, *base.parents):  # a Hugging Face cache snapshot: files link into the repo's blob store
            if folder.parent.name == "snapshots":
                allowed.append(folder.parent.parent.resolve())
                break
        if not any(_inside(target, folder) for folder in allowed):
            raise refuse(f"is a link to {target}, which escapes the dataset folder {base}")
    if not stat.S_ISREG(facts.st_mode):
        raise refuse(f"is not a regular file ({file_kind(facts.st_mode)}); media must be plain files")
    return candidate
