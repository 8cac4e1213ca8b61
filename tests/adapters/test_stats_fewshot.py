"""Statistics (accuracy, breakdowns, calibration error) and in-context example selection."""

from __future__ import annotations

import math

import pytest

from lmms_agentic.adapters import stats
from lmms_agentic.adapters.core import scores
from lmms_agentic.adapters.core.fewshot import choose_examples


def test_accuracy_counts_unanswered_as_wrong_and_nan_when_empty() -> None:
    items = [{"correct": True}, {"correct": False}, {"correct": False}, {"correct": True}]
    assert scores.accuracy(items) == 50.0
    assert math.isnan(scores.accuracy([]))
    assert math.isnan(scores.accuracy(items, where=lambda item: False))


def test_breakdown() -> None:
    items = [{"d": "x", "correct": True}, {"d": "x", "correct": False}, {"d": "y", "correct": True}]
    assert scores.breakdown(items, "d") == {"x": (50.0, 2), "y": (100.0, 1)}


@pytest.mark.parametrize(("confidences", "correct", "bin_size", "hle", "expected"), [
    ([1.0, 1.0], [True, True], 100, False, 0.0),
    ([1.0, 0.0], [False, True], 1, False, 100.0),
    ([0.8] * 10, [True] * 8 + [False] * 2, 100, False, 0.0),
    # two bins of 2: conf (0.2,0.4)->0.3 vs acc 0 ; (0.6,0.8)->0.7 vs acc 1 ; sqrt(.5*.09+.5*.09)=0.3
    ([0.8, 0.2, 0.6, 0.4], [True, False, True, False], 2, False, 30.0),
    # hle_compat drops the last bin: sqrt(.5*.09) = 0.2121
    ([0.8, 0.2, 0.6, 0.4], [True, False, True, False], 2, True, 100 * math.sqrt(0.045)),
    # remainder joins the last bin: 5 items, bin 2 -> bins [2, 3]
    ([0.1, 0.2, 0.9, 0.9, 0.9], [False, False, True, True, False], 2, False,
     100 * math.sqrt(0.4 * 0.15**2 + 0.6 * (0.9 - 2 / 3) ** 2)),
], ids=["perfect", "worst", "flat", "two-bins", "hle-skips-last", "remainder"])
def test_calibration_error(confidences: list[float], correct: list[bool], bin_size: int, hle: bool,
                           expected: float) -> None:
    assert scores.calibration_error(confidences, correct, bin_size, hle) == pytest.approx(expected)


def test_calibration_error_bins_for_474_items() -> None:
    """N=474 gives bins of 100, 100, 100, 174; the HLE loop uses only the first 300 items."""
    confidences = [i / 474 for i in range(474)]
    correct = [True] * 474
    full = scores.calibration_error(confidences, correct)
    bins = [range(0, 100), range(100, 200), range(200, 300), range(300, 474)]
    expected = math.sqrt(sum(len(b) / 474 * (sum(confidences[i] for i in b) / len(b) - 1) ** 2 for b in bins))
    assert full == pytest.approx(100 * expected)
    hle = scores.calibration_error(confidences, correct, hle_compat=True)
    assert hle == pytest.approx(100 * math.sqrt(sum(len(b) / 474 * (sum(confidences[i] for i in b) / len(b) - 1) ** 2
                                                    for b in bins[:3])))
    assert math.isnan(scores.calibration_error([], []))


def test_calibration_error_rejects_mismatched_inputs() -> None:
    with pytest.raises(ValueError, match="2 confidences but 1"):
        scores.calibration_error([0.1, 0.2], [True])


def test_examples_share_the_key_and_are_never_the_item_itself() -> None:
    ids = [f"q{i}" for i in range(12)]
    keys = ["a"] * 5 + ["b"] * 6 + ["c"]
    chosen = choose_examples(ids, keys, seed=0)
    for index, example in enumerate(chosen):
        if keys[index] == "c":
            assert example is None
        else:
            assert example is not None and example != index and keys[example] == keys[index]


def test_examples_are_deterministic_and_independent_of_row_order() -> None:
    ids = [f"q{i}" for i in range(30)]
    keys = [i % 3 for i in range(30)]
    first = choose_examples(ids, keys, seed=3)
    assert first == choose_examples(ids, keys, seed=3)
    order = list(reversed(range(30)))
    reversed_choice = choose_examples([ids[i] for i in order], [keys[i] for i in order], seed=3)
    as_ids = {ids[i]: ids[c] for i, c in enumerate(first) if c is not None}
    assert {ids[order[i]]: ids[order[c]] for i, c in enumerate(reversed_choice) if c is not None} == as_ids
    assert first != choose_examples(ids, keys, seed=4)


def test_examples_reject_duplicate_ids() -> None:
    with pytest.raises(ValueError, match="unique"):
        choose_examples(["a", "a"], [1, 1], seed=0)


def test_bootstrap_ci_brackets_the_estimate_and_is_deterministic() -> None:
    items = [{"correct": i % 3 == 0, "g": i // 4} for i in range(120)]
    low, high = stats.bootstrap_ci(items, scores.accuracy, n_boot=500)
    assert low < scores.accuracy(items) < high and (low, high) == stats.bootstrap_ci(items, scores.accuracy, n_boot=500)
    assert all(math.isnan(v) for v in stats.bootstrap_ci([], scores.accuracy))


def test_clustered_interval_is_wider_for_perfectly_correlated_rows() -> None:
    # 30 questions x 5 identical permutation rows: clustering must not pretend there are 150 independent items
    items = [{"correct": q % 2 == 0, "group_id": q} for q in range(30) for _ in range(5)]
    naive = stats.bootstrap_ci(items, scores.accuracy, n_boot=800)
    clustered = stats.bootstrap_ci(items, scores.accuracy, "group_id", n_boot=800)
    assert clustered[1] - clustered[0] > 1.8 * (naive[1] - naive[0])


def test_paired_comparison() -> None:
    a = [{"id": i, "correct": i < 50} for i in range(100)]
    b = [{"id": i, "correct": i < 60} for i in range(100)] + [{"id": 999, "correct": True}]
    result = stats.paired_comparison(a, b, n_boot=500)
    assert (result["n_common"], result["only_in_b"], result["acc_a"], result["acc_b"]) == (100, 1, 50.0, 60.0)
    assert result["diff"] == 10.0 and result["b_only_correct"] == 10 and result["a_only_correct"] == 0
    assert result["mcnemar_p"] == pytest.approx(2 * 0.5**10)
    assert result["diff_ci95"][0] > 0
