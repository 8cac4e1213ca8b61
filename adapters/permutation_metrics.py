"""Option-permutation metrics: per-row views and aggregations over the rows gathered from all ranks.

A permutation task asks each question under k option orders (`adapters.permutation`). Every metric below is a
function of the gathered multiset of rows, so 1 and N processes give identical numbers. All use the strict
extractor's letter (`pred`, `correct` in the sample record; see `adapters.samples`), never a parser whose last
resort prefers "A". Question-level metrics weigh every question the same, whatever its number of orders (a
5-option question has 5 rotations under `circular`, a 4-option one 4):

- `orig_acc`         accuracy in the original order (each question's order 0).
- `perm_mean_acc`    mean over questions of the question's accuracy over its orders. An always-"A" model under
                     `circular` scores exactly the mean over questions of 1 / (shown options).
- `perm_std_acc`     sample standard deviation over permutation *runs*: run j shows question q in its order
                     `j mod k_q`, for j < L = lcm of the k_q, so every order of every question appears equally often
                     and each question weighs the same in every run. With equal order counts (AgentVQA's `perm5`)
                     these are exactly the paper's 5 runs (App. F reports a std of about 1.9 points).
- `circular_acc`     share of questions answered correctly under every order (MMBench CircularEval).
- `consistency`      share of questions where the same option *content* was chosen under every order.
- `flip_rate`        mean over questions of the share of their non-original orders whose chosen content differs
                     from the original order's choice (no answer counts as a choice of its own).
- `letter_bias_p`    chi-square p-value of predicted-letter counts against the gold-letter distribution.
- `max_letter_excess` the largest (predicted share - gold share) over letters, in points.
- `excess_<L>`       predicted share - gold share of letter L, in points (the letter-bias table).

Views (what each metric receives per row): `perm_mean_acc` (the first metric) gets the full record; `orig_acc` is
returned only for order-0 rows and last, so lmms-eval's subtask size (`samples`) is the number of questions and a
group's size-weighted mean of a question-level metric equals the exact pooled value.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from lmms_agentic.adapters.core.schema import LETTERS

Items = Sequence[Mapping[str, Any] | None]
NAN = float("nan")
METRICS = ("perm_mean_acc", "perm_std_acc", "circular_acc", "consistency", "flip_rate", "letter_bias_p",
           "max_letter_excess")
LOWER_IS_BETTER = frozenset({"perm_std_acc", "flip_rate", "max_letter_excess"})
GROUP_METRICS = ("orig_acc", "perm_mean_acc", "circular_acc", "consistency", "flip_rate")
"""Question-level means: a group's size-weighted mean of them is the exact pooled value."""


def metric_names(n_options: int) -> tuple[str, ...]:
    """The metrics of a permutation task, in the order its `process_results` returns them (`loop_rate` and
    `truncation_rate`, plain means of every row, are reported by every task; see `adapters.samples`)."""
    return (*METRICS, *(f"excess_{letter}" for letter in LETTERS[:n_options]), "loop_rate", "truncation_rate",
            "orig_acc")


def views(record: Mapping[str, Any]) -> dict[str, Any]:
    """The per-row values of every permutation metric (see the module docstring)."""
    letters = {"pred": record["pred"], "answer": record["answer"]}
    out: dict[str, Any] = {
        "perm_mean_acc": dict(record),
        "perm_std_acc": {"group_id": record["group_id"], "perm_index": record["perm_index"],
                         "correct": bool(record["correct"])},
        "circular_acc": {"group_id": record["group_id"], "correct": bool(record["correct"])},
        "consistency": {"group_id": record["group_id"], "chosen": record["chosen"]},
        "flip_rate": {"group_id": record["group_id"], "perm_index": record["perm_index"], "chosen": record["chosen"]},
        "letter_bias_p": letters,
        "max_letter_excess": letters,
    }
    out.update({f"excess_{letter}": letters for letter in LETTERS[: len(record["permutation"])]})
    loop = record["loop"]
    out.update(loop_rate={"score": 100.0 if loop["loop"] else 0.0},
               truncation_rate={"score": 100.0 if loop["truncated"] else 0.0})
    if int(record["perm_index"]) == 0:
        out["orig_acc"] = {"score": 100.0 if record["correct"] else 0.0}
    return out


def _rows(items: Items) -> list[Mapping[str, Any]]:
    return [item for item in items if item is not None]


