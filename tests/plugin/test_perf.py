"""`make bench` (perf/) stays runnable: every section module imports and has the `run(quick)` entry the runner calls
(the figures themselves are measured by `make bench`, never asserted here)."""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
from pathlib import Path

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
