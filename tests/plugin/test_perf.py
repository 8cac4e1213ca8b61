"""`make bench` (perf/) stays runnable: every section module imports and has the `run(quick)` entry the runner calls
(the figures themselves are measured by `make bench`, never asserted here)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from perf.__main__ import SECTIONS


@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_imports_and_has_a_run_entry(section: str) -> None:
    module = importlib.import_module(f"perf.{section}")
    assert list(inspect.signature(module.run).parameters) == ["quick"]
