"""The ``errors`` and ``agreement`` commands of the project CLI (``python -m lmms_agentic errors RUN_DIR``).

``add_errors_arguments`` / ``add_agreement_arguments`` declare their options, ``run_command(args)`` runs the chosen
one.  Importing this module imports neither PIL nor matplotlib nor the
datasets stack, so the project CLI stays fast to start.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

ERRORS_HELP = "error-mode analysis of a finished run with a multimodal LLM judge"
AGREEMENT_HELP = "agreement of hand-verified error modes with the judge"

if TYPE_CHECKING:
    from PIL import Image

    from lmms_agentic.judges.error_modes import ErrorModes

    from .judging import Assignment
    from .run import Run


def add_errors_arguments(errors: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The ``errors`` command's arguments."""
    errors.add_argument("run_dir", type=Path, help="the --output_path of the lmms-eval run (with --log_samples)")
    errors.add_argument("--task", action="append", default=[],
                        help="task or group to analyse (repeatable, or comma-separated; default: every MCQ variant "
                             "whose benchmark ships error_modes)")
    errors.add_argument("--sample", type=int, default=None,
                        help="at most N predictions per domain, evenly across sources (default: all)")
    errors.add_argument("--seed", type=int, default=0, help="seed of the sample and the verification subset")
    errors.add_argument("--verify", type=int, default=100, help="judged assignments exported for manual checking")
    errors.add_argument("--output", type=Path, default=None, help="output folder (default: <run>/<stamp>_errors)")
    errors.add_argument("--data", default=None,
                        help="LMMS_AGENTIC_DATA for loading the documents (default: the environment's, else the "
                             "run's as its results file records it)")
    errors.add_argument("--judge-vision", action="store_true", help="declare that the judge accepts images")
    errors.add_argument("--probe-vision", action="store_true",
                        help="check image support with one request (a red image must be named red)")
    errors.add_argument("--dry-run", action="store_true",
                        help="build the judge requests and write them (text only) without a judge")
    errors.add_argument("--video-frames", type=int, default=None,
                        help="frames per video shown to the judge (default: the run's n_frames)")
    errors.add_argument("--image-max-side", type=int, default=1536,
                        help="longer side of images sent to the judge, in pixels (0: native)")
    errors.add_argument("--max-reply-chars", type=int, default=40_000,
                        help="longest model reply sent to the judge (head and tail kept; 0: no limit)")
    errors.add_argument("--no-verify-media", action="store_true", help="do not save the verification items' images")
    errors.add_argument("--quiet", action="store_true", help="no progress bars")
    return errors


