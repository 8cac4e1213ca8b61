"""adapters.reference: loading, validation errors (file, line, column), helpers, and the shipped files' hygiene."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from importlib.resources import files

import pytest

from lmms_agentic.adapters.reference import (
    COLUMNS,
    ReferenceFileError,
    ReferenceRow,
    load_reference,
    numerators,
    parse_reference,
    printed_as,
    referenced_benchmarks,
    round_half_even,
    rows_for,
    single,
)

HEADER = ",".join(COLUMNS)
GOOD = 'GPT-4o,gpt-4o,zero_shot,,,parity_acc,49.6,percent,474,paper Table I,"a note, with a comma"'


def parse(*lines: str) -> list[ReferenceRow]:
    return parse_reference("\n".join((HEADER, *lines)) + "\n", "tasks/demo/reference.csv")


def error_of(*lines: str) -> ReferenceFileError:
    with pytest.raises(ReferenceFileError) as caught:
        parse(*lines)
    return caught.value


# ---------------------------------------------------------------- the shipped files
@pytest.mark.parametrize("benchmark", referenced_benchmarks())
def test_every_benchmark_file_loads(benchmark: str) -> None:
    rows = load_reference(benchmark)
    assert len(rows) > 100
    assert all(row.model and row.protocol and row.metric and row.source for row in rows)
    assert [row.line for row in rows] == sorted(row.line for row in rows)


@pytest.mark.parametrize("benchmark", referenced_benchmarks())
def test_no_duplicate_keys(benchmark: str) -> None:
    keys = Counter(row.key for row in load_reference(benchmark))
    assert [key for key, count in keys.items() if count > 1] == []


@pytest.mark.parametrize("benchmark", referenced_benchmarks())
def test_files_are_canonically_quoted(benchmark: str) -> None:
    """Re-writing the parsed cells with the csv module reproduces the file byte for byte."""
    text = (files("lmms_agentic.tasks") / benchmark / "reference.csv").read_text(encoding="utf-8")
    records = list(csv.reader(io.StringIO(text, newline="")))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(records)
    assert out.getvalue() == text


@pytest.mark.parametrize("benchmark", referenced_benchmarks())
def test_scales_and_model_ids(benchmark: str) -> None:
    for row in load_reference(benchmark):
        assert row.scale in ("percent", "unit", "count")
        if row.scale == "count":
            assert "/" not in row.value_text
        assert row.model_id == row.model_id.strip() and " " not in row.model_id


def test_agentx_is_the_only_judged_benchmark() -> None:
    assert {row.judge for row in load_reference("robovista")} == {""}
    assert {row.judge for row in load_reference("agentvqa")} == {""}
    assert {row.judge for row in load_reference("agentx")} == {"", "GPT-4o", "Qwen3-14B"}


def test_unknown_benchmark() -> None:
    with pytest.raises(ValueError, match="no reference numbers for benchmark 'nope'"):
        load_reference("nope")


# ---------------------------------------------------------------- parsing
def test_a_good_row() -> None:
    (row,) = parse(GOOD)
    assert row.model == "GPT-4o" and row.model_id == "gpt-4o" and row.variant == "" and row.judge == ""
    assert row.value == 49.6 and row.value_text == "49.6" and row.decimals == 1 and row.exact == Decimal("49.6")
    assert row.scale == "percent" and row.n == 474 and row.notes == "a note, with a comma" and row.line == 2
    assert row.key == ("GPT-4o", "zero_shot", "", "", "parity_acc")
    assert row.fraction == pytest.approx(0.496)


def test_printed_text_is_kept() -> None:
    rows = parse("m,,cot,,,parity_acc_delta,+0.6,percent,474,s,",
                 "m,,single_shot,,GPT-4o,goal_imggen,0.000,unit,222,s,",
                 "m,,statistics,,,count_questions,474,count,,s,")
    assert [r.value_text for r in rows] == ["+0.6", "0.000", "474"]
    assert [r.decimals for r in rows] == [1, 3, 0]
    assert rows[0].value == 0.6 and rows[1].value == 0.0 and rows[2].n is None
    assert rows[2].fraction == 474


def test_line_numbers_follow_blank_and_multi_line_records() -> None:
    rows = parse('m,,p,,,a,1,count,,s,"two\nlines"', "", "m,,p,,,b,2,count,,s,")
    assert [r.line for r in rows] == [2, 5]


@pytest.mark.parametrize(("cells", "column", "message"), [
    ("m,,p,,,acc,49.6,pct,474,s,", "scale", "unknown scale 'pct'"),
    ("m,,p,,,acc,about 50,percent,474,s,", "value", "'about 50' is not a plain decimal number"),
    ("m,,p,,,acc,28%,percent,474,s,", "value", "not a plain decimal number"),
    ("m,,p,,,acc,2/16,count,16,s,", "value", "not a plain decimal number"),
    ("m,,p,,,acc,nan,percent,474,s,", "value", "not a plain decimal number"),
    ("m,,p,,,acc,,percent,474,s,", "value", "must not be empty"),
    (",,p,,,acc,49.6,percent,474,s,", "model", "must not be empty"),
    ("m,,,,,acc,49.6,percent,474,s,", "protocol", "must not be empty"),
    ("m,,p,,,,49.6,percent,474,s,", "metric", "must not be empty"),
    ("m,,p,,,acc,49.6,percent,474,,", "source", "must not be empty"),
    ("m,,p,,,acc@web,49.6,percent,474,s,", "metric", "not a snake_case name"),
    ("m,,p,Think High,,acc,49.6,percent,474,s,", "variant", "not a snake_case name"),
    ("m,,p,,,acc,49.6,percent,47.4,s,", "n", "not a positive integer"),
    ("m,,p,,,acc,49.6,percent,0,s,", "n", "not a positive integer"),
    ("m,,p,,,acc,149.6,percent,474,s,", "value", "outside the percent scale"),
    ("m,,p,,,acc,1.5,unit,828,s,", "value", "outside the unit scale"),
    ("m ,,p,,,acc,49.6,percent,474,s,", "model", "whitespace"),
])
def test_malformed_rows_name_file_line_and_column(cells: str, column: str, message: str) -> None:
    error = error_of(GOOD.replace("GPT-4o,", "Other,", 1), cells)
    assert (error.path, error.line, error.column) == ("tasks/demo/reference.csv", 3, column)
    assert str(error).startswith(f"tasks/demo/reference.csv:3: column {column!r}: ")
    assert message in str(error)


def test_wrong_field_count() -> None:
    error = error_of(GOOD, "m,,p,,,acc,49.6,percent,474,s")
    assert error.line == 3 and error.column is None and "expected 11 fields, got 10" in str(error)


def test_duplicate_key_names_both_lines() -> None:
    error = error_of(GOOD, "x,,p,,,acc,1,count,,s,", GOOD)
    assert error.line == 4 and "first on line 2" in str(error) and "duplicate key" in str(error)


def test_bad_header_and_empty_file() -> None:
    with pytest.raises(ReferenceFileError, match=r"^f\.csv:1: header must be"):
        parse_reference("model,value\n", "f.csv")
    with pytest.raises(ReferenceFileError, match=r"^f\.csv:1: empty file"):
        parse_reference("", "f.csv")


def test_csv_syntax_error_names_the_line() -> None:
    with pytest.raises(ReferenceFileError, match=r"demo/reference\.csv:3: CSV syntax error"):
        parse(GOOD, 'm,,p,,,acc,1,count,,s,"bad"quote')


# ---------------------------------------------------------------- helpers
def test_rows_for_and_single() -> None:
    rows = parse(GOOD, "GPT-4o,gpt-4o,cot,,,parity_acc,44.9,percent,474,s,",
                 "GPT-4o,gpt-4o,zero_shot,table_ii,,parity_acc,55.5,percent,474,s,")
    assert len(rows_for(rows, model="GPT-4o")) == 3
    assert [r.value_text for r in rows_for(rows, protocol="zero_shot")] == ["49.6", "55.5"]
    assert [r.value_text for r in rows_for(rows, protocol="zero_shot", variant="")] == ["49.6"]
    assert rows_for(rows, metric="nothing") == []
    assert single(rows, model="GPT-4o", metric="parity_acc", protocol="zero_shot").value_text == "49.6"
    assert single(rows, model="GPT-4o", metric="parity_acc", protocol="zero_shot", variant="table_ii").value == 55.5
    with pytest.raises(LookupError, match="2 reference rows match"):
        single(rows, model="GPT-4o", metric="parity_acc", variant=None, protocol="zero_shot")
    with pytest.raises(LookupError, match="0 reference rows match"):
        single(rows, model="nobody", metric="parity_acc")


def test_round_half_even_is_exact() -> None:
    assert round_half_even(Fraction(100, 16), 1) == Decimal("6.2")  # 6.25 -> 6.2 (tie to even)
    assert round_half_even(Fraction(300, 16), 1) == Decimal("18.8")  # 18.75 -> 18.8
    assert round_half_even(Fraction(-100, 16), 1) == Decimal("-6.2")
    assert round_half_even(Fraction(26800, 474), 1) == Decimal("56.5")
    assert round_half_even(Fraction(1, 3), 3) == Decimal("0.333")
    assert round_half_even(7, 0) == Decimal(7)


def test_numerators_and_printed_as() -> None:
    (row,) = parse("m,,p,,,domain_surgical_robotics_acc,+6.2,percent,16,s,")
    assert numerators(row, 16) == [1]
    assert printed_as(row, Fraction(100, 16))
    (unit,) = parse("m,,p,,,goal_acc,0.37,unit,606,s,")
    assert numerators(unit, 100) == [37] and len(numerators(unit, 606)) > 1
    (count,) = parse("m,,statistics,,,count_questions,474,count,,s,")
    with pytest.raises(ValueError, match="is a count"):
        numerators(count, 474)


def test_no_io_at_import() -> None:
    """Importing the module reads nothing (checked in a fresh interpreter with file access patched out)."""
    script = (
        "import builtins, importlib.resources\n"
        "def refuse(*args, **kwargs):\n"
        "    raise AssertionError('reference data read at import time')\n"
        "import lmms_agentic.tasks\n"
        "importlib.resources.files = refuse\n"
        "builtins.open = refuse\n"
        "import lmms_agentic.adapters.reference as module\n"
        "assert module.files is refuse\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, timeout=120)
