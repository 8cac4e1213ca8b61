"""Bad-data corpus: corrupted copies of the bundled mini splits, how each benchmark must react to them, and the
"clear error" assertion (each benchmark's cases live in `tests/<benchmark>/test_bad_data.py`).

Each `Case` builds one corrupted copy of a benchmark's mini split (`tasks/<benchmark>/data/mini`) in a temporary
folder, then the test points the benchmark at it (`LMMS_AGENTIC_DATA_<BENCHMARK>=<copy>`) and loads it through the
benchmark's own hooks (`all_docs()`).  What a case expects:

* ``load_error``: loading stops with an error of this project (never a library exception such as
  ``UnicodeDecodeError``, ``ArrowInvalid`` or a PIL error) whose message matches every pattern in ``match``
  (record id, field, file, what is wrong);
* ``media_error``: the record's media are bad; the error (at load time once loaders check media, or when the
  record's visuals are built, naming the record) matches ``match``.  Load-time detection is pinned separately;
* ``loads``: the copy loads and ``check`` verifies the rows were read right (e.g. a lowercase gold letter).

``skip``: with ``LMMS_AGENTIC_SKIP_BAD_RECORDS=1`` the copy loads without ``record`` and the exclusion is counted in
the provenance written into results files.  ``xfail``: the current code fails the case and the fix lives in a file
outside this test's owner's files; the reason names the fix (strict: the test fails once the fix lands);
``skip_xfail`` overrides it for the skip test ("" = the skip already works).
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shutil
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import lmms_agentic
from lmms_agentic.adapters import provenance

TASKS = Path(lmms_agentic.tasks_dir())
PARQUET = {"robovista": "data/train-00000-of-00001.parquet", "agentvqa": "data/test-00000-of-00001.parquet"}


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], None]
    expect: str  # "load_error" | "media_error" | "loads"
    match: tuple[str, ...] = ()
    record: str | None = None
    skip: bool = False
    xfail: str | None = None
    skip_xfail: str | None = None
    check: Callable[[Any], None] | None = None
    load_match: tuple[str, ...] = ()
    """What a load-time error must name, when more than ``match`` (mid-run video errors name only the file)."""
    extra: dict[str, Any] = field(default_factory=dict)


def copy_mini(benchmark: str, target: Path) -> Path:
    shutil.copytree(TASKS / benchmark / "data" / "mini", target)
    return target


# ------------------------------------------------------------------ parquet tables (RoboVista, AgentVQA)

def _table_file(folder: Path) -> Path:
    (found,) = sorted(folder.rglob("*.parquet"))
    return found


def edit_rows(edit: Callable[[list[dict[str, Any]]], None]) -> Callable[[Path], None]:
    """Rewrite the copy's parquet file after ``edit`` changed its rows in place (schema and metadata kept)."""
    def build(folder: Path) -> None:
        path = _table_file(folder)
        table = pq.read_table(path)
        rows = table.to_pylist()
        edit(rows)
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return build


def set_field(index: int, name: str, value: Any) -> Callable[[Path], None]:
    def edit(rows: list[dict[str, Any]]) -> None:
        rows[index][name] = value
    return edit_rows(edit)


