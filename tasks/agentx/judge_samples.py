"""Agent-X's judged metrics of a finished run: the README table's ten metrics from the logged samples.

The Agent-X tasks report only the metrics they compute themselves; the judged ones (`ground_s` ... `goal_acc`,
`goal_imggen`) need an LLM judge, which this step runs after the run, on the samples it logged (`--log_samples`):
each sample carries the item's record (its id and parsed reply, under the record metric). For every record it asks
the released judge prompts (`judging.judge_item`, through `task.judged`, nine calls per item, no Goal call for the
generative items) of an OpenAI-compatible chat endpoint, then aggregates with `metrics.aggregate` and prints each
metric with its coverage (the share of eligible items the judge scored) and writes them as JSON:

    AGENTX_JUDGE_BASE_URL=https://api.openai.com/v1 AGENTX_JUDGE_MODEL=gpt-4o-2024-08-06 \\
    AGENTX_JUDGE_API_KEY=... python -m <harness package>.tasks.agentx.judge_samples \\
        --data data.json --output judged.json runs/<model>/*samples*agentx*.jsonl

The judge is chosen only by its own variables (`AGENTX_JUDGE_BASE_URL`, `AGENTX_JUDGE_MODEL`, optional
`AGENTX_JUDGE_API_KEY` and `AGENTX_JUDGE_STYLE`, "gpt" or "qwen": the released script whose serialisation the calls
follow, by default the model name's); no other key is read and the key is never printed. The ground truth comes
from the release's `data.json` (`--data`, the dataset repository's file at the tasks' revision) or from a sample's
logged document where the harness logs it (lm-eval). A call that fails (transport, HTTP status, a reply without
one `Score` in [0, 1]) leaves that metric of that item unscored with its reason, never 0: a metric no item scored is
null, and one warning line sums up what was left unscored and why. After `BREAKER` failed calls in a row the
remaining calls are not sent (unscored, `judge_unavailable`). Model replies are only searched for the score.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lmms_agentic.tasks.agentx.core import judging, metrics, task

VARIABLES = ("AGENTX_JUDGE_BASE_URL", "AGENTX_JUDGE_MODEL", "AGENTX_JUDGE_API_KEY", "AGENTX_JUDGE_STYLE")
BREAKER = 5
"""Failed calls in a row after which no more calls are sent."""
MAX_REPLY_BYTES = 1 << 20
RETRIED_STATUSES = (429, 500, 502, 503, 504)
SCORE = re.compile(r"""\bScore['"]?\s*[:=]\s*['"]?\s*(\d+(?:\.\d+)?|\.\d+)""")
PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
NO_GROUND_TRUTH = "no_ground_truth"


class JudgeSetupError(ValueError):
    """The judge or the inputs are not usable; the message says what to set."""


def read_score(text: str) -> float | None:
    """The reply's `Score` when it names exactly one value in [0, 1], else None."""
    found = {float(value) for value in SCORE.findall(text)}
    if len(found) != 1:
        return None
    score = found.pop()
    return score if 0.0 <= score <= 1.0 else None


class ChatJudge:
    """A `judging.Judge` asking an OpenAI-compatible `/chat/completions` endpoint, one request per call."""

    def __init__(self, base_url: str, model: str, api_key: str = "", retries: int = 2, backoff: float = 1.0,
                 timeout: float = 120.0) -> None:
        base = base_url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model, self.api_key, self.timeout = model, api_key, timeout
        self.retries, self.backoff = retries, backoff
        self.failures_in_a_row = 0
        self.lock = threading.Lock()

    def ask(self, system: str, user: str) -> str:
        body = {"model": self.model, "temperature": 0,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode("utf-8"), headers, method="POST")
        attempt = 0
        while True:
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    reply = json.loads(response.read(MAX_REPLY_BYTES))
                return str(reply["choices"][0]["message"]["content"] or "")
            except urllib.error.HTTPError as error:
                if error.code not in RETRIED_STATUSES or attempt >= self.retries:
                    raise
            except (urllib.error.URLError, TimeoutError):
                if attempt >= self.retries:
                    raise
            time.sleep(self.backoff * 2**attempt)
            attempt += 1

    def answer(self, call: judging.JudgeCall) -> dict[str, Any]:
        if self.failures_in_a_row >= BREAKER:
            return {"score": None, "unscored_reason": "judge_unavailable", "detail": f"{BREAKER} failed calls in a row"}
        user = PLACEHOLDER.sub(lambda m: call.values[m.group(1)], judging.user_template(call.code_key, call.style))
        try:
            text = self.ask(call.system, user)
        except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
            with self.lock:
                self.failures_in_a_row += 1
            return {"score": None, "unscored_reason": "judge_error", "detail": f"{type(error).__name__}: {error}"}
        with self.lock:
            self.failures_in_a_row = 0
        score = read_score(text)
        if score is None:
            return {"score": None, "unscored_reason": "unparseable_reply", "detail": text[:200]}
        return {"score": score, "reply": text}

    def __call__(self, calls: Sequence[judging.JudgeCall]) -> list[dict[str, Any]]:
        return [self.answer(call) for call in calls]


