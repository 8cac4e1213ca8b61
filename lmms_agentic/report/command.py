"""`python -m lmms_agentic report RUN_DIR... [--output DIR]`: the single-run report for one folder, the multi-model
report (markdown, CSV, PNG) for several. Inputs that are not lmms-eval outputs end with exit 1 and one line."""

from __future__ import annotations

import argparse
from pathlib import Path

from lmms_agentic.report import write_multi_report, write_report


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("folders", type=Path, nargs="+", help="lmms-eval --output_path folders (or results files)")
    parser.add_argument("--output", type=Path, help="several runs: where the report goes (default: next to them)")
    return parser


def execute(args: argparse.Namespace) -> int:
    """Write the report(s) for parsed ``args``; inputs that are not lmms-eval outputs raise ReportInputError."""
    if len(args.folders) == 1 and args.output is None:
        path, text = write_report(args.folders[0])
    else:
        path, text = write_multi_report(args.folders, args.output)
    print(text)
    print(f"report written to {path}")
    return 0
