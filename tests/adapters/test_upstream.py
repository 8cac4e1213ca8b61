"""The upstream-export interface (`adapters/upstream.py`): every benchmark's `upstream.py` provides it, a folder that
misses a member is named with the member, and the shared source texts work as pasted."""

from __future__ import annotations

import ast
import types
from fractions import Fraction

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.upstream import (
    FRAME_SAMPLER,
    MEMBERS,
    HooksRequest,
    UpstreamError,
    check_hooks,
    lm_eval_docs,
)


@pytest.mark.parametrize("name", sorted(benchmarks.all_benchmarks()))
def test_every_benchmark_provides_its_export_hooks(name: str) -> None:
    hooks = check_hooks(name, benchmarks.get(name).package().export_hooks())
    assert hooks.ORIGIN.bibtex.startswith("@") and hooks.ORIGIN.verbatim
    request = HooksRequest(harness="lmms-eval", package="lmms_eval", hub_id="org/data", revision=None)
    source = hooks.utils_source(request)
    ast.parse(source)
    assert "__PACKAGE__" not in source and "lmms_agentic" not in source


@pytest.mark.parametrize("missing", ["ORIGIN", "PR_STEPS", "utils_source"])
def test_a_missing_member_is_named(missing: str) -> None:
    module = types.ModuleType("fake_upstream")
    for member in MEMBERS:
        if member != missing:
            setattr(module, member, (lambda request: "") if member == "utils_source" else ())
    with pytest.raises(UpstreamError, match=rf"tasks/fake/upstream.py must provide {missing} "):
        check_hooks("fake", module)


@pytest.mark.parametrize(("revision", "shown", "todo"), [(None, "main", True), ("abc123", "abc123", False)])
def test_an_unpinned_revision_is_marked(revision: str | None, shown: str, todo: bool) -> None:
    request = HooksRequest(harness="lm-eval", package="lm_eval", hub_id="org/data", revision=revision)
    assert request.revision_or_main == shown and bool(request.revision_todo) is todo


def test_lm_eval_docs_bake_each_tasks_settings_in() -> None:
    text = lm_eval_docs({"t_a": {"video_mode": "frames", "cot": False, "n": None}}, {"t_a": "docs_general"})
    calls: list[tuple[object, dict[str, object]]] = []
    namespace = {"docs_general": lambda dataset: f"rows of {dataset}",
                 "_with_settings": lambda docs, settings: calls.append((docs, settings)) or "done"}
    exec(compile(text, "<utils>", "exec"), namespace)
    assert namespace["t_a_docs"]("split") == "done"
    assert calls == [("rows of split", {"video_mode": "frames", "cot": False, "n": None})]


@pytest.mark.parametrize(("total", "wanted", "indices"), [(5, 8, [0, 1, 2, 3, 4]), (10, 1, [4]), (9, 3, [0, 4, 8]),
                                                          (10, 4, [0, 3, 6, 9]), (8, 3, [0, 4, 7])])
def test_the_frame_sampler_rounds_half_up(total: int, wanted: int, indices: list[int]) -> None:
    import functools

    from PIL import Image

    namespace = {"functools": functools, "Fraction": Fraction, "Image": Image}
    exec(compile(FRAME_SAMPLER, "<utils>", "exec"), namespace)
    assert namespace["uniform_indices"](total, wanted) == indices


@pytest.mark.parametrize(("harness", "mode", "refused"), [("lm-eval", "frames", False), ("lm-eval", "native", True),
                                                          ("lm-eval", None, True), ("lmms-eval", "native", False)])
def test_lm_eval_exports_need_sampled_frames(harness: str, mode: str | None, refused: bool) -> None:
    request = HooksRequest(harness=harness, package="pkg", hub_id="org/data", revision=None,
                           settings={"t_video": {"video_mode": mode}})
    if refused:
        with pytest.raises(ValueError, match="t_video: lm-eval has no video input"):
            request.require_frames()
    else:
        request.require_frames()
