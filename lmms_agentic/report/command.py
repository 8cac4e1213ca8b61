"""`python -m lmms_agentic report RUN_DIR... [--output DIR] [--label NAME]...`: the single-run report for one
folder, the multi-model report (markdown, CSV, PNG) for several. ``--label`` names the runs in order (default: the
preset, else the model id the backend was given; ``labels``). A mini-split or partial run's banner is printed again
under the path, so it is the last thing on the screen. Inputs that are not lmms-eval outputs end with exit 1 and one
line."""

from __future__ import annotations

import argparse
from pathlib import Path

from lmms_agentic.report import ReportInputError, write_multi_report, write_report
from lmms_agentic.report.banner import banner
from lmms_agentic.report.run_files import open_run


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("folders", type=Path, nargs="+", help="lmms-eval --output_path folders (or results files)")
    parser.add_argument("--output", type=Path, help="several runs: where the report goes (default: next to them; "
                        "a folder that holds a report is kept and the new one goes to <folder>-2)")
    parser.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="the name of a run in the report, once per run in the order given (default: the "
                        "preset, else the model id: model=, model_version=, pretrained=)")
    return parser


def execute(args: argparse.Namespace) -> int:
    """Write the report(s) for parsed ``args``; inputs that are not lmms-eval outputs raise ReportInputError."""
    names: list[str] = list(getattr(args, "label", None) or [])
    if len(names) > len(args.folders):
        raise ReportInputError(f"{len(names)} --label for {len(args.folders)} runs: give at most one per run")
    if len(args.folders) == 1 and args.output is None:
        path, text = write_report(args.folders[0], names[0] if names else None)
    else:
        path, text = write_multi_report(args.folders, args.output, labels=names)
    print(text)
    print(f"report written to {path}")
    for folder in args.folders:
        for line in banner(open_run(Path(folder)).results).lines:
            print(f"{folder}: {line}")
    return 0