def _questions(items: Items) -> dict[str, list[Mapping[str, Any]]]:
    """Rows per question, each question's rows in order of `perm_index` when present."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for item in _rows(items):
        groups[str(item["group_id"])].append(item)
    return {q: sorted(rows, key=lambda r: int(r.get("perm_index", 0))) for q, rows in groups.items()}


def _percent(parts: Sequence[Fraction]) -> float:
    """100 x the mean of exact fractions, rounded once (no accumulated float error: 1/5 of 100 prints as 20.0)."""
    return float(100 * sum(parts, Fraction(0)) / len(parts)) if parts else NAN


def _share(rows: Sequence[Mapping[str, Any]], key: str) -> Fraction:
    return Fraction(sum(bool(r[key]) for r in rows), len(rows))


def _percent_of_questions(items: Items, holds: Any) -> float:
    return _percent([Fraction(int(bool(holds(rows)))) for rows in _questions(items).values()])


def orig_acc(items: Items) -> float:
    return _percent([Fraction(int(float(item["score"]) > 0)) for item in _rows(items)])


def perm_mean_acc(items: Items) -> float:
    return _percent([_share(rows, "correct") for rows in _questions(items).values()])


def run_accuracies(items: Items) -> list[Fraction]:
    """Exact accuracy (percent) of each permutation run j < lcm of the order counts (see the module docstring)."""
    groups = list(_questions(items).values())
    if not groups:
        return []
    runs = math.lcm(*(len(rows) for rows in groups))
    return [100 * Fraction(sum(bool(rows[j % len(rows)]["correct"]) for rows in groups), len(groups))
            for j in range(runs)]


def perm_std_acc(items: Items) -> float:
    runs = run_accuracies(items)
    return float(statistics.stdev(runs)) if len(runs) > 1 else NAN


def circular_acc(items: Items) -> float:
    return _percent_of_questions(items, lambda rows: all(bool(r["correct"]) for r in rows))


def consistency(items: Items) -> float:
    return _percent_of_questions(items, lambda rows: len({r["chosen"] for r in rows}) == 1
                                 and rows[0]["chosen"] is not None)


def flip_rate(items: Items) -> float:
    shares = []
    for rows in _questions(items).values():
        original = [r for r in rows if int(r["perm_index"]) == 0]
        others = [r for r in rows if int(r["perm_index"]) != 0]
        if original and others:
            shares.append(Fraction(sum(r["chosen"] != original[0]["chosen"] for r in others), len(others)))
    return _percent(shares)


def letter_shares(items: Items) -> tuple[dict[str, float], dict[str, float]]:
    """(predicted share, gold share) per gold letter, in percent; predictions of other letters are ignored."""
    rows = _rows(items)
    gold = Counter(str(i["answer"]) for i in rows)
    predicted = Counter(str(i["pred"]) for i in rows if i["pred"] in gold)
    n_gold, n_pred = sum(gold.values()), sum(predicted.values())
    letters = sorted(gold)
    return ({k: 100.0 * predicted[k] / n_pred if n_pred else NAN for k in letters},
            {k: 100.0 * gold[k] / n_gold for k in letters})


def letter_bias_p(items: Items) -> float:
    from scipy.stats import chisquare

    rows = _rows(items)
    gold = Counter(str(i["answer"]) for i in rows)
    predicted = Counter(str(i["pred"]) for i in rows if i["pred"] in gold)
    n_pred = sum(predicted.values())
    if n_pred == 0 or len(gold) < 2:
        return NAN
    letters = sorted(gold)
    expected = [n_pred * gold[k] / sum(gold.values()) for k in letters]
    return float(chisquare([predicted[k] for k in letters], expected).pvalue)


def max_letter_excess(items: Items) -> float:
    predicted, gold = letter_shares(items)
    excesses = [predicted[k] - gold[k] for k in gold if not math.isnan(predicted[k])]
    return max(excesses) if excesses else NAN


def letter_excess(items: Items, letter: str) -> float:
    """Predicted share minus gold share of `letter`, in points (NaN if it is never the gold letter)."""
    predicted, gold = letter_shares(items)
    return predicted[letter] - gold[letter] if letter in gold else NAN


def excess_A(items: Items) -> float:
    return letter_excess(items, "A")


def excess_B(items: Items) -> float:
    return letter_excess(items, "B")


def excess_C(items: Items) -> float:
    return letter_excess(items, "C")


def excess_D(items: Items) -> float:
    return letter_excess(items, "D")


def excess_E(items: Items) -> float:
    return letter_excess(items, "E")


def excess_F(items: Items) -> float:
    return letter_excess(items, "F")


def excess_G(items: Items) -> float:
    return letter_excess(items, "G")


def excess_H(items: Items) -> float:
    return letter_excess(items, "H")


def excess_I(items: Items) -> float:
    return letter_excess(items, "I")


def excess_J(items: Items) -> float:
    return letter_excess(items, "J")
