"""Permutation engine and robustness metrics (table-driven; metrics checked against hand-computed values)."""

from __future__ import annotations

import json
import math
from typing import Any

import datasets
import pytest

from lmms_agentic.adapters import permutation, permutation_metrics


@pytest.mark.parametrize(("mode", "expected"), [("circular", ("circular", None)), ("perm5", ("perm", 5)),
                                                ("perm2", ("perm", 2))])
def test_parse_mode(mode: str, expected: tuple[str, int | None]) -> None:
    assert permutation.parse_mode(mode) == expected


@pytest.mark.parametrize("mode", ["perm1", "perm", "circ", "shuffle5"])
def test_parse_mode_rejects(mode: str) -> None:
    with pytest.raises(ValueError, match="circular"):
        permutation.parse_mode(mode)


def test_circular_is_every_rotation_identity_first() -> None:
    assert permutation.slot_permutations(4, "circular", "q") == [(0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2)]


def test_seeded_permutations_are_stable_distinct_and_include_identity() -> None:
    first = permutation.slot_permutations(4, "perm5", "q1", seed=0)
    assert first[0] == (0, 1, 2, 3) and len(set(first)) == 5
    assert first == permutation.slot_permutations(4, "perm5", "q1", seed=0)  # same on every call/process
    assert first != permutation.slot_permutations(4, "perm5", "q2", seed=0)
    assert first != permutation.slot_permutations(4, "perm5", "q1", seed=1)
    # recorded value: a change of algorithm must be deliberate (it changes every published permutation run)
    assert first == [(0, 1, 2, 3), (2, 0, 1, 3), (2, 1, 3, 0), (1, 3, 2, 0), (3, 0, 1, 2)]


def test_fewer_orders_than_asked_uses_all_of_them() -> None:
    assert permutation.slot_permutations(2, "perm5", "q") == [(0, 1), (1, 0)]


def test_empty_slots_stay_in_place() -> None:
    options = ["a", "b", "", "d"]
    assert permutation.full_permutation(options, (1, 2, 0)) == (1, 3, 2, 0)


def _docs() -> datasets.Dataset:
    rows = [{"id": "q1", "options": ["w", "x", "y", "z"], "gold_index": 2, "answer": "C",
             "metadata_json": json.dumps({"option_fields": ["coords"], "coords": [[1, 1], [2, 2], [3, 3], None]}),
             "question": "?", "images": [1, 2]},
            {"id": "q2", "options": ["p", "q"], "gold_index": 0, "answer": "A", "metadata_json": "{}",
             "question": "?", "images": [3]}]
    return datasets.Dataset.from_list(rows)


def test_expand_remaps_gold_and_per_option_metadata() -> None:
    out = permutation.expand(_docs(), "circular").to_list()
    q1 = [r for r in out if r["group_id"] == "q1"]
    assert [r["perm_index"] for r in q1] == [0, 1, 2, 3]
    for row in q1:
        assert row["options"][row["gold_index"]] == "y" and row["answer"] == "ABCD"[row["gold_index"]]
        coords = json.loads(row["metadata_json"])["coords"]
        assert coords == [[[1, 1], [2, 2], [3, 3], None][p] for p in row["permutation"]]
        assert row["images"] == [1, 2] and row["id"] == f"q1~circular{row['perm_index']}"
    assert len([r for r in out if r["group_id"] == "q2"]) == 2  # two options: two rotations only


def test_original_choice() -> None:
    assert permutation.original_choice("B", [2, 0, 1, 3]) == 0
    assert permutation.original_choice(None, [0, 1]) is None


def _rows(spec: list[tuple[str, int, str | None, str, int | None, bool]]) -> list[dict[str, Any]]:
    return [{"group_id": g, "perm_index": j, "pred": pred, "answer": gold, "chosen": chosen, "correct": ok,
             "permutation": [0, 1, 2], "loop": NO_LOOP} for g, j, pred, gold, chosen, ok in spec]


NO_LOOP = {"loop": False, "truncated": False}


