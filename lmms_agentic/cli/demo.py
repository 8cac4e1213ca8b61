"""`make demo`: every registered benchmark's mini split through the real lmms-eval CLI, offline.

Three runs, each a plain `lmms-eval` command (printed before it starts, so it can be copied), over the tasks each
benchmark's `benchmark.json` lists under `demo`:
1. `--model dummy` (always answers "A"): exercises loading, prompts, extraction, aggregation and the report; its
   accuracy must equal the share of gold "A" answers.
2. the tiny random-weight Qwen2.5-VL through lmms-eval's `qwen2_5_vl` chat backend (images, video, chat template,
   generation).
3. Agent-X's one-shot tasks with scripted replies and a scripted loopback judge (`cli.demo_judged`): the judged
   metrics (goal_acc ...) computed end to end, with failing and unscored verdicts to look at in the viewer.

All are smoke tests of the plumbing, not benchmark scores; the closing banner says so and shows the command a GPU
user runs instead. lmms-eval exits 0 even when an evaluation fails, so each run is checked by
`lmms_agentic.harness.runner` (exit code, "Error during evaluation" in the log, the results file and its tasks).
"""

from __future__ import annotations

import json
import math
import shlex
import time
from collections.abc import Mapping
from pathlib import Path

from lmms_agentic.adapters import benchmarks
from lmms_agentic.cli.demo_judged import JUDGE_MODEL, JUDGED_LABEL, run_judged
from lmms_agentic.harness import runner
from lmms_agentic.report import summary, write_report


def demo_tasks() -> list[str]:
    return [task for b in benchmarks.all_benchmarks().values() for task in b.demo_tasks]


def tiny_vlm_tasks() -> list[str]:
    return [task for b in benchmarks.all_benchmarks().values() for task in b.tiny_vlm_tasks]


def gpu_command() -> str:
    names = ",".join(benchmarks.all_benchmarks())
    return ("lmms-eval --model vllm --model_args model=Qwen/Qwen2.5-VL-7B-Instruct "
            f"--tasks {names} --output_path runs/qwen2_5_vl_7b --log_samples")


def run_cli(args: list[str], output: Path, log_name: str, extra_env: Mapping[str, str] | None = None) -> Path:
    """Run the lmms-eval CLI with the mini data (and ``extra_env``: its non-empty values are printed with the
    command) and return the results file it wrote (checked by `lmms_agentic.harness.runner`: lmms-eval exits 0
    even when an evaluation fails)."""
    shown = {"LMMS_AGENTIC_DATA": "mini", **{k: v for k, v in (extra_env or {}).items() if v}}
    env = {"LMMS_AGENTIC_DATA": "mini", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(extra_env or {})}
    full = [*args, "--output_path", str(output), "--log_samples"]
    prefix = " ".join(f"{name}={shlex.quote(value)}" for name, value in shown.items())
    print(f"\n$ {prefix} {shlex.join(['lmms-eval', *full])}", flush=True)
    started = time.monotonic()
    try:
        results = runner.run(full, env=env, echo=False, log_name=log_name)
    except runner.RunFailed as exc:
        tail = "\n".join((output / log_name).read_text().splitlines()[-30:]) if (output / log_name).exists() else ""
        raise RuntimeError(f"lmms-eval failed: {exc}\n{tail}") from exc
    print(f"  finished in {time.monotonic() - started:.0f} s -> {results}", flush=True)
    return results


def headline_value(results_file: Path, task: str = "agentx", metric: str = "goal_acc") -> str:
    """``metric`` of ``task`` in a results file, as the viewer shows a unit-scale value ("n/a" when missing)."""
    value = json.loads(results_file.read_text(encoding="utf-8"))["results"].get(task, {}).get(f"{metric},none")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "n/a"
    return f"{value:.3f}"


def run_demo(output: Path, with_tiny_vlm: bool = True) -> int:
    started = time.monotonic()
    print("lmms-agentic demo: bundled mini splits, offline models (smoke tests, not benchmark scores)")
    dummy_dir = output / "dummy"
    run_cli(["--model", "dummy", "--tasks", ",".join(demo_tasks())], dummy_dir, "lmms_eval.log")
    report, text = write_report(dummy_dir)
    print(summary(text))
    print(f"full report with breakdowns and charts: {report}")
    judged_dir = output / "judged"
    print("\nAgent-X judged end to end: scripted replies (agentic_scripted) and a scripted loopback judge on "
          "127.0.0.1\n(neither is a model; the judge's scores are picked by a hash of its prompt)")
    judged = run_judged(judged_dir, run_cli)
    report, text = write_report(judged_dir)
    print(summary(text))
    print(f"full report with breakdowns and charts: {report}")
    print(f"agentx goal_acc with the scripted judge: {headline_value(judged)}")
    if with_tiny_vlm:
        from lmms_agentic.devtools.tiny_vlm import build_tiny_qwen2_5_vl, model_args

        checkpoint = build_tiny_qwen2_5_vl(output / "tiny-qwen2_5_vl")
        vlm_dir = output / "tiny_vlm"
        run_cli(["--model", "qwen2_5_vl", "--model_args", model_args(checkpoint), "--tasks",
                 ",".join(tiny_vlm_tasks()), "--gen_kwargs", "max_new_tokens=8", "--batch_size", "1"],
                vlm_dir, "lmms_eval.log")
        report, text = write_report(vlm_dir)
        print(summary(text))
        print(f"full report with breakdowns and charts: {report}")
    from lmms_agentic.reproduce.command import smoke_table
    from lmms_agentic.viewer.command import write_demo_viewer

    viewer = write_demo_viewer([dummy_dir, judged_dir, output / "tiny_vlm"], output / "viewer",
                               {judged_dir: JUDGED_LABEL})
    print(f"every sample in a browser (open from disk): {viewer}")
    print(f"  start there: the overview's agentx goal_acc value of \"{JUDGED_LABEL}\" lists the samples the judge "
          "failed; open one for the judge's verdict and its reason")
    print("\n" + smoke_table(output))
    print(
        "\n" + "=" * 100 + "\n"
        "These numbers come from SMOKE-TEST models: `dummy` always answers \"A\" (its accuracy equals the\n"
        "share of gold \"A\" answers) and the tiny Qwen2.5-VL has random weights. They check the plumbing,\n"
        "not a model. Their Agent-X judged metrics show n/a because no LLM judge is configured for them.\n"
        f"The run labelled \"{JUDGED_LABEL}\" has Agent-X judged end to end, but its replies are\n"
        "scripted from the ground truth (gold trace, wrong final answer, or prose that does not parse) and\n"
        f"its judge is a scripted loopback server ({JUDGE_MODEL} on 127.0.0.1) whose scores are picked by\n"
        "a hash of the judge prompt, some left unscored: its goal_acc is not a score either. For a real\n"
        "judge, set LMMS_AGENTIC_JUDGE_PRESET=gpt-4o with LMMS_AGENTIC_JUDGE_API_KEY, or LMMS_AGENTIC_JUDGE_BASE_URL\n"
        "+ LMMS_AGENTIC_JUDGE_MODEL (+ LMMS_AGENTIC_JUDGE_API_KEY) for any OpenAI-compatible server.\n"
        "On a GPU machine with Hub access, run the real benchmarks with e.g.:\n\n"
        f"  {gpu_command()}\n  python -m lmms_agentic report runs/qwen2_5_vl_7b\n" + "=" * 100
    )
    print(f"demo finished in {time.monotonic() - started:.0f} s")
    return 0
