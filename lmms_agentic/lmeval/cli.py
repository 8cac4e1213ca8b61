"""The lm-eval commands of the project CLI: `python -m lmms_agentic lmeval-tasks-dir` (print the lm-eval task
folder, generated on first use) and `python -m lmms_agentic export --harness H --benchmark B OUT_DIR` (a
self-contained upstream task folder for lmms-eval or lm-eval)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HARNESSES = ("lmms-eval", "lm-eval")


def lmeval_tasks_dir_command() -> int:
    from lmms_agentic.lmeval import tasks_dir

    print(tasks_dir())
    return 0


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--harness", required=True, choices=HARNESSES, help="the harness to export for")
    parser.add_argument("--benchmark", required=True, help="a benchmark folder under tasks/ (e.g. robovista)")
    parser.add_argument("out_dir", type=Path, help="where to write the upstream layout (created if missing; an "
                        "existing task folder may hold only files this export writes)")
    parser.add_argument("--force", action="store_true",
                        help="delete the files of an existing task folder that this export does not write (each named)")
    parser.add_argument("--no-format", action="store_true",
                        help="skip the harness's formatters (black+isort / ruff); for debugging only")


def export_command(args: argparse.Namespace) -> int:
    from lmms_agentic.lmeval.export import export

    written = export(args.harness, args.benchmark, args.out_dir, format_code=not args.no_format, force=args.force)
    for path in written.removed:
        print(f"removed {path} (--force)", file=sys.stderr)
    for path in written:
        print(path)
    print(f"exported {args.benchmark} for {args.harness} to {args.out_dir} ({len(written)} files); "
          f"see {args.out_dir / 'UPSTREAM_PR.md'}", file=sys.stderr)
    return 0