def judge_from_environment(environ: Mapping[str, str], retries: int = 2) -> judging.StyledJudge:
    """The judge its own variables name; JudgeSetupError when the endpoint or the model is missing."""
    base_url, model = environ.get("AGENTX_JUDGE_BASE_URL", ""), environ.get("AGENTX_JUDGE_MODEL", "")
    if not base_url or not model:
        raise JudgeSetupError("set AGENTX_JUDGE_BASE_URL (an OpenAI-compatible endpoint, e.g. "
                              "https://api.openai.com/v1) and AGENTX_JUDGE_MODEL (the paper's judge: gpt-4o)")
    style = environ.get("AGENTX_JUDGE_STYLE") or judging.style_for_model(model)
    client = ChatJudge(base_url, model, environ.get("AGENTX_JUDGE_API_KEY", ""), retries)
    return judging.StyledJudge(client, judging.check_style(style))


def logged_records(paths: Sequence[Path]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(record, the logged document or None) of each Agent-X sample of the JSONL files, one per item id."""
    found: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line) if line.strip() else {}
            record = next((value for value in sample.values() if isinstance(value, dict)
                           and value.get("benchmark") == task.BENCHMARK and "id" in value), None)
            if record is not None:
                doc = sample.get("doc")
                found.setdefault(str(record["id"]), (record, doc if isinstance(doc, dict) else None))
    if not found:
        raise JudgeSetupError(f"no Agent-X sample record in {', '.join(map(str, paths))} (run with --log_samples)")
    return list(found.values())


def release_documents(path: Path) -> dict[str, dict[str, Any]]:
    """id -> document of a keyed `data.json` release (key -> a one-element list holding the record)."""
    entries = json.loads(path.read_text(encoding="utf-8"))
    rows = [{"id": str(key), **value[0]} for key, value in entries.items()]
    return {str(doc["id"]): doc for doc in task.documents(rows)}


def judged_record(record: dict[str, Any], doc: Mapping[str, Any] | None, judge: judging.Judge) -> dict[str, Any]:
    """The record with the judge's answers (unscored, `no_ground_truth`, without its document)."""
    if doc is None or "gt_steps_json" not in doc:
        answers = judging.unscored_results(str(record["id"]), NO_GROUND_TRUTH, "its document was not found (--data)",
                                           is_generative=metrics.is_generative(record))
    else:
        answers = task.judged(doc, record.get("prediction") or {}, judge)
    return {**record, "judge": answers}


def unscored_summary(records: Sequence[Mapping[str, Any]]) -> str:
    """One line: per judged metric, how many items are unscored and why ("" when every answer scored)."""
    reasons: dict[str, Counter[str]] = {}
    for record in records:
        for metric, answer in (record.get("judge") or {}).items():
            if answer.get("score") is None:
                reasons.setdefault(metric, Counter())[str(answer.get("unscored_reason"))] += 1
    parts = [f"{metric} {sum(c.values())}/{len(records)} ({', '.join(f'{r}: {n}' for r, n in c.most_common())})"
             for metric, c in reasons.items()]
    return f"WARNING: unscored judged metrics (left out of the means): {'; '.join(parts)}" if parts else ""


def summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The README columns' values and coverages (null where no item was scored)."""
    def value(name: str) -> float | None:
        number = metrics.aggregate(name, records)
        return None if math.isnan(number) else number

    return {"items": len(records),
            "metrics": {metric: value(metric) for _, metric in metrics.REPORTED_COLUMNS},
            "coverage": {metric: value(metrics.COVERAGE[metric]) for _, metric in metrics.REPORTED_COLUMNS}}


def table(result: Mapping[str, Any]) -> str:
    lines = [f"{'column':<10} {'metric':<12} {'value':>7} {'coverage':>9}"]
    for column, metric in metrics.REPORTED_COLUMNS:
        number, share = result["metrics"][metric], result["coverage"][metric]
        lines.append(f"{column:<10} {metric:<12} {'-' if number is None else f'{number:.4f}':>7} {share:>9.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("samples", nargs="+", type=Path, help="the run's --log_samples JSONL files of Agent-X tasks")
    parser.add_argument("--data", type=Path, help="the release's data.json (the ground truth)")
    parser.add_argument("--output", type=Path, default=Path("agentx_judged.json"))
    parser.add_argument("--workers", type=int, default=4, help="items judged at once")
    parser.add_argument("--retries", type=int, default=2, help="retries of a call on a transport or server error")
    args = parser.parse_args(argv)
    environ = os.environ if environ is None else environ
    try:
        judge = judge_from_environment(environ, args.retries)
        logged = logged_records(args.samples)
        released = release_documents(args.data) if args.data else {}
    except (JudgeSetupError, OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(max(1, args.workers)) as pool:
        records = list(pool.map(lambda item: judged_record(item[0], released.get(str(item[0]["id"]), item[1]), judge),
                                logged))
    result = {**summary(records), "judge": {"model": environ["AGENTX_JUDGE_MODEL"], "style": judge.style},
              "unscored": unscored_summary(records)}
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(table(result))
    if result["unscored"]:
        print(result["unscored"], file=sys.stderr)
    print(f"{len(records)} items; written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