def add_agreement_arguments(agreement: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The ``agreement`` command's arguments."""
    agreement.add_argument("verify_csv", type=Path, help="the verify.csv written by `errors`, verified_mode filled")
    agreement.add_argument("--json", type=Path, default=None, help="also write the numbers as JSON")
    return agreement


def _task_names(values: Sequence[str]) -> list[str]:
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def _specs(run: Run) -> dict[str, ErrorModes]:
    from lmms_agentic.judges.error_modes import ErrorModes

    found: dict[str, ErrorModes] = {}
    for variant in run.variants:
        name = variant.benchmark.name
        if name not in found:
            spec = variant.benchmark.package().error_modes()
            if spec is not None:
                if not isinstance(spec, ErrorModes):
                    raise TypeError(f"tasks/{name}: error_modes() must return an ErrorModes, got {type(spec).__name__}")
                found[name] = spec
    return found


def _summary(run: Run, specs: Mapping[str, ErrorModes], assignments: Sequence[Assignment],
             tables: Mapping[str, list[str]], figures: Mapping[str, Path], header: Sequence[str]) -> str:
    from .output import coverage_line

    config = run.results.get("config", {})
    lines = ["# Error-mode analysis", "", f"- run: `{run.results_file}`",
             f"- model: `{config.get('model')}`" + (f" `{config['model_args']}`" if config.get("model_args") else ""),
             *header]
    for spec in specs.values():
        lines += [f"- {spec.title}: " + note for note in spec.notes]
    for variant in run.variants:
        if variant.name not in tables:
            continue
        spec = specs[variant.benchmark.name]
        mine = [a for a in assignments if a.item.variant == variant.name]
        scope = "incorrect predictions" if spec.population == "incorrect" else "all predictions"
        lines += ["", f"## {variant.name} ({spec.title}; shares of labelled {scope})", "", coverage_line(mine), ""]
        lines += tables[variant.name]
        if spec.reference_note:
            lines += ["", f"Paper: {spec.reference_note}"]
        if variant.name in figures:
            lines += ["", f"![{variant.name}]({figures[variant.name].name})"]
    return "\n".join(lines) + "\n"


def run_errors(args: argparse.Namespace) -> int:
    from lmms_agentic.judges import JudgeConfig

    from . import judging, output
    from .run import DocStore, eligible, load_run, stratified_sample, use_run_data

    if args.data:
        os.environ["LMMS_AGENTIC_DATA"] = args.data
    run = load_run(args.run_dir, _task_names(args.task))
    specs = _specs(run)
    run.variants = [v for v in run.variants if v.benchmark.name in specs]
    if not run.variants:
        raise ValueError(f"no variant of {run.results_file} belongs to a benchmark with an error taxonomy "
                          "(tasks/<benchmark>/error_study.py)")
    options = judging.Options(args.video_frames, args.image_max_side or None, args.max_reply_chars)
    header = ["- sampling: all predictions" if args.sample is None else
              f"- sampling: up to {args.sample} predictions per domain, evenly across sources (seed {args.seed})"]
    client: judging.MultimodalJudgeClient | None = None
    if not args.dry_run:
        config = JudgeConfig.from_env()
        client = judging.MultimodalJudgeClient(config)
        if args.probe_vision:
            judging.require_judge(config, True)  # configured at all?
            ok, detail = judging.probe_vision(client)
            if not ok:
                raise judging.JudgeSetupError(f"vision probe failed: {detail}; the judge cannot see images")
            how = f"probe ({detail})"
        else:
            how = judging.require_judge(config, True if args.judge_vision else None)
        header.append(f"- judge: `{config.model}` (images declared by {how}; temperature {config.temperature})")
    stores = {}
    for name in sorted(specs):
        benchmark = next(v.benchmark for v in run.variants if v.benchmark.name == name)
        line = use_run_data(run, benchmark)
        print(f"data: {line}", flush=True)
        header.append(f"- data: {line}")
        stores[name] = DocStore(benchmark)
    folder = args.output or run.results_file.parent / f"{run.stamp}_errors"
    folder.mkdir(parents=True, exist_ok=True)
    assignments: list[judging.Assignment] = []
    dry_lines: list[str] = []
    for variant in run.variants:
        spec, store = specs[variant.benchmark.name], stores[variant.benchmark.name]
        keep, skipped = eligible(variant.items, spec.population)
        chosen = stratified_sample(keep, args.sample, args.seed)
        print(f"{variant.name}: {len(chosen)} of {len(keep)} eligible predictions "
              f"({len(variant.items)} logged)", flush=True)
        if args.dry_run:
            for _item, request in judging.build_requests(spec, [i for i in chosen if not i.correct], store,
                                                        run.task_kwargs, options):
                dry_lines.append(json.dumps({
                    "item": request.item_id, "template": f"{request.template.id}@{request.template.version}",
                    "messages": request.template.render(request.values), "images": len(request.images),
                    "image_bytes": sum(len(u) for u in request.images)}, ensure_ascii=False))
            continue
        assert client is not None
        assignments += judging.judge_items(spec, chosen, skipped, store, run.task_kwargs, client, options,
                                           progress=not args.quiet)
    if args.dry_run:
        target = folder / "requests.jsonl"
        target.write_text("".join(line + "\n" for line in dry_lines), encoding="utf-8")
        print(f"dry run: {len(dry_lines)} judge requests written to {target} (nothing sent)")
        return 0
    tables: dict[str, list[str]] = {}
    figures: dict[str, Path] = {}
    shares_all = []
    for variant in run.variants:
        shares = output.distribution(specs[variant.benchmark.name], variant.name, assignments)
        if not shares:
            continue
        shares_all += shares
        tables[variant.name] = output.markdown_table(shares)
        figures[variant.name] = output.plot_modes(shares, folder / f"{variant.name}_error_modes.png",
                                                  f"{variant.name}: error modes per domain")
    output.write_assignments(folder / "assignments.csv", assignments)
    output.write_distribution(folder / "distribution.csv", shares_all)

    def images_for(a: judging.Assignment) -> list[Image.Image]:
        spec = specs[a.item.benchmark]
        doc = spec.prepare_doc(stores[a.item.benchmark].get(a.item), a.item.record)
        return list(spec.build(a.item, doc, run.task_kwargs(a.item.task), args.video_frames).images)

    verify = output.export_verification(folder, assignments, args.verify, args.seed, dict(specs),
                                        None if args.no_verify_media else images_for)
    if verify.name != "verify.csv":
        filled = output.hand_verified_rows(folder / "verify.csv")
        kept = f"{filled} row(s) with verified_mode filled" if filled > 0 else "it could not be read as a CSV"
        print(f"kept your {folder / 'verify.csv'} ({kept}); this run's verification subset is {verify}", flush=True)
    if client is not None:
        stats = client.stats
        unscored = ", ".join(f"{k} {v}" for k, v in sorted(stats["unscored"].items())) or "none"
        header.append(f"- judge calls: {stats['http_requests']} HTTP requests ({stats['retries']} retries), "
                      f"{stats['scored']} scored, unscored: {unscored}")
    text = _summary(run, specs, assignments, tables, figures, header)
    (folder / "summary.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"written to {folder}: summary.md, assignments.csv, distribution.csv, "
          f"{len(figures)} figure(s), {verify.name} (fill verified_mode, then run "
          f"`python -m lmms_agentic agreement {verify}`)")
    return 0


def run_command(args: argparse.Namespace) -> int:
    """Run ``errors`` or ``agreement`` (``args.command``); user errors raise (``cli.user_errors`` shows them)."""
    if args.command == "agreement":
        from .agreement import run_agreement

        print(run_agreement(args.verify_csv, args.json))
        return 0
    return run_errors(args)
