"""RoboVista published numbers (tasks/robovista/reference.csv): the arithmetic the paper and leaderboard allow.

Rounding rule: every accuracy is an exact fraction k/d rounded half to even at the printed precision
(`reference.round_half_even`; the paper prints 1/16 = 6.25 % as 6.2 and the leaderboard 81/144 = 56.25 % as 56.2).
"""

from __future__ import annotations

import itertools
import re
from decimal import Decimal
from fractions import Fraction
from importlib.resources import files
from pathlib import Path

import pytest

from lmms_agentic.adapters.reference import ReferenceRow, load_reference, numerators, printed_as, rows_for, single
from lmms_agentic.tasks.robovista.core.records import ABILITY_SPLIT

DOMAINS = ("agriculture", "autonomous_driving", "domestic", "industrial_manufacturing", "surgical_robotics",
           "open_datasets")
PLANNING_TYPES = tuple(label for label, split in ABILITY_SPLIT.items() if split == "PL")  # Table V's four
TABLE_I_D = {"agriculture": 62, "autonomous_driving": 20, "domestic": 76, "industrial_manufacturing": 126,
             "surgical_robotics": 46, "open_datasets": 144}
# Per-domain perception / planning denominators behind the appendix deltas [derived: each column's deltas are
# multiples of 1/n]; they add up to 318 / 156 and, per domain, to the Table I denominators.
PERC_D = {"agriculture": 49, "autonomous_driving": 9, "domestic": 51, "industrial_manufacturing": 75,
          "surgical_robotics": 30, "open_datasets": 104}
PLAN_D = {"agriculture": 13, "autonomous_driving": 11, "domestic": 25, "industrial_manufacturing": 51,
          "surgical_robotics": 16, "open_datasets": 40}
LEADERBOARD_D = {"agriculture": 53, "autonomous_driving": 20, "domestic": 85, "industrial_manufacturing": 120,
                 "surgical_robotics": 32, "open_datasets": 144}
HF_D = {"agriculture": 53, "autonomous_driving": 20, "domestic": 85, "industrial_manufacturing": 120,
        "surgical_robotics": 46, "open_datasets": 144}
TEXT_ONLY = "Qwen 3-8B (Text-Only)"


@pytest.fixture(scope="module")
def rows() -> list[ReferenceRow]:
    return load_reference("robovista")


def unique_k(row: ReferenceRow, d: int) -> int:
    found = numerators(row, d)
    assert len(found) == 1, f"line {row.line}: {row.model} {row.metric} {row.value_text} -> {found} over {d}"
    return found[0]


def table(rows: list[ReferenceRow], source: str, **fields: str) -> list[ReferenceRow]:
    return rows_for(rows, source=source, **fields)


def models(selected: list[ReferenceRow]) -> list[str]:
    return list(dict.fromkeys(row.model for row in selected))


# ---------------------------------------------------------------- Table I
def test_table_i_shape(rows: list[ReferenceRow]) -> None:
    t1 = table(rows, "paper Table I")
    assert len(models(t1)) == 16 and len(t1) == 16 * 7
    assert {row.metric for row in t1} == {"parity_acc"} | {f"domain_{d}_acc" for d in DOMAINS}
    assert all(row.protocol == "zero_shot" and row.scale == "percent" for row in t1)
    assert {row.value_text for row in rows_for(t1, model="Random")} == {"20.0"}
    assert single(rows, model="GPT-5", metric="parity_acc", protocol="zero_shot").model_id == "gpt-5-2025-08-07"


def test_table_i_cells_are_fractions_with_exactly_the_known_exceptions(rows: list[ReferenceRow]) -> None:
    """Every model cell is k/d over 62/20/76/126/46/144 except the text-only row's Home and Open."""
    failures = set()
    for row in table(rows, "paper Table I"):
        if row.variant == "chance" or row.metric == "parity_acc":
            continue
        domain = row.metric.removeprefix("domain_").removesuffix("_acc")
        if not numerators(row, TABLE_I_D[domain]):
            failures.add((row.model, row.metric))
    expected = {(TEXT_ONLY, "domain_domestic_acc"), (TEXT_ONLY, "domain_open_datasets_acc")}
    assert failures == expected
    flagged = {(row.model, row.metric) for row in rows if "fraction exception" in row.notes}
    assert flagged == expected
    assert all(row.n is None for row in rows if (row.model, row.metric) in expected and row.source == "paper Table I")
    assert sum(TABLE_I_D.values()) == 474


