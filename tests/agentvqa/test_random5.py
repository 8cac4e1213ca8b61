"""AgentVQA's option-order study as the paper words it (App. F: "5 distinct seeded random permutations"): the
`_random5` tasks, beside `_perm5` (the original order plus 4 random ones)."""

from __future__ import annotations

from collections import defaultdict

from lmms_agentic.adapters import permutation
from lmms_agentic.devtools import permutations


def test_random5_draws_five_distinct_orders_without_assuming_the_original() -> None:
    orders = {gid: permutation.slot_permutations(4, "random5", gid) for gid in (f"q{i}" for i in range(40))}
    identity = (0, 1, 2, 3)
    assert all(len(set(o)) == 5 for o in orders.values())
    assert any(o[0] != identity for o in orders.values())  # order 0 is a random draw, not the original
    assert sum(identity in o for o in orders.values()) < 40  # the original is not forced into every question
    assert orders == {gid: permutation.slot_permutations(4, "random5", gid) for gid in orders}  # seeded
    assert permutation.slot_permutations(4, "perm5", "q0")[0] == identity  # today's perm5 is unchanged
    assert sorted(permutation.slot_permutations(2, "random5", "q0")) == [(0, 1), (1, 0)]  # fewer orders than 5


def test_random5_task_remaps_gold_with_each_order(mini_env: None) -> None:
    config, docs = permutations.load_task("agentvqa_web_agents_random5")
    assert config["metadata"]["permutation_mode"] == "random5"
    by_question: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in docs:
        by_question[row["group_id"]].append(row)
    base = {row["id"]: row for row in permutations.load_task("agentvqa_web_agents")[1]}
    for gid, rows in by_question.items():
        assert [r["perm_index"] for r in rows] == [0, 1, 2, 3, 4]
        gold_text = base[gid]["options"][base[gid]["gold_index"]]
        assert all(r["options"][r["gold_index"]] == gold_text for r in rows)
