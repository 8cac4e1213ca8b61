"""Agreement between two judge runs on the same predictions, and whether a model ranking changes.

Owns: reading judged scores out of logged samples (lmms-eval ``*_samples_<task>.jsonl`` lines or plain dicts),
per-metric agreement (exact-match rate, Spearman rho via ``scipy.stats.spearmanr``, mean absolute difference,
number of pairs, items only in one run, unscored counts) and the ranking comparison.  CLI::

    python -m lmms_agentic.judges.agreement A.jsonl B.jsonl [--id-key item_id] [--metric M ...] [--json]
    python -m lmms_agentic.judges.agreement --ranking scores_judge_a.json scores_judge_b.json

Reading samples: a sample is a dict; every value that is a dict with a ``score`` key (a ``JudgeResult.as_dict()``
payload) is a metric named by its key, and each of its ``dimensions`` becomes ``<metric>/<dimension>``; an
unscored payload counts as unscored, never as 0.  Plain numeric values are metrics too, except lmms-eval's own
fields (``doc_id`` ...).  The item id is the payload's ``id_key`` (default ``item_id``), else the sample's, else
``doc_id`` (unstable across dataset revisions: prefer the project's own id).  Instead of a list, a dict
``{item_id: sample}`` may be given.  A pair needs the item scored in both runs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

__all__ = [
    "MetricAgreement",
    "RankingComparison",
    "compare_rankings",
    "compare_runs",
    "load_samples",
    "main",
    "scores_from_samples",
]

Scores = dict[str, dict[str, float | None]]  # metric -> item id -> score (None = unscored)
_HOST_FIELDS = frozenset({"doc_id", "doc_hash", "target", "input", "filtered_resps", "resps", "token_counts",
                          "input_media", "arguments", "doc"})


def load_samples(path: Path | str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (blank lines skipped)."""
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{n}: not a JSON object")
            rows.append(row)
    return rows


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def scores_from_samples(samples: Iterable[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]], *,
                        id_key: str = "item_id") -> Scores:
    """metric -> item id -> score (None when unscored); see the module docstring for the rules."""
    pairs: list[tuple[str | None, Mapping[str, Any]]] = (
        [(str(k), v) for k, v in samples.items()] if isinstance(samples, Mapping) else [(None, s) for s in samples]
    )
    scores: Scores = {}
    for given_id, sample in pairs:
        base_id = given_id or sample.get(id_key) or sample.get("doc_id")
        for key, value in sample.items():
            if key in _HOST_FIELDS or key == id_key:
                continue
            if isinstance(value, Mapping) and "score" in value:
                item = str(given_id or value.get(id_key) or base_id)
                unscored = value.get("unscored_reason") is not None
                scores.setdefault(key, {})[item] = None if unscored else _number(value.get("score"))
                for dim, dim_value in (value.get("dimensions") or {}).items():
                    scores.setdefault(f"{key}/{dim}", {})[item] = None if unscored else _number(dim_value)
            elif _number(value) is not None and base_id is not None:
                scores.setdefault(key, {})[str(base_id)] = _number(value)
    return scores


@dataclass(frozen=True)
class MetricAgreement:
    """Agreement of one metric between run A and run B."""

    metric: str
    n_pairs: int
    """Items scored in both runs."""
    exact_match: float
    """Share of pairs with equal scores (NaN without pairs)."""
    spearman_rho: float
    """Spearman rank correlation over the pairs (NaN with < 2 pairs or constant scores)."""
    spearman_p: float
    mean_abs_diff: float
    only_in_a: int
    only_in_b: int
    unscored_in_a: int
    """Items present in both runs but unscored in A."""
    unscored_in_b: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    if len(x) < 2:
        return math.nan, math.nan
    from scipy.stats import spearmanr  # heavy import, only when needed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = spearmanr(x, y)
    return float(result.statistic), float(result.pvalue)