def test_table_i_overall_is_the_sum_of_the_domain_numerators(rows: list[ReferenceRow]) -> None:
    t1 = table(rows, "paper Table I")
    checked = 0
    for model in models(t1):
        if model in ("Random", TEXT_ONLY):
            continue
        total = sum(unique_k(single(t1, model=model, metric=f"domain_{d}_acc", variant=None), TABLE_I_D[d])
                    for d in DOMAINS)
        overall = single(t1, model=model, metric="parity_acc", variant=None)
        assert printed_as(overall, Fraction(100 * total, 474)), (model, total, overall.value_text)
        checked += 1
    assert checked == 14
    gemini = [unique_k(single(t1, model="Gemini 2.5 Pro", metric=f"domain_{d}_acc"), TABLE_I_D[d]) for d in DOMAINS]
    assert gemini == [30, 10, 48, 61, 35, 84] and sum(gemini) == 268
    assert numerators(single(t1, model=TEXT_ONLY, metric="parity_acc", variant="text_only"), 474) == [119]


# ---------------------------------------------------------------- Table II
def test_table_ii_cells_are_fractions_and_overall_is_their_sum(rows: list[ReferenceRow]) -> None:
    t2 = table(rows, "paper Table II")
    assert len(models(t2)) == 11 and len(t2) == 11 * 9
    for model in models(t2):
        for protocol, variant in (("zero_shot", "table_ii"), ("cot", "")):
            k_perc = unique_k(single(t2, model=model, metric="perception_acc", protocol=protocol, variant=variant),
                              318)
            k_plan = unique_k(single(t2, model=model, metric="planning_acc", protocol=protocol, variant=variant),
                              156)
            overall = single(t2, model=model, metric="parity_acc", protocol=protocol, variant=variant)
            assert printed_as(overall, Fraction(100 * (k_perc + k_plan), 474)), (model, protocol)


def test_table_ii_deltas_come_from_the_unrounded_fractions(rows: list[ReferenceRow]) -> None:
    t2 = table(rows, "paper Table II")
    for model in models(t2):
        for metric, d in (("parity_acc", 474), ("perception_acc", 318), ("planning_acc", 156)):
            base = unique_k(single(t2, model=model, metric=metric, protocol="zero_shot", variant="table_ii"), d)
            cot = unique_k(single(t2, model=model, metric=metric, protocol="cot"), d)
            delta = single(t2, model=model, metric=f"{metric}_delta", protocol="cot")
            assert printed_as(delta, Fraction(100 * (cot - base), d)), (model, metric, delta.value_text)


def test_table_ii_base_differs_from_table_i_for_exactly_two_models(rows: list[ReferenceRow]) -> None:
    differing = set()
    for row in rows_for(rows, source="paper Table II", metric="parity_acc", variant="table_ii"):
        first = single(rows, model=row.model, metric="parity_acc", protocol="zero_shot")
        if first.exact != row.exact:
            differing.add((row.model, first.value_text, row.value_text))
            assert "differs from Table I" in row.notes
    assert differing == {("Qwen 3 VL-32B", "49.2", "50.4"), ("GPT-5", "48.1", "55.5")}


# ---------------------------------------------------------------- Table III
def test_table_iii_base_is_a_fraction_of_474_and_deltas_match(rows: list[ReferenceRow]) -> None:
    t3 = table(rows, "paper Table III")
    assert len(models(t3)) == 8 and len(t3) == 8 * 6
    for model in models(t3):
        unique_k(single(t3, model=model, metric="parity_acc", protocol="confidence"), 474)
        for metric in ("parity_acc", "calibration_error"):
            base = single(t3, model=model, metric=metric, protocol="confidence")
            icl = single(t3, model=model, metric=metric, protocol="icl")
            delta = single(t3, model=model, metric=f"{metric}_delta", protocol="icl")
            # two 1-decimal values (each within 0.05 of the truth) and a 1-decimal delta: |error| <= 0.15
            assert abs(delta.exact - (icl.exact - base.exact)) <= Decimal("0.15"), (model, metric)
    assert {row.notes.split(";")[0] for row in t3 if row.notes.startswith("printed:")} == {
        "printed: RoboBrain-MT", "printed: RoboBrain-NV"}