def _aggregate(metric: str, rows: list[dict[str, Any]]) -> float:
    """What lmms-eval does: collect each row's view of `metric` (rows that return none are absent), aggregate."""
    items = [permutation_metrics.views(row)[metric] for row in rows if metric in permutation_metrics.views(row)]
    return float(getattr(permutation_metrics, metric)(items))


# two questions, three permutations each; the model always answers "A"
ALWAYS_A = _rows([
    ("q1", 0, "A", "A", 0, True), ("q1", 1, "A", "C", 1, False), ("q1", 2, "A", "B", 2, False),
    ("q2", 0, "A", "B", 0, False), ("q2", 1, "A", "A", 1, True), ("q2", 2, "A", "C", 2, False),
])
# a robust model: right every time on q1, consistently wrong content on q2, no answer once
ROBUST = _rows([
    ("q1", 0, "A", "A", 0, True), ("q1", 1, "C", "C", 0, True), ("q1", 2, "B", "B", 0, True),
    ("q2", 0, "C", "B", 2, False), ("q2", 1, "B", "A", 2, False), ("q2", 2, None, "C", None, False),
])


@pytest.mark.parametrize(("metric", "items", "expected"), [
    ("orig_acc", ALWAYS_A, 50.0), ("perm_mean_acc", ALWAYS_A, 100 / 3), ("perm_std_acc", ALWAYS_A, 28.867513),
    ("circular_acc", ALWAYS_A, 0.0), ("consistency", ALWAYS_A, 0.0), ("flip_rate", ALWAYS_A, 100.0),
    ("max_letter_excess", ALWAYS_A, 100 - 100 / 3), ("excess_A", ALWAYS_A, 100 - 100 / 3),
    ("excess_B", ALWAYS_A, -100 / 3),
    ("orig_acc", ROBUST, 50.0), ("circular_acc", ROBUST, 50.0), ("consistency", ROBUST, 50.0),
    ("flip_rate", ROBUST, 25.0), ("perm_std_acc", ROBUST, 0.0),
], ids=lambda v: v if isinstance(v, str) else "")
def test_permutation_metrics(metric: str, items: list[dict[str, Any]], expected: float) -> None:
    assert _aggregate(metric, items) == pytest.approx(expected)


def test_letter_bias_test_flags_a_constant_answer() -> None:
    assert _aggregate("letter_bias_p", ALWAYS_A * 10) < 1e-6
    assert _aggregate("letter_bias_p", ROBUST * 10) > 0.05


def test_metrics_are_order_independent_and_nan_when_empty() -> None:
    assert _aggregate("flip_rate", list(reversed(ROBUST))) == _aggregate("flip_rate", ROBUST)
    names = (*permutation_metrics.METRICS, "orig_acc")
    assert all(math.isnan(getattr(permutation_metrics, m)([])) for m in names)


def _always_a_circular(n_options: int, question: str, gold: int) -> list[dict[str, Any]]:
    """An always-"A" model on one question under every rotation of its `n_options` options."""
    rows = []
    for j, order in enumerate(permutation.slot_permutations(n_options, "circular", question)):
        gold_letter = "ABCDE"[order.index(gold)]
        rows.append({"group_id": question, "perm_index": j, "pred": "A", "answer": gold_letter,
                     "chosen": order[0], "correct": gold_letter == "A", "permutation": list(order),
                     "loop": NO_LOOP})
    return rows


def test_mixed_option_counts_weigh_every_question_the_same() -> None:
    """Always "A" under circular scores exactly the mean over questions of 1 / (shown options)."""
    rows = _always_a_circular(5, "five", 3) + _always_a_circular(4, "four", 1) + _always_a_circular(2, "two", 0)
    assert _aggregate("perm_mean_acc", rows) == pytest.approx(100 * (1 / 5 + 1 / 4 + 1 / 2) / 3)
    runs = permutation_metrics.run_accuracies(rows)
    assert len(runs) == 20  # lcm(5, 4, 2): every order of every question appears equally often
    assert sum(runs) / len(runs) == pytest.approx(_aggregate("perm_mean_acc", rows))
    # orig_acc is returned by order-0 rows only: lmms-eval's subtask size is then the number of questions
    assert len([row for row in rows if "orig_acc" in permutation_metrics.views(row)]) == 3