def set_image(index: int, image: int, change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def edit(rows: list[dict[str, Any]]) -> None:
        cell = rows[index]["images"][image]
        rows[index]["images"][image] = {"bytes": change(cell["bytes"]), "path": None}
    return edit_rows(edit)


def duplicate_id(source: int, target: int) -> Callable[[Path], None]:
    def edit(rows: list[dict[str, Any]]) -> None:
        rows[target]["id"] = rows[source]["id"]
    return edit_rows(edit)


def non_utf8_text(index: int, name: str) -> Callable[[Path], None]:
    """Invalid UTF-8 bytes inside a string column (as a broken exporter writes them; Arrow does not validate)."""
    def build(folder: Path) -> None:
        path = _table_file(folder)
        table = pq.read_table(path)
        values = [v.encode("utf-8") if v is not None else None for v in table.column(name).to_pylist()]
        values[index] = (values[index] or b"")[:5] + b"\xff\xfe" + (values[index] or b"")[5:]
        column = pa.array(values, pa.binary()).view(pa.string())
        pq.write_table(table.set_column(table.schema.get_field_index(name), name, column), path)
    return build


def truncate_table(folder: Path) -> None:
    path = _table_file(folder)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def drop_column(name: str) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        path = _table_file(folder)
        pq.write_table(pq.read_table(path).drop_columns([name]), path)
    return build


def add_column(name: str, value: Any) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        path = _table_file(folder)
        table = pq.read_table(path)
        pq.write_table(table.append_column(name, pa.array([value] * len(table))), path)
    return build


# ------------------------------------------------------------------ data.json (Agent-X)

def edit_json(edit: Callable[[dict[str, Any], Path], Any]) -> Callable[[Path], None]:
    """Rewrite the copy's data.json after ``edit(data, folder)``; if it returns bytes, those are the new file."""
    def build(folder: Path) -> None:
        path = folder / "data.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        out = edit(data, folder)
        path.write_bytes(out if isinstance(out, bytes) else json.dumps(data, ensure_ascii=False).encode("utf-8"))
    return build


def set_record(key: str, name: str, value: Any) -> Callable[[Path], None]:
    def edit(data: dict[str, Any], folder: Path) -> None:
        data[key][0][name] = value
    return edit_json(edit)


def drop_record_field(key: str, name: str) -> Callable[[Path], None]:
    def edit(data: dict[str, Any], folder: Path) -> None:
        del data[key][0][name]
    return edit_json(edit)


def change_file(relative: str, change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        path = folder / relative
        path.write_bytes(change(path.read_bytes()))
    return build


def remove_file(relative: str) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        (folder / relative).unlink()
    return build


# ------------------------------------------------------------------ media

def half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def header_only(data: bytes) -> bytes:
    return data[:64]


def nothing(data: bytes) -> bytes:
    return b""


def garbage(data: bytes) -> bytes:
    return b"garbage" * 50


def remux(source: Path, target: Path, **output: Any) -> Path:
    """``source``'s video stream copied packet by packet into ``target`` (``output``: PyAV's ``av.open`` arguments
    for the written file, e.g. its ``format`` or muxer ``options``)."""
    import av

    with av.open(str(source)) as reader, av.open(str(target), "w", **output) as writer:
        stream = reader.streams.video[0]
        out = writer.add_stream_from_template(stream)
        for packet in reader.demux(stream):
            if packet.dts is not None:
                packet.stream = out
                writer.mux(packet)
    return target


def faststart_copy(source: Path, target: Path) -> Path:
    """``source`` remuxed with its index ('moov') first, as streaming-friendly MP4s are written: a truncated copy
    then still opens and decodes to fewer frames."""
    return remux(source, target, options={"movflags": "faststart"})


def truncated_faststart(relative: str, fraction: float = 0.5) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        path = folder / relative
        fast = faststart_copy(path, path.with_name("fast-" + path.name))
        data = fast.read_bytes()
        fast.unlink()
        path.write_bytes(data[: int(len(data) * fraction)])
    return build


def png_bytes() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


def both(*builds: Callable[[Path], None]) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        for step in builds:
            step(folder)
    return build


# ------------------------------------------------------------------ running a case

def params(cases: list[Case], kind: str) -> list[Any]:
    """``cases`` as pytest params for one kind of test ("default", "load_time", "skip"), xfail-marked as needed."""
    import pytest

    out = []
    for case in cases:
        if kind == "load_time" and case.expect != "media_error":
            continue
        if kind == "skip" and not case.skip:
            continue
        reason = {"default": case.xfail, "load_time": case.xfail,
                  "skip": case.skip_xfail if case.skip_xfail is not None else case.xfail}[kind]
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


def run_default(case: Case, loaded: Callable[[], Any], visuals: Callable[[Any, str], Any]) -> None:
    """Load the (already built and pointed-at) copy and check the case's expectation (see the module docstring)."""
    import pytest


    if case.expect == "loads":
        docs = loaded()
        assert case.check is not None
        case.check(docs)
        return
    if case.expect == "load_error":
        with pytest.raises(Exception) as caught:
            loaded()
        assert_clear(caught.value, case.match)
        return
    assert case.expect == "media_error" and case.record is not None
    try:
        docs = loaded()
    except Exception as err:  # detected while loading (loaders that check media)
        assert_clear(err, case.load_match or case.match)
        return
    with pytest.raises(Exception) as built:
        visuals(docs, case.record)
    assert_clear(built.value, case.match)


def run_load_time(case: Case, loaded: Callable[[], Any]) -> None:
    import pytest


    with pytest.raises(Exception) as caught:
        loaded()
    assert_clear(caught.value, case.load_match or case.match)


def run_skip(case: Case, benchmark: str, loaded: Callable[[], Any], rows: int) -> None:

    docs = loaded()
    assert case.record is not None
    assert case.record not in set(docs["id"]) or case.extra.get("first_copy_kept")
    excluded = excluded_ids(benchmark)
    rows = case.extra.get("rows", rows)  # entries in the copy (a repeated data.json key adds one)
    assert case.record in excluded and len(docs) == rows - len(excluded), (excluded, len(docs))


#: exceptions that mean "a crash deep in a library": never an acceptable answer to bad data
LIBRARY_ERRORS: tuple[type[BaseException], ...] = (UnicodeError, KeyError, IndexError, AttributeError, TypeError,
                                                  AssertionError, RecursionError, MemoryError)


def assert_clear(error: BaseException, patterns: tuple[str, ...]) -> None:
    """``error`` is this project's error (or a FileNotFoundError/ValueError it raised with a message), never a
    library's, and its message matches every regex in ``patterns``."""
    text = str(error)
    kind = type(error)
    assert not isinstance(error, LIBRARY_ERRORS), f"library error {kind.__module__}.{kind.__name__}: {text}"
    assert kind.__module__.startswith("lmms_agentic") or kind in (FileNotFoundError, ValueError), \
        f"not a clear error: {kind.__module__}.{kind.__name__}: {text}"
    assert "_io.BytesIO" not in text, text
    for pattern in patterns:
        assert re.search(pattern, text), f"{pattern!r} not in: {text}"


def excluded_ids(benchmark: str) -> list[str]:
    """The record ids the last load excluded, as written into results files."""
    facts: dict[str, Any] = provenance.used().get(benchmark, {})
    return [str(r["id"]) for r in facts.get("excluded", {}).get("records", [])]


# ------------------------------------------------------------------ paths and files outside the data

def image_out_of_the_table(index: int, image: int, relative: str) -> Callable[[Path], None]:
    """Move one image's bytes out of the table into ``<copy>/<relative>``; the cell keeps only that path (as a
    ``datasets`` table made from image files stores it)."""
    def build(folder: Path) -> None:
        def edit(rows: list[dict[str, Any]]) -> None:
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(rows[index]["images"][image]["bytes"])
            rows[index]["images"][image] = {"bytes": None, "path": relative}
        edit_rows(edit)(folder)
    return build


def path_cell(index: int, image: int, path: str | Callable[[Path], str]) -> Callable[[Path], None]:
    """One image cell that carries only a path (``path(copy)`` when it depends on where the copy is)."""
    def build(folder: Path) -> None:
        def edit(rows: list[dict[str, Any]]) -> None:
            rows[index]["images"][image] = {"bytes": None, "path": path if isinstance(path, str) else path(folder)}
        edit_rows(edit)(folder)
    return build


def write_file(relative: str, data: bytes | Callable[[Path], bytes]) -> Callable[[Path], None]:
    """``<copy>/<relative>`` written with ``data`` (``data(copy)`` when it depends on the copy)."""
    def build(folder: Path) -> None:
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if isinstance(data, bytes) else data(folder))
    return build


def fifo(relative: str) -> Callable[[Path], None]:
    """A named pipe at ``<copy>/<relative>`` (reading it blocks until a writer comes: forever)."""
    def build(folder: Path) -> None:
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(folder / relative)
    return build


def symlink(relative: str, target: str) -> Callable[[Path], None]:
    """``<copy>/<relative>`` made a symbolic link to ``target`` (relative to the link's folder, or absolute)."""
    def build(folder: Path) -> None:
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).symlink_to(target)
    return build


