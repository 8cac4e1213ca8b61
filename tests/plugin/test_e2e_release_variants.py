"""Releases that differ from our defaults run with a schema file next to the data and no code edit.

Two local copies of the bundled mini splits as other releases lay them out: a RoboVista copy that spells domains
the runner README's way ("driving", "surgical", "open datasets", ...) and stores `question_id` and `choice_a` ..
`choice_e`; an AgentVQA copy that calls `source_dataset` `source`. The same `agentic_scripted` model (answers from a
hash of the prompt) runs them and the bundled splits: every metric must agree, and the results file must say which
schema file was applied.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import datasets
import pytest

from lmms_agentic.adapters import benchmarks

from ..conftest import CliRun, run_lmms_eval

pytestmark = pytest.mark.e2e
TASKS = "robovista,agentvqa"
README_WORDS = {"agriculture": "agricultural", "autonomous_driving": "driving", "domestic": "home",
                "industrial_manufacturing": "industrial", "surgical_robotics": "surgical",
                "open_datasets": "open datasets", "": ""}


def _robovista_copy(root: Path) -> None:
    mini = benchmarks.get("robovista").folder / "data" / "mini"
    raw = datasets.load_dataset("parquet", data_files=str(next(mini.rglob("*.parquet"))), split="train")

    def respell(row: dict[str, Any]) -> dict[str, Any]:
        choices = list(row["choices"]) + [""] * (5 - len(row["choices"]))
        return {"domain": README_WORDS[row["domain"]], **{f"choice_{c}": choices[i] for i, c in enumerate("abcde")}}

    copy = raw.map(respell).remove_columns(["choices"]).rename_column("id", "question_id")
    (root / "robovista" / "data").mkdir(parents=True)
    copy.to_parquet(str(root / "robovista" / "data" / "train-00000-of-00001.parquet"))
    (root / "robovista" / "lmms_agentic_schema.yaml").write_text(
        "fields:\n  id: question_id\n  choices: [choice_a, choice_b, choice_c, choice_d, choice_e]\n")


def _agentvqa_copy(root: Path) -> None:
    mini = benchmarks.get("agentvqa").folder / "data" / "mini"
    shutil.copytree(mini / "videos", root / "agentvqa" / "videos")
    raw = datasets.load_dataset("parquet", data_files=str(next(mini.rglob("*.parquet"))), split="train")
    (root / "agentvqa" / "data").mkdir(parents=True)
    raw.rename_column("source_dataset", "source").to_parquet(
        str(root / "agentvqa" / "data" / "test-00000-of-00001.parquet"))
    (root / "agentvqa" / "lmms_agentic_schema.yaml").write_text("fields:\n  source: source\n")


def _metrics(run: CliRun) -> dict[tuple[str, str], Any]:
    return {(task, key): value for task, row in run.results["results"].items() for key, value in row.items()
            if key.endswith(",none") and "_stderr" not in key}


def test_other_layouts_run_through_a_schema_file_with_the_same_results(tmp_path: Path) -> None:
    _robovista_copy(tmp_path / "copies")
    _agentvqa_copy(tmp_path / "copies")
    args = ["--model", "agentic_scripted", "--model_args", "letters=ABCDE", "--tasks", TASKS]
    copies = run_lmms_eval(args, tmp_path / "copies_out", env={"LMMS_AGENTIC_DATA": str(tmp_path / "copies")})
    copies.assert_ok()
    bundled = run_lmms_eval(args, tmp_path / "mini_out", env={"LMMS_AGENTIC_DATA": "mini"})
    bundled.assert_ok()
    a, b = _metrics(copies), _metrics(bundled)
    assert a.keys() == b.keys() and len(a) > 40
    for key, value in a.items():
        other = b[key]
        assert (math.isnan(value) and math.isnan(other)) if isinstance(value, float) and math.isnan(value) \
            else value == other, key
    data = copies.results["lmms_agentic"]["data"]
    for name in ("robovista", "agentvqa"):
        assert data[name]["schema"]["source"].endswith(f"{name}/lmms_agentic_schema.yaml")
        assert data[name]["kind"] == "local" and data[name]["fingerprint"].startswith("sha256:")
    assert data["robovista"]["schema"]["fields"]["choices"] == [f"choice_{c}" for c in "abcde"]
