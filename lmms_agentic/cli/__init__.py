"""Command line: `python -m lmms_agentic <command>` (also installed as `lmms-agentic`).

Commands:
  tasks-dir           print the task folder for lmms-eval's --include_path
  lmeval-tasks-dir    print the generated lm-eval task folder, for lm_eval --include_path
  export              --harness lmms-eval|lm-eval --benchmark B OUT_DIR: a self-contained upstream task folder
  run -- ARGS         run lmms-eval ARGS and exit 1 with one line when the evaluation failed (lmms-eval exits 0)
  report RUN...       one run: markdown report + charts; several: multi-model report (markdown, CSV, PNG)
  presets [NAME]      the model presets: each published model -> lmms-eval backend settings
  reproduce           run a preset on a benchmark (or --from RUN_DIR) and compare with the published numbers
  rescore RUN         score an earlier run's logged replies again with the current code (no model, no GPU)
  compare A B         paired comparison of two runs on the same items (difference, 95% CI, McNemar)
  baselines BENCHMARK constant-letter baselines (always A/B/...) from the gold letters, no model
  demo                run every benchmark's mini split through the real lmms-eval CLI offline
  permutations        (re)write the option-permutation tasks (tasks/<benchmark>/permutations/)
  metric-lists        (re)write the task YAMLs' metric lists from each core's METRICS (--check: only list stale ones)
  new-benchmark NAME  scaffold a new multiple-choice benchmark folder under tasks/ (README "Adding a benchmark")
  tiny-vlm OUT_DIR    build a tiny random-weight VLM (--kind qwen2_5_vl|qwen3_vl|llava) for the tests
  errors RUN_DIR      error-mode analysis of a finished run with a multimodal LLM judge (AgentVQA, RoboVista)
  agreement CSV       agreement of hand-verified error modes with the judge (accuracy, Cohen's kappa)
  tool-server         serve Agent-X tools over HTTP for the `remote` backend (a token unless on loopback)
  view RUN... -o OUT  a static site of every sample of one or more runs (open OUT/index.html from disk)
  export-inspect RUN OUT  the run as Inspect logs, for `inspect view` (the [inspect] extra)

A user error (missing files, bad data, an unknown benchmark) ends the command with exit status 1 and one line on
stderr; set LMMS_AGENTIC_DEBUG=1 for the traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from lmms_agentic import tasks_dir

Handler = Callable[[argparse.Namespace], int]


def _tasks_dir(args: argparse.Namespace) -> int:
    print(tasks_dir())
    return 0


def _lmeval_tasks_dir(args: argparse.Namespace) -> int:
    from lmms_agentic.lmeval.cli import lmeval_tasks_dir_command

    return lmeval_tasks_dir_command()


def _export(args: argparse.Namespace) -> int:
    from lmms_agentic.lmeval.cli import export_command

    return export_command(args)


def _run(args: argparse.Namespace) -> int:
    from lmms_agentic.harness.runner import main as run_main

    return run_main(args.lmms_eval_args)


def _report(args: argparse.Namespace) -> int:
    from lmms_agentic.report.command import execute

    return execute(args)


def _presets(args: argparse.Namespace) -> int:
    from lmms_agentic import presets

    return presets.execute(args)


def _reproduce(args: argparse.Namespace) -> int:
    from lmms_agentic.reproduce import command as reproduce

    return reproduce.execute(args)


def _rescore(args: argparse.Namespace) -> int:
    from lmms_agentic.reproduce import rescore

    return rescore.execute(args)


def _compare(args: argparse.Namespace) -> int:
    from lmms_agentic.report import compare_runs

    print(compare_runs(args.run_a, args.run_b))
    return 0


def _baselines(args: argparse.Namespace) -> int:
    from lmms_agentic.reproduce.baselines import main as baselines_main

    print(baselines_main(args.benchmark))
    return 0


def _demo(args: argparse.Namespace) -> int:
    from lmms_agentic.cli.demo import run_demo

    return run_demo(args.output, with_tiny_vlm=not args.skip_tiny_vlm)


def _permutations(args: argparse.Namespace) -> int:
    from lmms_agentic.devtools.permutations import write_all

    written = write_all()
    print(f"wrote {len(written)} permutation files under {tasks_dir()}")
    return 0


def _metric_lists(args: argparse.Namespace) -> int:
    from lmms_agentic.devtools.metric_lists import stale_files

    stale = stale_files(write=not args.check)
    if args.check and stale:
        print("metric lists out of date with the cores' METRICS (run python -m lmms_agentic metric-lists): "
              + ", ".join(str(path) for path in stale), file=sys.stderr)
        return 1
    print(f"{len(stale)} task YAML file(s) {'to rewrite' if args.check else 'rewritten'} under {tasks_dir()}")
    return 0


def _new_benchmark(args: argparse.Namespace) -> int:
    from lmms_agentic.devtools.scaffold import create

    tasks_root = (args.tasks_dir or Path(tasks_dir())).resolve()
    tests_root = args.tests_dir or (tasks_root.parent / "tests" if (tasks_root.parent / "tests").is_dir() else None)
    folder = create(args.name, n_options=args.options, tasks_root=tasks_root, tests_root=tests_root)
    print(f"created {folder} (and its tests); next, as README.md's \"Adding a benchmark\" says:\n"
          f"  python -m lmms_agentic permutations      # its option-permutation tasks\n"
          f"  python -m pytest tests/{args.name} tests/plugin/test_contract.py -k {args.name}\n"
          "then edit core/records.py (the release's fields), core/prompt.py (the paper's prompt), core/scoring.py and "
          "core/metrics.py (its record and METRICS; then python -m lmms_agentic metric-lists) and benchmark.json "
          "(Hub id, headline, demo tasks).")
    return 0


def _tiny_vlm(args: argparse.Namespace) -> int:
    from lmms_agentic.devtools.tiny_vlm import main as tiny_main

    return tiny_main([str(args.out_dir), "--seed", str(args.seed), "--kind", args.kind])


def _errors(args: argparse.Namespace) -> int:
    from lmms_agentic.error_analysis.commands import run_command

    return run_command(args)


def _tool_server(args: argparse.Namespace) -> int:
    from lmms_agentic.cli import tool_server

    return tool_server.execute(args)


def _view(args: argparse.Namespace) -> int:
    from lmms_agentic.viewer import command as view_command

    return view_command.execute(args)


def _export_inspect(args: argparse.Namespace) -> int:
    from lmms_agentic.viewer import inspect_export

    return inspect_export.execute(args)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Handler]]:
    parser = argparse.ArgumentParser(prog="lmms-agentic", description="lmms-agentic helper commands")
    commands = parser.add_subparsers(dest="command", required=True)
    handlers: dict[str, Handler] = {}

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        handlers[name] = handler
        return commands.add_parser(name, help=help_text)

    command("tasks-dir", _tasks_dir, "print the task folder for lmms-eval --include_path")
    command("lmeval-tasks-dir", _lmeval_tasks_dir, "print the generated lm-eval task folder (lm_eval --include_path)")
    from lmms_agentic.lmeval.cli import add_export_arguments

    add_export_arguments(command("export", _export, "write a self-contained upstream task folder for a harness"))
    run = command("run", _run, "run lmms-eval and fail loudly when the evaluation failed")
    run.add_argument("lmms_eval_args", nargs=argparse.REMAINDER, help="-- then lmms-eval's arguments")
    from lmms_agentic import presets as presets_cli
    from lmms_agentic.report import command as report_cli
    from lmms_agentic.reproduce import command as reproduce_cli
    from lmms_agentic.reproduce import rescore as rescore_cli

    report_cli.add_arguments(command("report", _report, "report on one finished run, or several models side by side"))
    presets_cli.add_arguments(command("presets", _presets, "list the model presets (or show one)"))
    reproduce_cli.add_arguments(command("reproduce", _reproduce,
                                        "run a published model with its preset, compare with the paper"))
    rescore_cli.add_arguments(command("rescore", _rescore,
                                      "score an earlier run's logged replies again (no model, no GPU)"))
    compare = command("compare", _compare, "paired comparison of two finished runs")
    compare.add_argument("run_a", type=Path)
    compare.add_argument("run_b", type=Path)
    baselines = command("baselines", _baselines, "constant-letter baselines from the gold letters")
    baselines.add_argument("benchmark", help="a multiple-choice benchmark (e.g. robovista, agentvqa)")
    demo = command("demo", _demo, "offline smoke run of every benchmark on its mini split")
    demo.add_argument("--output", type=Path, default=Path("runs/demo"))
    demo.add_argument("--skip-tiny-vlm", action="store_true", help="only run the constant-answer dummy model")
    command("permutations", _permutations, "(re)write the option-permutation task YAMLs")
    metric_lists = command("metric-lists", _metric_lists, "(re)write the task YAMLs' metric lists from the cores")
    metric_lists.add_argument("--check", action="store_true", help="only list the out-of-date files (exit 1)")
    scaffold = command("new-benchmark", _new_benchmark, "scaffold a new MCQ benchmark folder from the template")
    scaffold.add_argument("name", help="folder and task-name prefix, lower case (e.g. mybench)")
    scaffold.add_argument("--options", type=int, default=4, help="options per question (2-10)")
    scaffold.add_argument("--tasks-dir", type=Path, default=None, help="where to create it (default: ours)")
    scaffold.add_argument("--tests-dir", type=Path, default=None,
                          help="where its tests go (default: the tests/ folder next to the task folder, if any)")
    tiny = command("tiny-vlm", _tiny_vlm, "build the tiny random-weight VLM checkpoint")
    tiny.add_argument("out_dir", type=Path)
    tiny.add_argument("--seed", type=int, default=0)
    tiny.add_argument("--kind", choices=("qwen2_5_vl", "qwen3_vl", "llava"), default="qwen2_5_vl")
    from lmms_agentic.error_analysis.commands import (
        AGREEMENT_HELP,
        ERRORS_HELP,
        add_agreement_arguments,
        add_errors_arguments,
    )

    add_errors_arguments(command("errors", _errors, ERRORS_HELP))
    add_agreement_arguments(command("agreement", _errors, AGREEMENT_HELP))
    from lmms_agentic.cli import tool_server

    tool_server.add_arguments(command("tool-server", _tool_server, tool_server.HELP))
    from lmms_agentic.viewer import command as view_command

    view_command.add_arguments(command("view", _view, view_command.HELP))
    from lmms_agentic.viewer import inspect_export

    inspect_export.add_arguments(command("export-inspect", _export_inspect, inspect_export.HELP))
    return parser, handlers


def user_errors() -> tuple[type[BaseException], ...]:
    """Errors a user can act on: shown as one line, not a traceback."""
    from lmms_agentic.adapters.interface import InterfaceError
    from lmms_agentic.error_analysis.judging import JudgeSetupError
    from lmms_agentic.harness.host import deterministic_errors
    from lmms_agentic.harness.runner import RunFailed

    return (*deterministic_errors(), RunFailed, JudgeSetupError, InterfaceError, FileNotFoundError, FileExistsError,
            KeyError, ValueError)


def one_line_errors(command: str, action: Callable[[], int], errors: tuple[type[BaseException], ...]) -> int:
    """``action()``, with ``errors`` shown as one line ``lmms-agentic <command>: error: ...`` and exit status 1
    (the traceback with LMMS_AGENTIC_DEBUG=1).  Every command's entry point goes through here."""
    try:
        return action()
    except errors as exc:
        if os.environ.get("LMMS_AGENTIC_DEBUG", "").strip() not in ("", "0"):
            raise
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"lmms-agentic {command}: error: {message}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    return one_line_errors(args.command, lambda: handlers[args.command](args), user_errors())
