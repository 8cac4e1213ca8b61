"""The benchmark registry (adapters/benchmarks.py): manifests are validated with errors naming the file and key,
and the optional fields drive the shared tools instead of benchmark names in code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.benchmarks import ManifestError, read_manifest
from lmms_agentic.adapters.reference import referenced_benchmarks

VALID: dict[str, Any] = {
    "name": "mybench", "title": "MyBench", "paper": "MyBench (2026)",
    "data": {"hub_id": "org/mybench", "split": "test", "revision": "", "config": "", "snapshot": False,
             "expected_rows": 10},
    "mcq": True, "n_options": 4,
    "headline": {"metric": "acc", "scale": "percent", "correct_field": "correct"},
    "breakdowns": ["domain"], "required_kwargs": ["system_role"],
    "demo": {"dummy": ["mybench"], "tiny_vlm": ["mybench"]},
}


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    folder = tmp_path / "mybench"
    folder.mkdir(exist_ok=True)
    path = folder / "benchmark.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in VALID.items() if k != key}


@pytest.mark.parametrize("data, message", [
    (_without("title"), r"key 'title' is missing"),
    ({**VALID, "name": "other"}, r"name 'other' must equal the folder name 'mybench'"),
    ({**VALID, "headline": {**VALID["headline"], "scale": "ratio"}}, r"headline.scale must be 'percent' or 'unit'"),
    ({**VALID, "n_options": 1}, r"n_options between 2 and 10"),
    ({**VALID, "headline": {"metric": "acc", "scale": "percent"}}, r"needs headline.correct_field"),
    ({**VALID, "breakdowns": ["domain", 3]}, r"every entry of 'breakdowns' must be a string"),
    ({**VALID, "judge": "GPT-4o"}, r"key 'judge' must be an object"),
    ({**VALID, "judge": {}}, r"key 'paper_judge' is missing"),
    ({**VALID, "profile": "acc"}, r"key 'profile' must be"),
    ({**VALID, "example_replies": 3}, r"key 'example_replies' must be a dotted function path"),
])
def test_a_malformed_manifest_names_the_file_and_the_key(tmp_path: Path, data: dict[str, Any], message: str) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(ManifestError, match=message) as caught:
        read_manifest(path)
    assert str(path) in str(caught.value)


def test_an_unreadable_manifest_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path, VALID)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ManifestError, match="cannot read the manifest"):
        read_manifest(path)


def test_optional_fields_default_to_a_plain_unjudged_benchmark(tmp_path: Path) -> None:
    bench = read_manifest(_write(tmp_path, VALID))
    assert (bench.judged, bench.paper_judge, bench.profile, bench.example_replies, bench.schema_assumed) == (
        False, None, (), None, False)


def test_optional_fields_are_read(tmp_path: Path) -> None:
    data = {**VALID, "mcq": False, "headline": {"metric": "goal", "scale": "unit"},
            "data": {**VALID["data"], "schema_assumed": True}, "judge": {"paper_judge": "GPT-4o"},
            "profile": ["goal", "tool"], "example_replies": "pkg.module.replies"}
    bench = read_manifest(_write(tmp_path, data))
    assert (bench.judged, bench.paper_judge, bench.profile, bench.example_replies, bench.schema_assumed) == (
        True, "GPT-4o", ("goal", "tool"), "pkg.module.replies", True)
    assert (bench.mcq, bench.n_options, bench.correct_field) == (False, None, None)


def test_the_shipped_manifests_declare_what_the_shared_tools_use() -> None:
    shipped = benchmarks.all_benchmarks()
    judged = {name for name, b in shipped.items() if b.judged}
    assert judged == {"agentx"}
    for name in judged:
        bench = shipped[name]
        assert bench.profile and bench.headline_metric in bench.profile
        assert bench.example_replies and bench.example_replies.startswith("lmms_agentic.tasks.")
    assert all(b.example_replies for b in shipped.values() if not b.mcq), "the export's golden test needs them"
    assert set(referenced_benchmarks()) == {n for n, b in shipped.items() if (b.folder / "reference.csv").is_file()}