def outside_the_copy(name: str, data: bytes) -> Callable[[Path], str]:
    """A file ``name`` written next to the copy (outside its folder); its absolute path."""
    def place(folder: Path) -> str:
        target = folder.parent / name
        target.write_bytes(data)
        return str(target)
    return place


#: the text of a file that is not an image; no error may quote it (it could be a key file)
NOT_AN_IMAGE = b"api_key=sk-SECRET-0123456789abcdef\n" * 4


# ------------------------------------------------------------------ media that look whole

def zeroed_payload(data: bytes) -> bytes:
    """An MP4 with every box intact and the payload of its 'mdat' boxes zeroed (an interrupted copy that
    preallocated the file)."""
    out, pos = bytearray(data), 0
    while pos + 8 <= len(out):
        size, kind = struct.unpack(">I4s", out[pos:pos + 8])
        if size < 8:
            break
        if kind == b"mdat":
            out[pos + 8:pos + size] = bytes(size - 8)
        pos += size
    return bytes(out)


def without_frames(relative: str) -> Callable[[Path], None]:
    """``<copy>/<relative>`` replaced by a valid MP4 of the same stream with no frame in it."""
    def build(folder: Path) -> None:
        import av

        path = folder / relative
        empty = path.with_name("empty-" + path.name)
        with av.open(str(path)) as reader, av.open(str(empty), "w") as writer:
            writer.add_stream_from_template(reader.streams.video[0])
            writer.start_encoding()
        empty.replace(path)
    return build


