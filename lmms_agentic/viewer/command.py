"""``python -m lmms_agentic view RUN [RUN ...] -o OUT``: the command line of the run viewer, and the call
``make demo`` ends with (``write_demo_viewer``)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

HELP = "write a static site of every sample of one or more runs (open OUT/index.html from disk)"


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("runs", nargs="+", type=Path,
                        help="lmms-eval or lm-eval --output_path folders (or results files); a folder holding "
                             "several models' runs gives one run per model")
    parser.add_argument("-o", "--output", type=Path, required=True, help="folder to write the site into")
    parser.add_argument("--label", action="append", default=None,
                        help="a name for each RUN, in order (default: the reports' label)")
    parser.add_argument("--no-media", action="store_true",
                        help="do not rebuild the samples' media from the benchmarks' data (faster; pages say so)")
    parser.add_argument("--quiet", action="store_true", help="print only the path of the site")
    return parser


def execute(args: argparse.Namespace) -> int:
    from lmms_agentic.viewer.site import write_site

    index = write_site(args.runs, args.output, names=args.label, media=not args.no_media,
                       progress=(lambda message: None) if args.quiet else _print)
    print(f"viewer: {index.resolve()} (open it in a browser; it reads only files next to it)")
    return 0


def _print(message: str) -> None:
    print(f"  {message}", flush=True)


def write_demo_viewer(folders: Sequence[Path], output: Path, labels: Mapping[Path, str] | None = None) -> Path:
    """The viewer of the demo's runs (``make demo``; those of ``folders`` that exist, labelled by ``labels`` where
    it names them, else as the reports label them), quietly; returns its index.html."""
    from lmms_agentic.viewer.site import write_site

    present = [Path(f) for f in folders if Path(f).exists()]
    names = [(labels or {}).get(folder, "") for folder in present]  # "": the report's label
    return write_site(present, output, names=names, progress=lambda message: None)
