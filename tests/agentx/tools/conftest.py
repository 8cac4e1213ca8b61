"""Fixtures shared by the executed-tools tests: one pre-started bubblewrap sandbox per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lmms_agentic.tasks.agentx.tools import isolation
from lmms_agentic.tasks.agentx.tools.sandbox import Sandbox


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    """A warm sandbox; the module's tests that need it are skipped, with the reason, where bubblewrap cannot run."""
    reason = isolation.probe()
    if reason is not None:
        pytest.skip(f"no sandbox here: {reason}")
    box = Sandbox(warm=1)
    yield box
    box.close()
