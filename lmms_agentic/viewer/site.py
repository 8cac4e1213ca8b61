"""Writes the viewer: a static site that opens from disk (``OUT/index.html``; no server, no build step, no network).

Layout of ``OUT``:

- ``index.html``, ``viewer.js``, ``viewer.css``: the page and its script (``viewer/static/``), the same for every
  site; the script builds every element with ``textContent`` (data never becomes markup) and the page's
  Content-Security-Policy allows no inline script at all;
- ``data/site.js``: the runs, the overview, the run pairs with their disagreement counts and the file layout;
- ``data/rows_<k>.js``: the sample list, ``ROWS_PER_FILE`` rows a file, loaded when the list opens;
- ``data/page_<k>.js``: the sample pages, ``PAGES_PER_FILE`` a file, loaded when one of them opens;
- ``data/compare_<a>_<b>.js``: the samples where runs ``a`` and ``b`` disagree;
- ``media/``: images and video frames as JPEG files with thumbnails (``viewer.media``), and the images executed
  tools returned (from the sample log's thumbnails; written with ``--no-media`` too).

Browsers block ``fetch()`` of ``file://`` URLs, so data files are scripts that assign into ``window.VIEWER_DATA``;
their JSON has ``<``, ``>``, ``&`` and the line separators escaped, so no text in a reply can end a script or open
markup. The site opens with ``site.js`` only; a 10,000-sample run adds five row files when its list opens and one
page file per opened sample.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmms_agentic.viewer import build
from lmms_agentic.viewer.media import MediaResolver, MediaWriter

ROWS_PER_FILE = 2000
PAGES_PER_FILE = 100
STATIC = Path(__file__).parent / "static"
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_literal(value: Any) -> str:
    """``value`` as JSON that is safe inside a script file or tag (module docstring)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    for char, escaped in _ESCAPES.items():
        text = text.replace(char, escaped)
    return text


def data_file(folder: Path, name: str, value: Any) -> Path:
    path = folder / "data" / f"{name}.js"
    path.write_text(f"window.VIEWER_DATA=window.VIEWER_DATA||{{}};window.VIEWER_DATA[{script_literal(name)}]="
                    f"{script_literal(value)};\n", encoding="utf-8")
    return path


def _print(message: str) -> None:
    print(message, flush=True)


def write_site(paths: Sequence[Path], output: Path, *, names: Sequence[str] | None = None, media: bool = True,
               progress: build.Progress = _print) -> Path:
    """Write the viewer of the runs under ``paths`` into ``output``; returns ``output/index.html``."""
    output = Path(output)
    runs = build.load_runs([Path(p) for p in paths], names)
    if output.exists():
        for stale in ("data", "media"):
            shutil.rmtree(output / stale, ignore_errors=True)
    (output / "data").mkdir(parents=True, exist_ok=True)
    writer = MediaWriter(output)
    resolver = MediaResolver(writer) if media else None
    for viewed in runs:
        build.collect(viewed, resolver, progress, writer)
    rows = [sample.row for viewed in runs for sample in viewed.samples]
    pages = [sample.page for viewed in runs for sample in viewed.samples]
    for start in range(0, len(rows), ROWS_PER_FILE):
        data_file(output, f"rows_{start // ROWS_PER_FILE}", rows[start:start + ROWS_PER_FILE])
    for start in range(0, len(pages), PAGES_PER_FILE):
        data_file(output, f"page_{start // PAGES_PER_FILE}",
                  {page["key"]: page for page in pages[start:start + PAGES_PER_FILE]})
    pairs = []
    for a in runs:
        for b in runs[a.index + 1:]:
            shared = build.shared_items(a, b)
            if not shared:
                continue
            found = build.disagreements(a, b)
            data_file(output, f"compare_{a.index}_{b.index}", found)
            pairs.append({"a": a.index, "b": b.index, "shared": shared, "disagree": len(found)})
    offsets, total = [], 0
    for viewed in runs:
        offsets.append(total)
        total += len(viewed.samples)
    site = {"runs": [{"index": v.index, "label": v.label, "path": str(v.run.path), "harness": v.run.results.get(
                "harness", ""), "samples": len(v.samples), "notes": v.run.notes + v.data_notes} for v in runs],
            "overview": build.overview_rows(runs), "pairs": pairs, "offsets": offsets, "total": total,
            "rows_per_file": ROWS_PER_FILE, "pages_per_file": PAGES_PER_FILE,
            "row_files": (total + ROWS_PER_FILE - 1) // ROWS_PER_FILE, "media": media}
    data_file(output, "site", site)
    for name in ("index.html", "viewer.js", "viewer.css"):
        shutil.copyfile(STATIC / name, output / name)
    return output / "index.html"
