"""The benchmark registry (adapters/benchmarks.py): manifests are validated with errors naming the file and key,
and the optional fields drive the shared tools instead of benchmark names in code."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.benchmarks import ManifestError, read_manifest
from lmms_agentic.adapters.interface import BenchmarkPackage, InterfaceError, check_metric_names, check_package
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
    ({**VALID, "protocols": {"default": "x", "tasks": {"y": "t"}}}, r"protocols.default 'x' is not one of"),
    ({**VALID, "protocols": {"default": "y", "tasks": {"y": 1}}}, r"key 'tasks' must be an object of strings"),
    ({**VALID, "unreproducible": ["Random"]}, r"key 'unreproducible' must be an object of strings"),
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
    assert (bench.judged, bench.paper_judge, bench.profile, bench.schema_assumed) == (False, None, (), False)
    assert (bench.default_protocol, dict(bench.protocol_tasks), dict(bench.unreproducible)) == (
        "default", {"default": bench.name}, {}), "one protocol, run by the task named like the benchmark"


def test_optional_fields_are_read(tmp_path: Path) -> None:
    data = {**VALID, "mcq": False, "headline": {"metric": "goal", "scale": "unit"},
            "data": {**VALID["data"], "schema_assumed": True}, "judge": {"paper_judge": "GPT-4o"},
            "profile": ["goal", "tool"],
            "protocols": {"default": "zero_shot", "tasks": {"zero_shot": "t", "cot": "t_cot"},
                          "published_in": {"cot": "Table II"}},
            "unreproducible": {"Random": "chance level"}}
    bench = read_manifest(_write(tmp_path, data))
    assert (bench.judged, bench.paper_judge, bench.profile, bench.schema_assumed) == (
        True, "GPT-4o", ("goal", "tool"), True)
    assert (bench.default_protocol, dict(bench.protocol_tasks), dict(bench.protocol_sources)) == (
        "zero_shot", {"zero_shot": "t", "cot": "t_cot"}, {"cot": "Table II"})
    assert dict(bench.unreproducible) == {"Random": "chance level"}
    assert (bench.mcq, bench.n_options, bench.correct_field) == (False, None, None)


def test_the_shipped_manifests_declare_what_the_shared_tools_use() -> None:
    shipped = benchmarks.all_benchmarks()
    judged = {name for name, b in shipped.items() if b.judged}
    assert judged == {"agentx"}
    for name in judged:
        bench = shipped[name]
        assert bench.profile and bench.headline_metric in bench.profile
    for bench in shipped.values():
        assert bench.protocol_tasks[bench.default_protocol] in bench.task_files()
        assert set(bench.protocol_tasks) <= set(bench.protocol_sources) or not bench.protocol_sources
    assert set(referenced_benchmarks()) == {n for n, b in shipped.items() if (b.folder / "reference.csv").is_file()}


@pytest.mark.parametrize(("names", "grouped"), [(("acc", "strict_acc"), ("acc",)), (("a", "b", "a"), ())],
                         ids=["group-metric-inside-another", "duplicate"])
def test_metric_names_that_would_collide_in_a_group_are_refused(names: tuple[str, ...],
                                                                grouped: tuple[str, ...]) -> None:
    with pytest.raises(InterfaceError, match="tasks/demo"):
        check_metric_names("demo", names, grouped)


def test_a_name_inside_another_is_fine_when_no_group_aggregates_it() -> None:
    assert check_metric_names("demo", ("src_a", "src_a_pro"), ("accuracy",)) == ("src_a", "src_a_pro")


def test_a_package_missing_members_is_named(tmp_path: Path) -> None:
    module = types.ModuleType("lmms_agentic.tasks.demo")
    module.METRICS = ("acc",)  # type: ignore[attr-defined]
    with pytest.raises(InterfaceError, match=r"tasks/demo/__init__.py must provide core, load_docs"):
        check_package("demo", module)


@pytest.mark.parametrize("name", sorted(benchmarks.all_benchmarks()))
def test_every_shipped_benchmark_provides_the_interface(name: str) -> None:
    package = benchmarks.get(name).package()
    assert isinstance(package, BenchmarkPackage) and package.METRICS
    assert benchmarks.get(name).headline_metric in package.METRICS
