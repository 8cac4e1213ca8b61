"""The recorded cases of an export's own test (`selftest.py`, copied as `test_<b>.py` with `SAMPLE` and `CASES`
filled in): a few rows of the bundled mini split, their media replaced by drawn images and encoded videos, and, per
exported task, what its hooks give on them here, with this project's copy of the glue and the core.

Rows are chosen so that every task has documents (at most `DOCS_PER_TASK`); the replies are the benchmark's own
example replies plus the answer extractor's hard cases (a think block naming another letter, markdown, a lowercase
letter, two letters, an empty reply) and the benchmark's own (`hard_replies` of its `upstream.py`). Rows its
`upstream.py` derives (`sample_rows`, records the release can hold that the mini split lacks) come first. The checks of
each shipped script (`<stem>_checks.py` beside it, from its `# export:` line on) follow the recorded cases, after a
fixture importing the script from the folder (`script_checks`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.adapters.core.task import CoreTask
from lmms_agentic.adapters.glue.dataset_docs import keyed_rows, release_rows
from lmms_agentic.adapters.glue.lm_eval_glue import LmEvalHooks
from lmms_agentic.adapters.glue.lmms_eval_glue import LmmsEvalHooks
from lmms_agentic.adapters.upstream import hooks_of
from lmms_agentic.lmeval.export import selftest
from lmms_agentic.lmeval.export.generated import CoreChoice, aggregation_names, identifier, release_file

DOCS_PER_TASK = 2
VIDEO_FRAMES = 6
IMAGE_FILE = re.compile(r"\.(?:jpe?g|png|webp|bmp)$", re.IGNORECASE)
VIDEO_FILE = re.compile(r"\.(?:mp4|avi|mov|webm|mkv)$", re.IGNORECASE)


def _unbranded(value: Any) -> Any:
    if isinstance(value, str):
        return re.sub(r"lmms[-_]agentic\s*", "", value, flags=re.IGNORECASE)
    if isinstance(value, list):
        return [_unbranded(item) for item in value]
    if isinstance(value, dict):
        return {key: _unbranded(item) for key, item in value.items()}
    return value


def _size(cell: Any) -> list[int]:
    from PIL import Image

    data = cell.get("bytes") if isinstance(cell, dict) else None
    if data is None:
        return [64, 48]
    import io

    with Image.open(io.BytesIO(data)) as image:
        return list(image.size)


def _marked(value: Any, media: Path, files: dict[str, list[Any]]) -> Any:
    """A row value with image cells as `{"draw": size}`; media files it names recorded in `files`."""
    if isinstance(value, dict) and "bytes" in value:
        return {"draw": _size(value)}
    if isinstance(value, list):
        return [_marked(item, media, files) for item in value]
    if not isinstance(value, str):
        return value
    folders = [media, *(d for d in sorted(media.iterdir()) if d.is_dir())]
    for part in (p.strip() for p in value.split(",")):  # a cell may name several files, comma-separated
        if not (VIDEO_FILE.search(part) or IMAGE_FILE.search(part)):
            continue
        found = next((folder / part for folder in folders if (folder / part).is_file()), None)
        if found is not None:
            files[found.relative_to(media).as_posix()] = (["video", VIDEO_FRAMES] if VIDEO_FILE.search(part)
                                                          else ["image", *_size({"bytes": found.read_bytes()})])
    return value


def mini_rows(benchmark: Benchmark) -> tuple[list[dict[str, Any]], Path]:
    """The mini split's release rows (image cells undecoded; a keyed release's rows) and the folder its media files
    are relative to."""
    import datasets

    mini = benchmark.folder / "data" / "mini"
    release = release_file(benchmark)
    if release is not None:
        return keyed_rows(str(mini / release)), mini
    table = next(mini.rglob("*.parquet"), mini / "data.json")
    kind = "parquet" if table.suffix == ".parquet" else "json"
    loaded = datasets.load_dataset(kind, data_files={"rows": str(table)}, split="rows")
    return release_rows(loaded), mini


def _hooks(core: CoreTask, harness: str, benchmark: Benchmark) -> Any:
    revision = benchmark.source.revision or "main"
    hooks = LmmsEvalHooks if harness == "lmms-eval" else LmEvalHooks
    return hooks(core, benchmark.source.hub_id, revision, release_file=release_file(benchmark))


def _docs(hooks: Any, harness: str, choice: CoreChoice, dataset: Any) -> Any:
    if harness == "lmms-eval":
        return hooks.process_docs(choice.variant)(dataset)
    return hooks.process_docs(choice.variant, choice.settings)(dataset)


def hard_replies(doc: Mapping[str, Any]) -> list[str]:
    """The answer extractor's hard cases for a multiple-choice document (none for other documents)."""
    gold = str(doc.get("answer", ""))
    options = doc.get("options") or []
    letters = [chr(ord("A") + i) for i, text in enumerate(options) if text]
    if gold not in letters or len(letters) < 2:
        return []
    wrong = next(letter for letter in letters if letter != gold)
    return [f"<think>Maybe {wrong}.</think>\nThe answer is ({gold}).", f"**{gold.lower()}**",
            f"Either {wrong} or {gold}.", f"Answer: {wrong}\nConfidence: 55%", ""]


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    here = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


def _sample(rows: list[dict[str, Any]], media: Path, keep: Sequence[int], release: str | None) -> dict[str, Any]:
    files: dict[str, list[Any]] = {}
    kept = [_unbranded({k: _marked(v, media, files) for k, v in rows[i].items()}) for i in keep]
    return {"rows": kept, "files": files, "release_file": release}


