"""AgentVQA hooks: variants, field-map fixes, prompt snapshots, frames vs native video, payloads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import datasets
import pytest

import lmms_agentic
from lmms_agentic.adapters import frames
from lmms_agentic.adapters.core.schema import RecordError
from lmms_agentic.tasks.agentvqa import hooks, release
from lmms_agentic.tasks.agentvqa.core import records

from ..conftest import placeholder

SNAPSHOTS = Path(__file__).parent / "snapshots"

TASKS = Path(lmms_agentic.tasks_dir()) / "agentvqa"
MINI = TASKS / "data" / "mini"


def _config(task: str) -> dict[str, Any]:
    from lmms_eval import utils

    config: dict[str, Any] = utils.load_yaml_config(str(TASKS / f"{task}.yaml"), mode="full")
    return config


@pytest.fixture(scope="module")
def manifest() -> datasets.Dataset:
    return placeholder("agentvqa")


def _docs(task: str, manifest: datasets.Dataset) -> datasets.Dataset:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        return _config(task)["process_docs"](manifest)


def _kwargs(task: str = "agentvqa_web_agents", backend: str = "default") -> dict[str, Any]:
    return dict(_config(task)["lmms_eval_specific_kwargs"][backend])


def test_each_domain_task_gets_its_rows_and_variant_settings(manifest: datasets.Dataset) -> None:
    for domain in records.DOMAINS:
        docs = _docs(f"agentvqa_{domain}", manifest)
        assert len(docs) == 3 and set(docs["domain"]) == {domain}
        assert set(docs["coord_convention"]) == {"pixel_xy"} and all(docs["with_history"])
    gemini = _docs("agentvqa_coords_norm1000_yx_robotics", manifest)
    assert set(gemini["coord_convention"]) == {"norm1000_yx"}
    assert not any(_docs("agentvqa_web_agents_nohistory", manifest)["with_history"])


def test_history_only_in_the_history_variant(manifest: datasets.Dataset) -> None:
    kwargs = _kwargs()
    with_history = hooks.doc_to_text(_docs("agentvqa_web_agents", manifest)[0], kwargs)
    without = hooks.doc_to_text(_docs("agentvqa_web_agents_nohistory", manifest)[0], kwargs)
    assert "Previous actions:\nPRESS_HOME\ntap (360, 200)\nSCROLL_DOWN\nOptions:" in with_history
    assert "Previous actions" not in without
    assert with_history.replace("Previous actions:\nPRESS_HOME\ntap (360, 200)\nSCROLL_DOWN\n", "") == without


SNAPSHOT_CASES = [("agentvqa_web_agents", "aitw_0001"), ("agentvqa_coords_norm1000_yx_web_agents", "screenspot_0001"),
                  ("agentvqa_coords_norm1000_xy_robotics", "roborefit_0001"),
                  ("agentvqa_egocentric_videos", "vsibench_0001"), ("agentvqa_spatial_planning", "space10_0001")]


@pytest.mark.parametrize(("task", "item"), SNAPSHOT_CASES, ids=[f"{t}-{i}" for t, i in SNAPSHOT_CASES])
def test_prompt_snapshot(task: str, item: str, manifest: datasets.Dataset, update_snapshots: bool) -> None:
    doc = next(row for row in _docs(task, manifest) if row["id"] == item)
    messages = hooks.doc_to_messages(doc, _kwargs(task))
    content = [c["text"] if c["type"] == "text" else f"<{c['type']}>" for c in messages[0]["content"]]
    rendered = {"text": hooks.doc_to_text(doc, _kwargs(task)), "user_content": content}
    snapshot = SNAPSHOTS / f"{task}__{item}.json"
    if update_snapshots or not snapshot.exists():
        snapshot.write_text(json.dumps(rendered, indent=2) + "\n")
        if not update_snapshots:
            pytest.fail(f"created missing snapshot {snapshot.name}; review it and rerun")
    assert rendered == json.loads(snapshot.read_text())


def test_frames_mode_gives_32_frames_and_logs_them(manifest: datasets.Dataset) -> None:
    frames.clear_cache()
    doc = next(row for row in _docs("agentvqa_egocentric_videos", manifest) if row["id"] == "vsibench_0001")
    messages = hooks.doc_to_messages(doc, _kwargs("agentvqa_egocentric_videos"))
    assert [c["type"] for c in messages[0]["content"]] == ["image"] * 32 + ["text"]
    video = hooks.record(doc, ["C"])["video"]
    assert video["video"] == "videos/kitchen_walk.mp4" and video["n_frames"] == 32 and video["total_frames"] == 100
    assert video["indices"][:4] == [0, 3, 6, 10] and video["decoder"] == "decord"


def test_native_video_backends_get_the_path(manifest: datasets.Dataset) -> None:
    doc = next(row for row in _docs("agentvqa_games", manifest) if row["id"] == "marioqa_0001")
    messages = hooks.doc_to_messages(doc, _kwargs("agentvqa_games", backend="qwen2_5_vl"))
    (video,) = [c for c in messages[0]["content"] if c["type"] == "video"]
    assert video["url"] == str((MINI / "videos" / "mario_jump.mp4").resolve())


def test_the_same_video_is_decoded_once(manifest: datasets.Dataset) -> None:
    frames.clear_cache()
    docs = [row for row in _docs("agentvqa_egocentric_videos", manifest) if row["video"] == "videos/kitchen_walk.mp4"]
    assert len(docs) == 2  # two questions share the clip
    for doc in docs * 3:
        hooks.doc_to_visual(doc, _kwargs("agentvqa_egocentric_videos"))
    assert frames.cache_stats() == {"hits": 5, "misses": 1, "cached_videos": 1}


def test_media_path_escaping_the_dataset_is_rejected(manifest: datasets.Dataset) -> None:
    doc = dict(_docs("agentvqa_games", manifest)[1])
    doc["video"] = "../../../../etc/hostname"
    with pytest.raises(RecordError, match="escapes the dataset folder"):
        hooks.doc_to_visual(doc, _kwargs("agentvqa_games"))


def test_payload(manifest: datasets.Dataset) -> None:
    doc = next(row for row in _docs("agentvqa_coords_norm1000_yx_web_agents", manifest) if row["id"] == "aitw_0001")
    record = hooks.record(doc, ["The next action is to tap the button, so the answer is A."])
    assert (record["pred"], record["rule"], record["correct"]) == ("A", "declaration", True)
    assert record["coord_convention"] == "norm1000_yx" and record["with_history"] is True
    assert hooks.record(doc, ["tap (789, 750)"])["pred"] == "A"  # echoed option in the run's convention
    assert hooks.record(doc, ["[LMMS_EVAL_REQUEST_FAILED after 3 retries]"])["request_failed"] is True


def test_renamed_column_is_fixed_by_a_schema_file_next_to_the_data(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A release that calls `source_dataset` `source`: loading fails naming the field and the fix; a two-line
    schema file next to the data (no code edit) makes it load."""
    copy = tmp_path / "agentvqa"
    shutil.copytree(MINI / "videos", copy / "videos")
    raw = datasets.load_dataset("parquet", data_files=str(next(MINI.rglob("*.parquet"))), split="train")
    (copy / "data").mkdir()
    raw.rename_column("source_dataset", "source").to_parquet(str(copy / "data" / "test-00000-of-00001.parquet"))
    monkeypatch.setenv("LMMS_AGENTIC_DATA", str(tmp_path))
    expected = r"missing source \(column 'source_dataset'\).*unexpected \['source'\]"
    with pytest.raises(release.SchemaError, match=expected):
        hooks.all_docs()
    (copy / "lmms_agentic_schema.yaml").write_text("fields:\n  source: source\n")
    docs = hooks.all_docs()
    assert len(docs) == 15 and "aitw" in docs["source"]


