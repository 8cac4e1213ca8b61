"""AgentVQA published numbers (tasks/agentvqa/reference.csv): the arithmetic Table 1 and App. F allow.

Rounding rule for Avg: none is needed. Every domain score is k/200 (a multiple of 0.5), so the mean of five is a
multiple of 0.1 and the paper's one-decimal Avg is the exact mean; the test asserts exact equality.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from lmms_agentic.adapters.reference import ReferenceRow, load_reference, numerators, rows_for, single

DOMAINS = ("web_agents", "egocentric_videos", "games", "spatial_planning", "robotics")
TABLE = "paper Table 1"


@pytest.fixture(scope="module")
def rows() -> list[ReferenceRow]:
    return load_reference("agentvqa")


@pytest.fixture(scope="module")
def table1(rows: list[ReferenceRow]) -> dict[str, dict[str, Decimal]]:
    out: dict[str, dict[str, Decimal]] = {}
    for row in rows_for(rows, source=TABLE):
        out.setdefault(row.model, {})[row.metric] = row.exact
    return out


def test_table_1_shape(rows: list[ReferenceRow], table1: dict[str, dict[str, Decimal]]) -> None:
    assert len(table1) == 22
    assert all(set(cells) == {"accuracy"} | {f"domain_{d}_acc" for d in DOMAINS} for cells in table1.values())
    for row in rows_for(rows, source=TABLE):
        assert row.protocol == "default" and row.scale == "percent" and row.decimals == 1
        assert row.n == (1000 if row.metric == "accuracy" else 200)
        assert "reasoning=" in row.notes and "closed_source=" in row.notes
    assert not [row for row in rows if "@" in row.metric]


def test_domain_scores_are_fractions_of_200(rows: list[ReferenceRow]) -> None:
    for row in rows_for(rows, source=TABLE):
        if row.metric != "accuracy":
            assert len(numerators(row, 200)) == 1, (row.model, row.metric, row.value_text)


def test_avg_is_the_exact_mean_of_the_five_domains(table1: dict[str, dict[str, Decimal]]) -> None:
    for model, cells in table1.items():
        mean = Fraction(sum(cells[f"domain_{d}_acc"] for d in DOMAINS)) / 5
        assert mean.denominator in (1, 2, 5, 10), model  # a multiple of 0.1: no rounding happens
        assert Fraction(cells["accuracy"]) == mean, (model, cells["accuracy"], float(mean))
        # hence Avg also equals overall correct / 1000
        assert Fraction(cells["accuracy"]) * 10 == sum(Fraction(cells[f"domain_{d}_acc"]) * 2 for d in DOMAINS)


def test_cross_model_means_match_the_paper_text(rows: list[ReferenceRow],
                                                table1: dict[str, dict[str, Decimal]]) -> None:
    """The text rounds the column means (29.1/58.8/51.6/46.0/37.8) to 29 / 59 / 51.5 / 46 / 38 (nearest 0.5)."""
    exact = {d: Fraction(sum(cells[f"domain_{d}_acc"] for cells in table1.values())) / 22 for d in DOMAINS}
    assert [round(float(exact[d]), 1) for d in DOMAINS] == [29.1, 58.8, 51.6, 46.0, 37.8]
    for d in DOMAINS:
        printed = single(rows, model="mean of 22 models", metric=f"domain_{d}_acc")
        assert Fraction(printed.exact) == Fraction(round(exact[d] * 2), 2), d


def test_statements_about_table_1(rows: list[ReferenceRow], table1: dict[str, dict[str, Decimal]]) -> None:
    def leader(metric: str) -> str:
        return max(table1, key=lambda model: table1[model][metric])

    best = {metric: leader(metric) for metric in table1["GPT-4o"]}
    assert best["domain_web_agents_acc"] == "GPT 5.6-sol think-high"
    assert best["domain_egocentric_videos_acc"] == "Qwen3.7 Flash"
    assert {best[m] for m in ("domain_games_acc", "domain_spatial_planning_acc", "domain_robotics_acc",
                              "accuracy")} == {"Gemini 3.7-flash"}
    assert sum(cells["domain_web_agents_acc"] > 40 for cells in table1.values()) == 3
    lowest = min(table1, key=lambda m: table1[m]["accuracy"])
    assert (lowest, table1[lowest]["accuracy"]) == ("Llama-4-Maverick", Decimal("28.0"))
    assert all(cells["accuracy"] > 25 for cells in table1.values())
    gain = single(rows, model="GPT 5.6-sol", metric="accuracy_gain_think_high_over_none")
    assert gain.exact == table1["GPT 5.6-sol think-high"]["accuracy"] - table1["GPT 5.6-sol think-none"]["accuracy"]
    assert table1["GLM 4.1V 9B-Thinking"]["accuracy"] < table1["GLM 4.1V 9B-Base"]["accuracy"]


def test_constant_letter_baselines(rows: list[ReferenceRow]) -> None:
    letters = {row.model: row.exact for row in rows_for(rows, variant="constant_letter")}
    assert set(letters) == {"Always A", "Always B", "Always C", "Always D", "Constant-letter mean"}
    shares = [letters[f"Always {x}"] for x in "ABCD"]
    assert sum(shares) == 100  # the four strategies partition the 1000 gold letters
    assert sum(shares) / 4 == letters["Constant-letter mean"] == Decimal("25.0")
    # each whole percent allows a range of gold counts; some choice of counts adds up to exactly 1000
    ranges = [range(int(s * 10) - 5, int(s * 10) + 5) for s in shares]
    assert sum(r.start for r in ranges) <= 1000 <= sum(r.stop - 1 for r in ranges)


def test_other_app_f_and_text_numbers(rows: list[ReferenceRow]) -> None:
    ego = [row.value for row in rows_for(rows, model="Gemini 3.1-pro", variant="error_analysis")
           if row.metric.startswith("error_share_egocentric_videos_")]
    assert len(ego) == 3 and sum(ego) <= 100
    assert len(rows_for(rows, variant="error_analysis")) == 7
    assert single(rows, model="5 representative models (unnamed)", metric="accuracy_std_over_permutations",
                  variant="permutation_study").value_text == "1.9"
    assert len(rows_for(rows, variant="history_ablation")) == 2


def test_dataset_statistics(rows: list[ReferenceRow]) -> None:
    def stat(metric: str) -> Decimal:
        return single(rows, model="dataset", metric=metric, protocol="statistics").exact

    assert stat("count_domains") * stat("count_questions_per_domain") == stat("count_questions") == 1000
    kept = (1 - stat("share_removed_vlm_screening") / 100) * (1 - stat("share_rejected_human_review") / 100)
    assert kept * 100 == stat("share_candidates_retained")  # 0.55 x 0.40 = 0.22


def test_metric_names(rows: list[ReferenceRow]) -> None:
    """Avg is `accuracy`, a domain score `domain_<domain>_acc`; anything else is marked "no task metric"."""
    allowed = {"accuracy"} | {f"domain_{d}_acc" for d in DOMAINS}
    for row in rows:
        if row.protocol != "statistics" and "no task metric" not in row.notes:
            assert row.metric in allowed, f"line {row.line}: {row.metric}"
