"""The upstream-export helpers of `adapters/upstream.py` (the members every benchmark's `upstream.py` provides are
tested in tests/export/test_upstream_hooks.py): revision marking, lm-eval's per-task settings, the frames-only rule,
and the exported frame sampler picking the plugin's frames."""

from __future__ import annotations

import pytest

from lmms_agentic.adapters import frames
from lmms_agentic.adapters.core import sampling
from lmms_agentic.adapters.glue import hub_media
from lmms_agentic.adapters.upstream import HooksRequest, lm_eval_docs


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
    assert sampling.uniform_indices(total, wanted) == indices
    assert hub_media.uniform_indices is frames.uniform_indices is sampling.uniform_indices  # one rule, both readers


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
