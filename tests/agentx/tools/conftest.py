"""Fixtures shared by the executed-tools tests: one pre-started bubblewrap sandbox, the mini split's documents by id
and a tool runtime with the default backends, each once per test module."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.tasks.agentx.tools import isolation
from lmms_agentic.tasks.agentx.tools.sandbox import Sandbox
from lmms_agentic.tasks.agentx.tools.toolset import agentx_runtime, config_from_env


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    """A warm sandbox; the module's tests that need it are skipped, with the reason, where bubblewrap cannot run."""
    reason = isolation.probe()
    if reason is not None:
        pytest.skip(f"no sandbox here: {reason}")
    box = Sandbox(warm=1)
    yield box
    box.close()


@pytest.fixture(scope="module")
def docs() -> dict[str, dict[str, Any]]:
    """The mini split's Agent-X documents by id, as the tasks load them."""
    os.environ.setdefault("LMMS_AGENTIC_DATA", "mini")
    from lmms_agentic.tasks.agentx import hooks as agentx_hooks

    return {row["id"]: dict(row) for row in agentx_hooks.all_docs()}


@pytest.fixture(scope="module")
def runtime() -> Iterator[ToolRuntime]:
    """A tool runtime with the default backends and no pre-started sandbox (closed with the module)."""
    built = agentx_runtime(config_from_env({}), sandbox_warm=0)
    yield built
    built.close()
