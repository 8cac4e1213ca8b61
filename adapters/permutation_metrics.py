"""Option-permutation robustness metrics over payloads gathered from all ranks.

Every payload of a permutation task carries `group_id`, `perm_index` (0 = original order), `correct`, `pred`
(the letter, or None), `answer` (the gold letter in that row) and `chosen` (the *original* option index the
predicted letter points to, or None). Rows of one question may have been scored on different ranks; all
metrics are functions of the gathered multiset, so 1 and N processes give identical numbers.

- `orig_acc`          accuracy in the original order (perm_index 0)
- `perm_mean_acc`     mean over permutation indices of the accuracy under that permutation
- `perm_std_acc`      sample standard deviation of those accuracies (AgentVQA App. F reports ~1.9)
- `circular_acc`      share of questions answered correctly under every permutation (MMBench CircularEval)
- `consistency`       share of questions where the same option *content* was chosen under every permutation
- `flip_rate`         share of non-original rows whose chosen content differs from the original row's choice
                      (no answer counts as a choice of its own)
- `letter_bias_p`     chi-square p-value of predicted-letter counts against the gold-letter distribution
- `max_letter_excess` the largest (predicted share - gold share) over letters, in points
- `excess_<L>`        predicted share - gold share of letter L, in points (the letter-bias table)
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.schema import LETTERS

Items = Sequence[Mapping[str, Any]]
NAN = float("nan")


def _groups(items: Items) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for item in items:
        groups[str(item["group_id"])].append(item)
    return groups


def _accuracy_by_permutation(items: Items) -> list[float]:
    by_index: dict[int, list[bool]] = defaultdict(list)
    for item in items:
        by_index[int(item["perm_index"])].append(bool(item["correct"]))
    return [100.0 * sum(v) / len(v) for _, v in sorted(by_index.items())]


def orig_acc(items: Items) -> float:
    original = [bool(item["correct"]) for item in items if int(item["perm_index"]) == 0]
    return 100.0 * sum(original) / len(original) if original else NAN


def perm_mean_acc(items: Items) -> float:
    accuracies = _accuracy_by_permutation(items)
    return statistics.fmean(accuracies) if accuracies else NAN


def perm_std_acc(items: Items) -> float:
    accuracies = _accuracy_by_permutation(items)
    return statistics.stdev(accuracies) if len(accuracies) > 1 else NAN


def circular_acc(items: Items) -> float:
    groups = _groups(items)
    if not groups:
        return NAN
    return 100.0 * sum(all(bool(i["correct"]) for i in rows) for rows in groups.values()) / len(groups)


def consistency(items: Items) -> float:
    groups = _groups(items)
    if not groups:
        return NAN
    same = sum(len({i["chosen"] for i in rows}) == 1 and rows[0]["chosen"] is not None for rows in groups.values())
    return 100.0 * same / len(groups)


def flip_rate(items: Items) -> float:
    flips = total = 0
    for rows in _groups(items).values():
        original = [i for i in rows if int(i["perm_index"]) == 0]
        if not original:
            continue
        for row in rows:
            if int(row["perm_index"]) != 0:
                total += 1
                flips += row["chosen"] != original[0]["chosen"]
    return 100.0 * flips / total if total else NAN


def letter_shares(items: Items) -> tuple[dict[str, float], dict[str, float]]:
    """(predicted share, gold share) per gold letter, in percent; predictions of other letters are ignored."""
    gold = Counter(str(i["answer"]) for i in items)
    predicted = Counter(str(i["pred"]) for i in items if i["pred"] in gold)
    n_gold, n_pred = sum(gold.values()), sum(predicted.values())
    letters = sorted(gold)
    return ({k: 100.0 * predicted[k] / n_pred if n_pred else NAN for k in letters},
            {k: 100.0 * gold[k] / n_gold for k in letters})


def letter_bias_p(items: Items) -> float:
    from scipy.stats import chisquare

    gold = Counter(str(i["answer"]) for i in items)
    predicted = Counter(str(i["pred"]) for i in items if i["pred"] in gold)
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


def _excess(letter: str) -> Callable[[Items], float]:
    def aggregate(items: Items) -> float:
        predicted, gold = letter_shares(items)
        return predicted[letter] - gold[letter] if letter in gold else NAN

    aggregate.__name__ = f"excess_{letter}"
    aggregate.__doc__ = f"Predicted share minus gold share of letter {letter}, in points (NaN if never gold)."
    return aggregate


EXCESS = {f"excess_{letter}": _excess(letter) for letter in LETTERS}
METRICS = ("orig_acc", "perm_mean_acc", "perm_std_acc", "circular_acc", "consistency", "flip_rate",
           "letter_bias_p", "max_letter_excess")
LOWER_IS_BETTER = {"perm_std_acc", "flip_rate", "max_letter_excess"}


def metric_names(n_options: int) -> tuple[str, ...]:
    return (*METRICS, *(f"excess_{letter}" for letter in LETTERS[:n_options]))


def __getattr__(name: str) -> Callable[[Items], float]:
    """Resolves `aggregation: !function lmms_agentic.adapters.robustness.excess_<L>` references."""
    try:
        return EXCESS[name]
    except KeyError:
        raise AttributeError(f"{__name__} has no attribute {name!r}") from None