# ---------------------------------------------------------------- Appendix (a), (b)
@pytest.mark.parametrize(("ability", "per_domain", "total", "source"), [
    ("perception", PERC_D, 318, "paper Appendix (a)"), ("planning", PLAN_D, 156, "paper Appendix (b)")])
def test_appendix_deltas_are_fractions_and_add_up(rows: list[ReferenceRow], ability: str, per_domain: dict[str, int],
                                                  total: int, source: str) -> None:
    appendix = table(rows, source)
    assert len(appendix) == len(models(appendix)) * 7
    assert sum(per_domain.values()) == total
    for model in models(appendix):
        ks = [unique_k(single(appendix, model=model, metric=f"domain_{d}_{ability}_acc_delta", variant="appendix"),
                       per_domain[d]) for d in DOMAINS]
        overall = single(appendix, model=model, metric=f"{ability}_acc_delta", variant="appendix")
        assert printed_as(overall, Fraction(100 * sum(ks), total)), (model, ks, overall.value_text)
        assert all(row.n == per_domain[row.metric.split("_" + ability)[0].removeprefix("domain_")]
                   for row in rows_for(appendix, model=model) if row.metric.startswith("domain_"))


def test_appendix_denominators_partition_table_i() -> None:
    assert {d: PERC_D[d] + PLAN_D[d] for d in DOMAINS} == TABLE_I_D


def test_appendix_overall_matches_table_ii_except_the_known_discrepancy(rows: list[ReferenceRow]) -> None:
    mismatches = set()
    for row in rows_for(rows, variant="appendix"):
        if row.metric not in ("perception_acc_delta", "planning_acc_delta"):
            continue
        twin = rows_for(rows, model=row.model, metric=row.metric, protocol="cot", variant="")
        if twin and twin[0].exact != row.exact:
            mismatches.add((row.model, row.metric, twin[0].value_text, row.value_text))
    assert mismatches == {("Qwen 3 VL-8B", "planning_acc_delta", "-5.1", "-3.2")}
    thinking = single(rows, model="Qwen 3 VL-32B-T", metric="perception_acc_delta", variant="appendix")
    assert thinking.exact == single(rows, model="Qwen 3 VL-32B", metric="perception_acc_delta", protocol="cot").exact


# ---------------------------------------------------------------- Table IV, failure analysis
def test_table_iv_surgery_equals_table_i(rows: list[ReferenceRow]) -> None:
    t4 = rows_for(rows, source="paper Table IV", metric="domain_surgical_robotics_acc")
    assert len(t4) == 3
    for row in t4:
        assert row.exact == single(rows, model=row.model, metric=row.metric, protocol="zero_shot").exact
    for row in rows_for(rows, protocol="physical_dvrk"):
        assert row.scale == "count" and row.n == 16 and 0 <= row.value <= 16


def test_error_study_numbers(rows: list[ReferenceRow]) -> None:
    share = single(rows, model="Qwen 2.5 VL-7B", metric="misidentification_share", variant="error_study")
    count = single(rows, model="Qwen 2.5 VL-7B", metric="misidentification_count", variant="error_study")
    assert printed_as(share, Fraction(100 * int(count.value_text), 474))
    correct = single(rows, model="Qwen 2.5 VL-7B", metric="parity_acc", variant="error_study")
    assert correct.exact == single(rows, model="Qwen 2.5 VL-7B", metric="parity_acc", protocol="cot").exact


# ---------------------------------------------------------------- leaderboard
def test_leaderboard_cells_are_fractions_and_breakdowns_agree(rows: list[ReferenceRow]) -> None:
    board = rows_for(rows, variant="leaderboard")
    names = models(board)
    assert len(names) == 27
    no_cot = {m for m in names if not rows_for(board, model=m, protocol="cot")}
    assert no_cot == {"gpt-4o", "qwen3-vl-32b", "gpt-5"}
    assert sum(LEADERBOARD_D.values()) + 6 == 460
    for model in names:
        for row in rows_for(board, model=model, metric="parity_acc"):
            unique_k(row, 460)
        standard = unique_k(single(board, model=model, metric="parity_acc", protocol="zero_shot", variant=None), 460)
        sc = unique_k(single(board, model=model, metric="perception_acc", variant=None), 306)
        pl = unique_k(single(board, model=model, metric="planning_acc", variant=None), 148)
        by_domain = sum(unique_k(single(board, model=model, metric=f"domain_{d}_acc", variant=None), LEADERBOARD_D[d])
                        for d in DOMAINS)
        # the six unlabeled rows count only in "Standard"; the same items lack both labels [derived]
        assert sc + pl == by_domain, model
        assert by_domain <= standard <= by_domain + 6, model


