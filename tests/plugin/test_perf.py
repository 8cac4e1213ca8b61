"""`make bench` (perf/) stays runnable: every section module imports and has the `run(quick)` entry the runner calls
(the figures themselves are measured by `make bench`, never asserted here)."""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from perf.__main__ import SECTIONS


@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_imports_and_has_a_run_entry(section: str) -> None:
    module = importlib.import_module(f"perf.{section}")
    assert list(inspect.signature(module.run).parameters) == ["quick"]


def test_quick_or_partial_runs_leave_the_committed_results_alone(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m perf --sections parsers --quick` once overwrote perf/results/ (the full bench's figures)."""
    import perf.__main__ as runner
    from perf.common import Figure

    committed, cache = tmp_path / "results", tmp_path / "cache"
    monkeypatch.setattr(runner, "RESULTS", committed)
    monkeypatch.setattr(runner, "CACHE", cache)
    fake = types.ModuleType("perf.parsers")
    fake.run = lambda quick: [Figure("parsers", "a figure", 1.0, "s", "< 2 s", True)]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "perf.parsers", fake)
    assert runner.main(["--sections", "parsers", "--quick"]) == 0
    assert not committed.exists()
    written = json.loads((cache / "results" / "latest.json").read_text())
    assert written["meta"]["quick"] is True and written["meta"]["sections"] == ["parsers"]
    assert runner.results_dir(list(SECTIONS), quick=False) == committed
    assert runner.results_dir(list(SECTIONS), quick=True) == cache / "results"


SYNTHETIC = {"LMMS_AGENTIC_DATA": "/synthetic/copies", "LMMS_AGENTIC_DATA_AGENTX": "/synthetic/copies/agentx"}


def test_a_section_finds_the_environment_as_the_user_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sections share one process; `aggregate`, `media` and `hook_overhead` point the benchmarks at synthetic
    copies through environment variables, which once reached the `agentx_tools` section and stopped it."""
    import perf.__main__ as runner

    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    monkeypatch.setenv("LMMS_AGENTIC_USER_SETTING", "kept")
    monkeypatch.delenv("LMMS_AGENTIC_DATA_AGENTX", raising=False)
    seen: dict[str, str | None] = {}

    def pollutes(quick: bool) -> list[object]:
        import os

        os.environ.update(SYNTHETIC)
        del os.environ["LMMS_AGENTIC_USER_SETTING"]
        return []

    def reads(quick: bool) -> list[object]:
        import os

        seen.update({key: os.environ.get(key) for key in (*SYNTHETIC, "LMMS_AGENTIC_USER_SETTING")})
        return []

    for name, run in (("parsers", pollutes), ("aggregate", reads)):
        fake = types.ModuleType(f"perf.{name}")
        fake.run = run  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, f"perf.{name}", fake)
    assert runner.main(["--sections", "parsers,aggregate", "--no-write"]) == 0
    assert seen == {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_DATA_AGENTX": None,
                    "LMMS_AGENTIC_USER_SETTING": "kept"}


def test_the_agentx_tools_section_sets_the_data_it_measures_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run after the synthetic-data sections (or by a user pointing Agent-X elsewhere), the section still plays the
    mini split's gold scripts (it raised `KeyError` in `_script`), and it leaves the environment as it found it."""
    import os

    from perf import agentx_tools

    for key, value in SYNTHETIC.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("LMMS_AGENTIC_AGENTX_TOOLS", "*=remote")
    with agentx_tools.bench_environment():
        docs = agentx_tools._docs()
        script = agentx_tools._script(docs)
        assert os.environ["LMMS_AGENTIC_DATA"] == "mini"
        assert "LMMS_AGENTIC_DATA_AGENTX" not in os.environ and "LMMS_AGENTIC_AGENTX_TOOLS" not in os.environ
    assert len(docs) == agentx_tools.N_TASKS and sorted(script) == sorted(doc["query"] for doc in docs)
    assert all(script.values())
    assert {key: os.environ.get(key) for key in SYNTHETIC} == SYNTHETIC
    assert os.environ["LMMS_AGENTIC_AGENTX_TOOLS"] == "*=remote"
    measured: dict[str, str] = {}

    def measure(repeats: int = agentx_tools.REPEATS) -> dict[str, Any]:
        measured.update(os.environ)
        return {"sequential_s": 10.0, "batched_s": 1.0, "batched_all_s": [1.0], "instant_s": 0.8,
                "instant_all_s": [0.8], "one_cohort_s": 1.2, "one_cohort_instant_s": 0.5, "identical": True,
                "instant_identical": True, "tool_s": 0.1, "critical_tool_s": 0.1, "requests": 1, "calls": 1,
                "peak_in_flight": 1, "outside_model_s": 0.1, "model_s": 0.9, "instant_model_s": 0.7,
                "load": (0.0, 0.0)}

    monkeypatch.setattr(agentx_tools, "measure", measure)
    assert [figure.value for figure in agentx_tools.run()] == [10.0, 1.0, 1.25, 10.0, 2.0]
    assert measured["LMMS_AGENTIC_DATA"] == "mini" and "LMMS_AGENTIC_DATA_AGENTX" not in measured
