"""Agreement between the judge's error modes and hand-verified labels (``verify.csv`` written by ``errors``).

A verifier fills ``verified_mode`` with one of the row's ``allowed_modes`` (the key or the display name, any case:
"Grounding Error" = ``grounding_error``); rows left blank are not verified and only counted.  A label that is not
among the row's modes stops the command with the row number, so a typo never counts as a disagreement.

Reported: n, accuracy (exact agreement, %, with a Wilson 95% interval), Cohen's kappa over the pooled labels (with a
95% percentile bootstrap interval over rows, seed 0), accuracy per variant and domain, and the most frequent
disagreements (judge -> verifier).
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmms_agentic.adapters.stats import bootstrap_ci
from lmms_agentic.judges.error_modes import slug

from .output import wilson


class VerificationError(ValueError):
    """A verified label is not one of its row's modes, or a column is missing."""


@dataclass(frozen=True)
class Pair:
    variant: str
    domain: str
    judge: str
    human: str


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float:
    """Cohen's kappa of two raters over ``(a, b)`` label pairs; NaN without pairs, 1.0 when both use one label."""
    n = len(pairs)
    if n == 0:
        return math.nan
    observed = sum(a == b for a, b in pairs) / n
    count_a, count_b = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(count_a[k] * count_b[k] for k in set(count_a) | set(count_b)) / (n * n)
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else math.nan
    return (observed - expected) / (1 - expected)


def read_verified(path: Path) -> tuple[list[Pair], int]:
    """(verified pairs, rows left blank) of a filled ``verify.csv``."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"judge_mode", "verified_mode", "allowed_modes"} - set(reader.fieldnames or ())
        if missing:
            raise VerificationError(f"{path}: columns {sorted(missing)} are missing (expected the verify.csv that "
                                    "`errors` writes)")
        pairs, blank = [], 0
        for number, row in enumerate(reader, 2):
            label = (row.get("verified_mode") or "").strip()
            if not label:
                blank += 1
                continue
            allowed = [m.strip() for m in (row.get("allowed_modes") or "").split("|") if m.strip()]
            human = slug(label)
            if human not in allowed:
                raise VerificationError(f"{path}, line {number}: verified_mode {label!r} is not one of this row's "
                                        f"modes ({', '.join(allowed)})")
            pairs.append(Pair(row.get("variant", ""), row.get("domain", ""), slug(row["judge_mode"]), human))
    return pairs, blank


def agreement(pairs: Sequence[Pair], blank: int = 0) -> dict[str, Any]:
    """Accuracy, kappa (with intervals), per-variant/domain accuracy and the top disagreements."""
    def kappa_of(rows: Sequence[Mapping[str, Any]]) -> float:
        return cohen_kappa([(r["judge"], r["human"]) for r in rows])

    agree = sum(p.judge == p.human for p in pairs)
    rows = [{"judge": p.judge, "human": p.human} for p in pairs]
    kappa_ci = bootstrap_ci(rows, kappa_of, n_boot=1000) if pairs else (math.nan, math.nan)
    groups: dict[str, list[Pair]] = {}
    for p in pairs:
        groups.setdefault(f"{p.variant} / {p.domain}", []).append(p)
    confusions = Counter((p.judge, p.human) for p in pairs if p.judge != p.human)
    return {
        "n": len(pairs), "not_verified": blank, "agree": agree,
        "accuracy": 100 * agree / len(pairs) if pairs else math.nan,
        "accuracy_ci95": list(wilson(agree, len(pairs))),
        "kappa": cohen_kappa([(p.judge, p.human) for p in pairs]), "kappa_ci95": list(kappa_ci),
        "by_group": {k: {"n": len(v), "accuracy": 100 * sum(p.judge == p.human for p in v) / len(v)}
                     for k, v in sorted(groups.items())},
        "disagreements": [{"judge": j, "verified": h, "count": c} for (j, h), c in confusions.most_common(10)],
    }


def _f(value: float, digits: int = 1) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"


def render(report: Mapping[str, Any], source: Path) -> str:
    low, high = report["accuracy_ci95"]
    k_low, k_high = report["kappa_ci95"]
    lines = [f"Judge vs verified error modes ({source})", "",
             f"- verified rows: {report['n']} (left blank: {report['not_verified']})",
             f"- accuracy (exact agreement): {_f(report['accuracy'])}% [{_f(low)}, {_f(high)}] "
             f"({report['agree']}/{report['n']})",
             f"- Cohen's kappa: {_f(report['kappa'], 3)} [{_f(k_low, 3)}, {_f(k_high, 3)}] (95% bootstrap)", "",
             "| variant / domain | n | accuracy % |", "|---|---:|---:|"]
    lines += [f"| {k} | {v['n']} | {_f(v['accuracy'])} |" for k, v in report["by_group"].items()]
    if report["disagreements"]:
        lines += ["", "Most frequent disagreements (judge -> verified):"]
        lines += [f"- {d['judge']} -> {d['verified']}: {d['count']}" for d in report["disagreements"]]
    return "\n".join(lines)


def run_agreement(path: Path, json_out: Path | None = None) -> str:
    """Read a filled ``verify.csv``, print-ready text; optionally the numbers as JSON."""
    pairs, blank = read_verified(path)
    if not pairs:
        raise VerificationError(f"{path}: no row has a verified_mode yet (fill that column, then rerun)")
    report = agreement(pairs, blank)
    if json_out is not None:
        json_out.write_text(json.dumps(report, indent=2, default=float) + "\n", encoding="utf-8")
    return render(report, path)