def _chosen_rows(core: CoreTask, chosen: Mapping[str, CoreChoice], rows: list[dict[str, Any]]) -> list[int]:
    """Indices of the rows whose documents are the first ones of every task (all rows when a row does not give
    exactly one document)."""
    by_id: dict[str, int] = {}
    for index, row in enumerate(rows):
        own = core.documents([row])
        if len(own) != 1:
            return list(range(len(rows)))
        by_id[str(own[0]["id"])] = index
    keep: set[int] = set()
    for choice in chosen.values():
        docs = core.VARIANTS[choice.variant](core.documents(rows))
        keep.update(by_id[str(doc["id"])] for doc in docs[:DOCS_PER_TASK] if str(doc["id"]) in by_id)
    return sorted(keep)


def cases(benchmark: Benchmark, harness: str, core: CoreTask, chosen: Mapping[str, CoreChoice]
          ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(SAMPLE, CASES) of the export's own test."""
    rows, media = mini_rows(benchmark)
    rows = [*getattr(hooks_of(benchmark), "sample_rows", lambda rows: [])(rows), *rows]
    sample = _sample(rows, media, _chosen_rows(core, chosen, rows), release_file(benchmark))
    hooks = _hooks(core, harness, benchmark)
    view = types.SimpleNamespace(doc_to_text=hooks.doc_to_text, doc_to_visual=getattr(hooks, "doc_to_visual", None),
                                 doc_to_image=getattr(hooks, "doc_to_image", None))
    if harness == "lmms-eval":
        view.doc_to_messages = hooks.doc_to_messages
    found: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder, _inside(Path(folder)):
        dataset = selftest.sample_dataset(sample, Path(folder))
        for task, choice in chosen.items():
            docs = _docs(hooks, harness, choice, dataset)
            if len(docs) == 0:
                continue
            docs = docs.select(range(min(DOCS_PER_TASK, len(docs))))
            found[task] = _case(benchmark, hooks, view, harness, core, choice, docs)
    return sample, found


def _case(benchmark: Benchmark, hooks: Any, view: Any, harness: str, core: CoreTask, choice: CoreChoice,
          docs: Any) -> dict[str, Any]:
    settings = dict(choice.settings) if harness == "lmms-eval" else None
    process_results = hooks.process_results(choice.kind)
    documents = []
    values: dict[str, list[Any]] = {}
    own = getattr(hooks_of(benchmark), "hard_replies", hard_replies)
    for doc in docs:
        replies = list(dict.fromkeys([*benchmark.package().example_replies(dict(doc)), *hard_replies(doc),
                                      *own(dict(doc))]))
        per_reply = []
        for reply in replies:
            got = process_results(doc, [reply])
            per_reply.append(selftest.counted(got))
            for name, value in got.items():
                values.setdefault(name, []).append(value)
        documents.append({"prompt": selftest.prompt_of(view, doc, settings), "replies": replies,
                          "values": per_reply})
    names = aggregation_names(core)
    aggregations = {name: names[name] for name in core.TASK_METRICS[choice.kind]}
    aggregated = {name: selftest.comparable(hooks.aggregation(name)(values.get(name, []))) for name in aggregations}
    docs_name = (f"process_docs_{identifier(choice.variant)}" if harness == "lmms-eval"
                 else f"{identifier(choice.task)}_docs")
    case: dict[str, Any] = _unbranded({
        "process_docs": docs_name, "process_results": f"process_results_{identifier(choice.kind)}",
        "settings": settings, "ids": [str(doc["id"]) for doc in docs], "documents": documents,
        "aggregations": aggregations, "aggregated": aggregated})
    return case


def test_files(benchmark: Benchmark, harness: str, core: CoreTask, chosen: Mapping[str, CoreChoice],
               package: str) -> tuple[str, str]:
    """The export's own test (`selftest.py` with its package and benchmark filled in) and its recorded cases."""
    sample, found = cases(benchmark, harness, core, chosen)
    text = Path(selftest.__file__).read_text(encoding="utf-8")
    for old, new in {'PACKAGE = "lmms_eval"': f'PACKAGE = "{package}"',
                     'BENCHMARK = ""': f'BENCHMARK = "{benchmark.name}"'}.items():
        if old not in text:
            raise ValueError(f"selftest.py lost its line {old!r}")
        text = text.replace(old, new, 1)
    text += script_checks(benchmark, text)
    return text, json.dumps({"sample": sample, "cases": found}, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


EXPORT_MARK = "# export:\n"
SCRIPT_FIXTURE = '''

@pytest.fixture(scope="module")
def {stem}() -> Any:
    return importlib.import_module(f"{{PACKAGE}}.tasks.{{BENCHMARK}}.{stem}")
'''


def script_checks(benchmark: Benchmark, test: str) -> str:
    """The checks of the benchmark's shipped scripts, to follow the own test `test`: per script, a fixture named
    after it and its `<stem>_checks.py` from the `# export:` line on (every import above that line must be one of
    `test`'s, which the appended checks then use)."""
    text = ""
    for name in getattr(hooks_of(benchmark), "SCRIPTS", ()):
        stem = Path(name).stem
        checks = (benchmark.folder / f"{stem}_checks.py").read_text(encoding="utf-8")
        header, mark, body = checks.partition(EXPORT_MARK)
        imports = [line for line in header.splitlines() if line.startswith(("import ", "from "))]
        missing = [line for line in imports if line not in test.splitlines() and "__future__" not in line]
        if not mark or missing:
            raise ValueError(f"{stem}_checks.py needs a {EXPORT_MARK.strip()!r} line and only the own test's imports "
                             f"above it (missing: {missing})")
        text += SCRIPT_FIXTURE.format(stem=stem) + "\n\n" + body
    return text
