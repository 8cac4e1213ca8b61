"""``make bench``: full-scale speed and memory checks, every figure printed beside its target.

    python -m perf                       # every section (about 5 minutes on 2 cores)
    python -m perf --quick               # smaller samples (about 4 minutes)
    python -m perf --sections parsers,judge

Sections (one module each, see their docstrings): ``parsers`` (pathological 1 MB inputs), ``aggregate`` (1,000
questions x 5 permutations: aggregation, bootstrap, report), ``judge`` (client throughput, cached rerun),
``startup`` (task index with and without the package), ``media`` (decord vs PyAV, 5 permutations vs a plain run),
``hooks`` (per-document hook work vs bare decode + resize, per benchmark), ``memory`` (peak RSS at 250 and 1,000
AgentVQA items), ``agentx_tools`` (Agent-X's executed-tools round loop, batched vs lmms-eval's sequential loop, on
the mini split).  Each section gets the environment back as the user set it (``common.restored_environment``).
The synthetic data (``perf/synth.py``) is built on first use into ``.cache/bench/``.

Results: ``perf/results/latest.json`` (every figure, its target, details, the machine and its load) and
``perf/results/summary.md`` (the table for the README), written by a full run only (every section, without
``--quick``); a partial or quick run writes the same two files to ``.cache/bench/results/`` so the committed
full-bench figures stay as measured.  Exit status 1 when a figure misses its target.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from perf.common import CACHE, RESULTS, Figure, machine, restored_environment

SECTIONS = ("parsers", "aggregate", "judge", "startup", "media", "hook_overhead", "memory", "agentx_tools")


def _row(figure: Figure) -> str:
    verdict = {True: "ok", False: "MISSED", None: ""}[figure.ok]
    return f"  {figure.name:78s} {figure.shown():>12s}  {figure.target:>9s}  {verdict}"


def summary_markdown(figures: list[Figure], meta: dict[str, object]) -> str:
    lines = ["| section | measure | value | target | |", "|---|---|---:|---:|---|"]
    for figure in figures:
        verdict = {True: "ok", False: "**missed**", None: ""}[figure.ok]
        lines.append(f"| {figure.section} | {figure.name.strip()} | {figure.shown()} | {figure.target} | {verdict} |")
    load = meta.get("load_average")
    lines.append("")
    lines.append(f"Measured {meta['date']} on {meta['cpus']} CPUs, Python {meta['python']}"
                 + (f", load average {load[0]:.1f} at the start" if isinstance(load, (list, tuple)) else "")
                 + f"; `make bench` took {meta['wall_s']:.0f} s.")
    return "\n".join(lines) + "\n"


def results_dir(sections: list[str], quick: bool) -> Path:
    """Where a run writes its figures: the committed ``perf/results/`` for a full run, else ``.cache/bench/results``."""
    return RESULTS if not quick and set(sections) >= set(SECTIONS) else CACHE / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perf", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller samples")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated subset of {SECTIONS}")
    parser.add_argument("--no-write", action="store_true",
                        help="write no results (a full run writes perf/results/, any other .cache/bench/results/)")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {SECTIONS}")
    meta: dict[str, object] = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "quick": args.quick,
                               **machine()}
    started = time.perf_counter()
    figures: list[Figure] = []
    failed: list[str] = []
    for name in chosen:
        section_started = time.perf_counter()
        print(f"[{name}]", flush=True)
        try:
            module = importlib.import_module(f"perf.{name}")
            with restored_environment():  # a section's data variables never reach the next one
                found = module.run(quick=args.quick)
        except Exception:  # one broken section must not hide the others' figures
            traceback.print_exc()
            failed.append(name)
            continue
        for figure in found:
            print(_row(figure), flush=True)
            if figure.detail:
                print(f"      {figure.detail}", flush=True)
        print(f"  ({time.perf_counter() - section_started:.0f} s)", flush=True)
        figures += found
    meta["wall_s"] = time.perf_counter() - started
    missed = [f for f in figures if f.ok is False]
    print(f"\n{len(figures)} figures, {len(missed)} missed, {len(failed)} sections failed"
          f"{' (' + ', '.join(failed) + ')' if failed else ''}; {meta['wall_s']:.0f} s", flush=True)
    if not args.no_write:
        out = results_dir(chosen, args.quick)
        meta["sections"] = chosen
        out.mkdir(parents=True, exist_ok=True)
        (out / "latest.json").write_text(json.dumps(
            {"meta": meta, "failed_sections": failed, "figures": [f.as_dict() for f in figures]}, indent=1,
            default=str) + "\n")
        (out / "summary.md").write_text(summary_markdown(figures, meta))
        note = "" if out == RESULTS else " (a quick or partial run: perf/results/ keeps the full bench's figures)"
        print(f"wrote {out / 'latest.json'} and {out / 'summary.md'}{note}")
    return 1 if missed or failed else 0


if __name__ == "__main__":
    sys.exit(main())
