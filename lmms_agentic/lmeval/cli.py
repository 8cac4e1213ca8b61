"""Command line of the lm-eval support: `python -m lmms_agentic.lmeval <command>`.

Commands:
  tasks-dir                 print the generated lm-eval task folder (for `lm_eval --include_path`)
  write                     regenerate that folder from tasks/ (after changing a task)
  check                     exit 1 and list the differences if the folder is stale
  export --harness H --benchmark B OUT_DIR
                            write a self-contained upstream task folder for lmms-eval or lm-eval

`lmeval_tasks_dir_command` and `export_command` are the functions the project CLI calls for
`python -m lmms_agentic lmeval-tasks-dir` and `python -m lmms_agentic export`.
"""

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
    parser.add_argument("out_dir", type=Path, help="where to write the upstream layout (created; must be empty)")
    parser.add_argument("--no-format", action="store_true",
                        help="skip the harness's formatters (black+isort / ruff); for debugging only")


def export_command(args: argparse.Namespace) -> int:
    from lmms_agentic.lmeval.export import export

    written = export(args.harness, args.benchmark, args.out_dir, format_code=not args.no_format)
    for path in written:
        print(path)
    print(f"exported {args.benchmark} for {args.harness} to {args.out_dir} ({len(written)} files); "
          f"see {args.out_dir / 'UPSTREAM_PR.md'}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmms_agentic.lmeval", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("tasks-dir", help="print the generated lm-eval task folder")
    commands.add_parser("write", help="regenerate the lm-eval task folder")
    commands.add_parser("check", help="fail if the lm-eval task folder is stale")
    add_export_arguments(commands.add_parser("export", help="write an upstream task folder"))
    args = parser.parse_args(argv)
    if args.command == "tasks-dir":
        return lmeval_tasks_dir_command()
    if args.command == "export":
        return export_command(args)
    from lmms_agentic.lmeval import generate

    if args.command == "write":
        written = generate.write()
        print(f"wrote {len(written)} files under {generate.output_dir()}")
        return 0
    problems = generate.stale()
    for problem in problems:
        print(problem)
    if problems:
        print("the lm-eval task folder is stale: run `python -m lmms_agentic.lmeval write`", file=sys.stderr)
    return 1 if problems else 0