@pytest.mark.parametrize(("reply", "judged", "pred", "path", "reason"), [
    ("Hmm, the second one looks right to me.", "B", "B", "judge", None),
    ("Hmm, hard to say.", "NONE", None, "none", "judge_none"),
    ("C", "B", "C", "rules", None),
], ids=["judge-letter", "judge-none", "rules-first"])
def test_the_mcq_judge_fallback_reaches_the_core_when_switched_on(
        reply: str, judged: str, pred: str | None, path: str, reason: str | None, manifest: datasets.Dataset,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LMMS_AGENTIC_MCQ_JUDGE=1: the plugin passes `judges.mcq_fallback` to the core as its `ChoiceJudge`; the
    record keeps the judge's result, and the judge never sees a reply the rules read."""
    from lmms_agentic.judges.client import reset_default_client
    from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply

    doc = next(row for row in _docs("agentvqa_games", manifest) if row["id"] == "gameqa_0001")
    with ScriptedJudgeServer(lambda call: ScriptedReply(judged)) as server:
        for name, value in {"LMMS_AGENTIC_MCQ_JUDGE": "1", "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url,
                            "LMMS_AGENTIC_JUDGE_MODEL": "judge-test", "LMMS_AGENTIC_JUDGE_API_KEY": "sk-test",
                            "LMMS_AGENTIC_JUDGE_CACHE": str(tmp_path / "cache")}.items():
            monkeypatch.setenv(name, value)
        reset_default_client()
        try:
            record = hooks.record(doc, [reply])
        finally:
            reset_default_client()
        asked = server.request_count
    assert (record["pred"], record["extraction_path"], record["no_answer_reason"]) == (pred, path, reason)
    assert record["correct"] is (pred == doc["answer"]) and record["score"] == (100.0 if pred == doc["answer"] else 0)
    if path == "rules":
        assert asked == 0 and record["judge"] is None
    else:
        assert asked == 1 and record["judge"]["template_id"] == "mcq_fallback" and record["rule"] == path
