"""`python -m lmms_agentic rescore RUN_DIR`: score the replies of an earlier run again, without its model or a GPU.

lmms-eval's ``from_log`` model cannot read current sample logs, so this replays them: every sample line of the
run's ``*_samples_<task>.jsonl`` gives its task, the benchmark's own item id (the record's ``id``, see
``adapters.samples.read_record``; never lmms-eval's row index) and the raw reply (``resps``, or ``filtered_resps``
when lmms-eval left ``resps`` out because they were equal). A replay model answers each request from that table,
keyed by (task, item id), so ICL seeds and permutations that share an id keep their own replies; lmms-eval then
runs the current extraction, metrics and judges through its Python API, over the run's top-level tasks and with its
``--limit``, and writes a new results and samples folder (default ``<RUN_DIR>_rescored`` beside the run, so the
run folder keeps its newest results file).

The new results file keeps the original ``config.model`` / ``model_args`` (so reports and ``reproduce --from``
still know the model), names the replay backend in ``config.model_backend`` and adds ``lmms_agentic_rescore``: the
source results file, the number of replies, and the ``LMMS_AGENTIC_*`` settings in effect (key variables excluded,
every known secret removed by value: URL credentials and keys become ``***``).
Replaying with unchanged code reproduces the run's metrics exactly; a changed setting (e.g.
``LMMS_AGENTIC_MCQ_JUDGE=1``, the MCQ judge fallback) changes what it governs and nothing else, and the command
prints every metric that moved. The data must be the run's: a run on the bundled mini split is rescored on it
(unless ``LMMS_AGENTIC_DATA`` says otherwise), and an item without a logged reply stops the rescore.
The judge is the run's too (``judging.choose``: the configuration its results record, a judge set in the
environment, or none with ``--judge none``); the command prints ``judge M: N verdicts, N cached, N sent`` and the new
results record the judge they were scored with. Progress bars are off (one line per phase instead).
The replay runs through lmms-eval: an install without it (``[lmeval]`` only) is told what to add.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmms_agentic.reproduce import judging

if TYPE_CHECKING:
    from lmms_agentic.report.runs import Run

SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


class RescoreError(ValueError):
    """The run cannot be replayed (no sample logs, a reply missing for an item); one line for the user."""


def _first_text(value: Any) -> str | None:
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def logged_replies(run: Run) -> dict[tuple[str, str], str]:
    """(leaf task, item id) -> the raw reply logged for it."""
    from lmms_agentic.adapters.samples import read_record

    found: dict[tuple[str, str], str] = {}
    for task in run.results["results"]:
        for line in run.lines(task):
            record = read_record(line)
            reply = _first_text(line.get("resps")) if "resps" in line else None
            reply = reply if reply is not None else _first_text(line.get("filtered_resps"))
            if record is None or reply is None:
                continue
            found[(task, str(record["id"]))] = reply
    if not found:
        raise RescoreError(f"{run.results_file}: no sample line carries a record with an item id and a reply (run "
                           "lmms-eval with --log_samples)")
    return found


def replay_model(replies: dict[tuple[str, str], str]) -> Any:
    """An lmms-eval model answering each request with the reply logged for (task, item id)."""
    from lmms_agentic.harness.offline_model import ScriptedChoice

    class ReplayReplies(ScriptedChoice):
        def generate_until(self, requests: list[Any]) -> list[str]:
            answers = []
            for request in requests:
                _context, _gen_kwargs, _visual, doc_id, task, split = request.args
                key = (task, str(self.task_dict[task][split][doc_id]["id"]))
                if key not in replies:
                    raise RescoreError(f"task {key[0]}, item {key[1]}: no reply in the run's sample logs (the data "
                                       "differ from the run's: another revision, split or --limit?)")
                answers.append(replies[key])
            return answers

    return ReplayReplies(policy="constant", touch_visuals=False)


def _settings() -> dict[str, str]:
    """The ``LMMS_AGENTIC_*`` settings, without key-like variables and with every known secret removed by value
    (a password or ``?api_key=`` written into ``LMMS_AGENTIC_JUDGE_BASE_URL``, a key pasted into another value)."""
    from lmms_agentic.judges.config import mask_url
    from lmms_agentic.judges.secrets import redactor

    clean = redactor()
    return {k: clean.text(mask_url(v)) for k, v in sorted(os.environ.items())
            if k.startswith("LMMS_AGENTIC_") and not any(marker in k for marker in SECRET_MARKERS)}


def _values(results: dict[str, Any]) -> dict[tuple[str, str], Any]:
    return {(task, key): value for task, row in results.get("results", {}).items() if isinstance(row, dict)
            for key, value in row.items() if key.endswith(",none") and "_stderr" not in key}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, Any, Any]]:
    """(task, metric, before, after) for every metric whose value differs between two results files."""
    old, new = _values(before), _values(after)
    return [(task, key.removesuffix(",none"), old.get((task, key)), new.get((task, key)))
            for task, key in sorted(set(old) | set(new)) if not _same(old.get((task, key)), new.get((task, key)))]


def _require_lmms_eval() -> None:
    if importlib.util.find_spec("lmms_eval") is None:
        raise RescoreError("rescore replays the logged replies through lmms-eval, which is not installed here (an "
                           "lm-eval-only install): pip install -e '.[lmms-eval]' in the checkout (or "
                           "\"lmms-agentic[lmms-eval] @ git+<repository URL>\"); report, compare, errors and "
                           "reproduce --from need no lmms-eval")


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """Silence tqdm (lmms-eval passes ``disable=`` explicitly, which ``TQDM_DISABLE`` does not override) and the
    datasets library's bars: a replay printed about 30 bars for two benchmarks."""
    import datasets
    from tqdm import std

    original = std.tqdm.__init__

    def quiet(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["disable"] = True
        original(self, *args, **kwargs)

    were_on = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    std.tqdm.__init__ = quiet  # type: ignore[method-assign]
    try:
        yield
    finally:
        std.tqdm.__init__ = original  # type: ignore[method-assign]
        if were_on:
            datasets.enable_progress_bars()


@contextlib.contextmanager
def _replay_environment(choice: judging.Choice) -> Iterator[None]:
    """The judge variables of ``choice`` and no progress bars, for the replay only; a fresh judge client."""
    from lmms_agentic.judges.client import reset_default_client

    previous = judging.apply(choice, os.environ)
    reset_default_client()
    try:
        with _no_progress_bars():
            yield
    finally:
        judging.restore(previous, os.environ)
        reset_default_client()


def rescore(folder: Path, output: Path | None = None, judge: str = "run"
            ) -> tuple[Run, list[tuple[str, str, Any, Any]]]:
    """Replay the newest run under ``folder`` with its judge (``judge="none"``: without one); returns the new run
    and the metrics that changed."""
    from lmms_agentic.report.runs import load_run
    from lmms_agentic.reproduce.command import evaluate

    source = load_run(folder)
    replies = logged_replies(source)
    choice = judging.choose(source, judge)
    _require_lmms_eval()
    provenance = (source.results.get("lmms_agentic") or {}).get("data") or {}
    if "LMMS_AGENTIC_DATA" not in os.environ and any(
            isinstance(facts, dict) and facts.get("kind") == "mini" for facts in provenance.values()):
        os.environ["LMMS_AGENTIC_DATA"] = "mini"
    target = output or Path(folder).parent / f"{Path(folder).name}_rescored"
    limit = source.config.get("limit")
    print(f"replaying {len(replies)} logged replies over {', '.join(source.top_level())}", flush=True)
    print(choice.line(), flush=True)
    from lmms_agentic.adapters.data import DataLoadError

    try:
        with _replay_environment(choice):
            results_file = evaluate(replay_model(replies), "", source.top_level(), target,
                                    task_model_name=str(source.config.get("model") or "default"),
                                    limit=int(limit) if isinstance(limit, int | float) else None)
    except DataLoadError as error:
        if provenance or any(k.startswith("LMMS_AGENTIC_DATA") for k in os.environ):
            raise
        raise RescoreError(f"{source.results_file} does not record where its data came from (results written before "
                           "lmms-agentic recorded it, e.g. by lm-eval), so the Hub was tried and failed: set "
                           "LMMS_AGENTIC_DATA as for the run (mini for the bundled split, /data for local copies). "
                           f"{str(error).splitlines()[0]}") from error
    if results_file is None:
        raise RescoreError("the rescore ran on a rank other than 0")
    results = json.loads(results_file.read_text(encoding="utf-8"))
    config = results.setdefault("config", {})
    config.update(model=source.config.get("model"), model_args=source.config.get("model_args"))
    results["lmms_agentic_rescore"] = {"source": str(source.results_file), "replies": len(replies),
                                       "settings": _settings(), "judge": choice.source}
    plugin = results.setdefault("lmms_agentic", {})
    plugin["judge"] = choice.record
    results_file.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    return load_run(target), changes(source.results, results)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("run_dir", type=Path, help="the lmms-eval --output_path of the run (with --log_samples)")
    parser.add_argument("--output", type=Path, help="where the new results go (default RUN_DIR_rescored)")
    parser.add_argument("--judge", choices=judging.CHOICES, default="run",
                        help="run (default): the judge the run's results record, unless LMMS_AGENTIC_JUDGE_* set one; "
                        "none: no judge, the judged metrics are left unscored")
    return parser


def execute(args: argparse.Namespace) -> int:
    """Rescore for parsed ``args`` and print what changed; user errors raise."""
    run, moved = rescore(args.run_dir, args.output, args.judge)
    print(f"rescored {run.results_file}")
    verdict_line = judging.summary(run)
    if verdict_line:
        print(verdict_line)
    changed = [m for m in moved if m[2] is not None and m[3] is not None]
    added = sorted({metric for _, metric, old, _ in moved if old is None})
    removed = sorted({metric for _, metric, _, new in moved if new is None})
    print(f"{len(changed)} metric value(s) changed" + (":" if changed else "; every metric of the original run "
                                                        "has the same value"))
    if changed:
        print("\n| task | metric | before | after |\n|---|---|---:|---:|")
        print("\n".join(f"| {task} | {metric} | {old} | {new} |" for task, metric, old, new in changed))
    if added:
        print(f"metrics the current code adds: {', '.join(added)}")
    if removed:
        print(f"metrics the current code no longer reports: {', '.join(removed)}")
    return 0