# ---------------------------------------------------------------- runner reference runs
def test_runner_reference_run_is_reconstructible(rows: list[ReferenceRow]) -> None:
    runner = rows_for(rows, model="Qwen2-VL-7B-Instruct", variant="runner_hf_local")
    assert len(runner) == 10
    overall = numerators(single(runner, model="Qwen2-VL-7B-Instruct", metric="parity_acc", protocol="zero_shot",
                                variant=None), 474)
    assert overall == [159]
    options = [numerators(single(runner, model="Qwen2-VL-7B-Instruct", metric=f"domain_{d}_acc", variant=None),
                          HF_D[d]) for d in DOMAINS]
    assert all(options)
    assert any(sum(combo) <= 159 <= sum(combo) + 6 for combo in itertools.product(*options))


# ---------------------------------------------------------------- dataset statistics (paper text, Table V, Fig. 4)
def _stat(rows: list[ReferenceRow], metric: str) -> int:
    return int(single(rows, model="dataset", metric=metric, protocol="statistics").value_text)


def test_dataset_statistics_add_up(rows: list[ReferenceRow]) -> None:
    assert _stat(rows, "count_questions") == 474
    gold = [_stat(rows, f"count_gold_{letter}") for letter in "abcde"]
    assert sum(gold) == 474
    for letter, count in zip("abcde", gold, strict=True):
        assert printed_as(single(rows, model="dataset", metric=f"share_gold_{letter}"), Fraction(100 * count, 474))
    assert sum(_stat(rows, f"count_questions_{k}") for k in ("1_image", "2_images", "3plus_images")) == 474
    assert printed_as(single(rows, model="dataset", metric="images_per_question"), Fraction(_stat(rows, "count_images"),
                                                                                           474))
    assert sum(_stat(rows, f"count_domain_{d}") for d in DOMAINS) == 474
    assert _stat(rows, "count_perception") + sum(_stat(rows, f"count_ability_{a}") for a in PLANNING_TYPES) == 474


def test_fig4_task_table_adds_up_to_table_v_and_table_ii(rows: list[ReferenceRow]) -> None:
    tasks = rows_for(rows, source="paper Fig. 4 table")
    slugs = sorted({row.metric.removeprefix("count_task_").rsplit("_", 1)[0] for row in tasks
                    if row.metric.startswith("count_task_")})
    assert len(slugs) == 16
    per_domain = dict.fromkeys(DOMAINS, 0)
    perception = planning = 0
    for slug in slugs:
        p, q, t = (_stat(tasks, f"count_task_{slug}_{part}") for part in ("perception", "planning", "total"))
        assert p + q == t, slug
        domain = single(tasks, model="dataset", metric=f"count_task_{slug}_total").notes.split("domain ")[1].rstrip(")")
        per_domain[domain] += t
        perception, planning = perception + p, planning + q
    assert per_domain == {d: _stat(rows, f"count_domain_{d}") for d in DOMAINS}
    assert (perception, planning) == (_stat(rows, "count_perception_total"), _stat(rows, "count_planning_total"))
    assert (perception, planning, perception + planning) == (318, 156, _stat(rows, "count_total"))


# ---------------------------------------------------------------- naming
def task_metric_names(benchmark: str) -> set[str]:
    """Every `metric:` name declared by the benchmark's task YAML files and templates."""
    folder = Path(str(files("lmms_agentic.tasks") / benchmark))
    names: set[str] = set()
    for path in folder.rglob("*"):
        if path.is_file() and (path.suffix == ".yaml" or path.name.endswith("_yaml")):
            names.update(re.findall(r"\bmetric:\s*([a-z0-9_]+)", path.read_text(encoding="utf-8")))
    return names


def test_metric_names_are_task_metrics_unless_noted(rows: list[ReferenceRow]) -> None:
    """A row whose notes do not say "no task metric" uses a metric the RoboVista task YAML declares."""
    declared = task_metric_names("robovista")
    assert "parity_acc" in declared
    for row in rows:
        if row.protocol == "statistics" or "no task metric" in row.notes:
            continue
        assert row.metric in declared, f"line {row.line}: {row.metric} is not a RoboVista task metric"
