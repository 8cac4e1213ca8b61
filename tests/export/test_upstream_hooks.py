"""What a benchmark's `tasks/<b>/upstream.py` provides (`adapters.upstream`): every benchmark provides the members,
a missing one is named, and only a benchmark whose core has no `task.py` writes its own `utils.py` source."""

from __future__ import annotations

import ast
import types

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.upstream import MEMBERS, HooksRequest, UpstreamError, check_hooks
from lmms_agentic.lmeval.export import generated


@pytest.mark.parametrize("name", sorted(benchmarks.all_benchmarks()))
def test_every_benchmark_provides_its_export_hooks(name: str) -> None:
    hooks = check_hooks(name, benchmarks.get(name).package().export_hooks())
    assert hooks.ORIGIN.bibtex.startswith("@") and hooks.ORIGIN.verbatim
    if generated.core_task(name) is not None:
        assert not hasattr(hooks, "utils_source"), "a core with task.py gets a generated utils.py"
        return
    request = HooksRequest(harness="lmms-eval", package="lmms_eval", hub_id="org/data", revision=None)
    source = hooks.utils_source(request)  # type: ignore[attr-defined]
    ast.parse(source)
    assert "__PACKAGE__" not in source and "lmms_agentic" not in source


@pytest.mark.parametrize("missing", ["ORIGIN", "PR_STEPS", "LEFT_OUT_CORE"])
def test_a_missing_member_is_named(missing: str) -> None:
    module = types.ModuleType("fake_upstream")
    for member in MEMBERS:
        if member != missing:
            setattr(module, member, ())
    with pytest.raises(UpstreamError, match=rf"tasks/fake/upstream.py must provide {missing} "):
        check_hooks("fake", module)