# ------------------------------------------------------------------ hostile or odd files

def _laughs(levels: int) -> str:
    """``levels`` nested lists of 9, each level defined inline once (an anchor) and then repeated by alias."""
    names = "abcdefghijklmnopqrstuvwxyz"[:levels]
    text = '&a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'
    for previous, name in itertools.pairwise(names):
        text = f"&{name} [{text}{f', *{previous}' * 8}]"
    return text


#: a 9^9-element "billion laughs" in about 500 bytes of YAML, as the value of a label spelling (PyYAML shares the
#: aliased lists, so parsing is cheap; anything that prints the value expands it)
YAML_BOMB = f"labels:\n  domain:\n    Mars: {_laughs(9)}\n".encode()


def override(text: bytes | str) -> Callable[[Path], None]:
    """A schema override next to the copy's data."""
    return write_file("lmms_agentic_schema.yaml", text.encode("utf-8") if isinstance(text, str) else text)


def no_rows(folder: Path) -> None:
    """The table with its schema but no row."""
    path = _table_file(folder)
    pq.write_table(pq.read_table(path).slice(0, 0), path)


def corrupt_pages(folder: Path) -> None:
    """Intact footer and metadata, damaged data: the header of one column's first page overwritten."""
    path = _table_file(folder)
    pq.write_table(pq.read_table(path), path, compression="NONE")
    chunk = pq.read_metadata(path).row_group(0).column(1)
    data = bytearray(path.read_bytes())
    data[chunk.data_page_offset:chunk.data_page_offset + 40] = b"\xff" * 40
    path.write_bytes(bytes(data))


def nested_list(depth: int) -> str:
    """JSON text of ``depth`` lists, one inside the other."""
    return "[" * depth + "]" * depth