def compare_runs(a: Any, b: Any, *, id_key: str = "item_id", metrics: Sequence[str] | None = None,
                 tolerance: float = 1e-9) -> dict[str, MetricAgreement]:
    """Per-metric agreement of two runs: samples lists/dicts (as in ``scores_from_samples``) or JSONL paths."""
    runs = []
    for run in (a, b):
        if isinstance(run, (str, Path)):
            run = load_samples(run)
        runs.append(scores_from_samples(run, id_key=id_key))
    sa, sb = runs
    names = list(metrics) if metrics is not None else sorted(set(sa) | set(sb))
    out: dict[str, MetricAgreement] = {}
    for name in names:
        ma, mb = sa.get(name, {}), sb.get(name, {})
        common = sorted(set(ma) & set(mb))
        pairs = [(ma[i], mb[i]) for i in common if ma[i] is not None and mb[i] is not None]
        xs = [float(p[0]) for p in pairs if p[0] is not None]
        ys = [float(p[1]) for p in pairs if p[1] is not None]
        rho, p = _spearman(xs, ys)
        n = len(xs)
        out[name] = MetricAgreement(
            metric=name, n_pairs=n,
            exact_match=sum(abs(x - y) <= tolerance for x, y in zip(xs, ys, strict=True)) / n if n else math.nan,
            spearman_rho=rho, spearman_p=p,
            mean_abs_diff=sum(abs(x - y) for x, y in zip(xs, ys, strict=True)) / n if n else math.nan,
            only_in_a=len(set(ma) - set(mb)), only_in_b=len(set(mb) - set(ma)),
            unscored_in_a=sum(ma[i] is None for i in common), unscored_in_b=sum(mb[i] is None for i in common),
        )
    return out


@dataclass(frozen=True)
class RankingComparison:
    """Model orders under judge A and judge B (best first, ties broken by name)."""

    order_a: list[str]
    order_b: list[str]
    changed: bool
    """True when some pair of models is ordered differently (including tie vs. no tie)."""
    swapped_pairs: list[tuple[str, str]] = field(default_factory=list)
    kendall_tau: float = math.nan
    models_only_in_one: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_rankings(scores_a: Mapping[str, float], scores_b: Mapping[str, float]) -> RankingComparison:
    """Does the model ranking change between two judges?  Models present under one judge only are listed."""
    common = sorted(set(scores_a) & set(scores_b))

    def order(scores: Mapping[str, float]) -> list[str]:
        return sorted(common, key=lambda m: (-float(scores[m]), m))

    def sign(x: float) -> int:
        return (x > 0) - (x < 0)

    swapped = [(m1, m2) for m1, m2 in combinations(common, 2)
               if sign(scores_a[m1] - scores_a[m2]) != sign(scores_b[m1] - scores_b[m2])]
    tau = math.nan
    if len(common) >= 2:
        from scipy.stats import kendalltau

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tau = float(kendalltau([scores_a[m] for m in common], [scores_b[m] for m in common]).statistic)
    return RankingComparison(order(scores_a), order(scores_b), bool(swapped), swapped, tau,
                             sorted(set(scores_a) ^ set(scores_b)))


def _fmt(x: float) -> str:
    return "nan" if math.isnan(x) else f"{x:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmms_agentic.judges.agreement",
                                     description="Agreement between two judge runs; ranking stability.")
    parser.add_argument("runs", nargs="*", type=Path, help="two samples files (JSONL) judged by A and by B")
    parser.add_argument("--id-key", default="item_id", help="item id field in the payloads (default item_id)")
    parser.add_argument("--metric", action="append", help="only these metrics (repeatable)")
    parser.add_argument("--ranking", nargs=2, type=Path, metavar=("A.json", "B.json"),
                        help='per-model scores under each judge, {"model": score, ...}')
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    if len(args.runs) not in (0, 2) or (not args.runs and not args.ranking):
        parser.error("give two samples files, and/or --ranking A.json B.json")
    report: dict[str, Any] = {}
    if args.runs:
        agreement = compare_runs(args.runs[0], args.runs[1], id_key=args.id_key, metrics=args.metric)
        report["metrics"] = {k: v.as_dict() for k, v in agreement.items()}
    if args.ranking:
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in args.ranking)
        report["ranking"] = compare_rankings(a, b).as_dict()
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return 0
    if "metrics" in report:
        print(f"{'metric':<32} {'pairs':>6} {'exact':>7} {'rho':>7} {'|diff|':>7} {'onlyA':>6} {'onlyB':>6} "
              f"{'unscA':>6} {'unscB':>6}")
        for m in report["metrics"].values():
            print(f"{m['metric']:<32} {m['n_pairs']:>6} {_fmt(m['exact_match']):>7} {_fmt(m['spearman_rho']):>7} "
                  f"{_fmt(m['mean_abs_diff']):>7} {m['only_in_a']:>6} {m['only_in_b']:>6} "
                  f"{m['unscored_in_a']:>6} {m['unscored_in_b']:>6}")
    if "ranking" in report:
        r = report["ranking"]
        print(f"ranking A: {' > '.join(r['order_a'])}\nranking B: {' > '.join(r['order_b'])}")
        print(f"ranking changed: {r['changed']} (Kendall tau {_fmt(r['kendall_tau'])}); swapped: {r['swapped_pairs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
