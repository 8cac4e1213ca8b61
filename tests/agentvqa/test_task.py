"""AgentVQA's `core/task.py` (the `adapters.core.task.CoreTask` its glue reads): the metric table against the task
YAMLs, the scored record, the variants, release rows -> documents, and the prompt with a stand-in media reader."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from PIL import Image

import lmms_agentic
from lmms_agentic.adapters.core.schema import McqDoc, Visuals
from lmms_agentic.adapters.core.task import Prompt, check_core_task, task_values
from lmms_agentic.adapters.samples import LOOP_VIEWS
from lmms_agentic.tasks import agentvqa
from lmms_agentic.tasks.agentvqa import hooks
from lmms_agentic.tasks.agentvqa.core import records, task

TASKS = Path(lmms_agentic.tasks_dir()) / "agentvqa"
MINI_ROWS = TASKS / "data" / "mini" / "data" / "test-00000-of-00001.parquet"
SETTINGS = {"history_header": "Previous actions:", "post_prompt": "Answer with the letter.", "n_frames": 3}


def _doc(convention: str = "norm1000_yx", history: bool = True) -> dict[str, Any]:
    """A Web Agents coordinate item (option A taps pixel (100, 25) of a 200x100 screenshot) in a variant."""
    row = McqDoc(id="aitw_1", benchmark="agentvqa", domain="web_agents", source="aitw", question="Next?",
                 options=("tap (100, 25)", "swipe up", "press back", "type hello"), gold_index=0,
                 visuals=Visuals(n_images=1), context="PRESS_HOME",
                 metadata={"input_type": "image", "option_coordinates": [[100, 25], None, None, None],
                           "image_width": 200, "image_height": 100, "coordinate_format": "point_xy_abs"}).to_row()
    return {**row, "coord_convention": convention, "with_history": history}


def test_the_core_is_a_core_task() -> None:
    assert check_core_task(task) is task and task.BENCHMARK == "agentvqa"


# --------------------------------------------------------------------------- metrics

def _leaf_yamls() -> list[Path]:
    return sorted(p for p in TASKS.glob("agentvqa_*.yaml") if "task:" in p.read_text() and "group:" not in
                  p.read_text())


@pytest.mark.parametrize("path", _leaf_yamls(), ids=lambda p: p.stem)
def test_yaml_metric_list_is_its_domains_task_metrics_then_the_loop_rates(path: Path) -> None:
    from lmms_eval import utils

    config = utils.load_yaml_config(str(path), mode="full")
    variant = config["process_docs"].__name__.removeprefix("docs_")
    (domain,) = [d for d in records.DOMAINS if variant == d or variant.startswith(f"{d}_")]
    listed = config["metric_list"]
    assert tuple(m["metric"] for m in listed) == (*task.TASK_METRICS[domain], *LOOP_VIEWS)
    for entry in listed[:len(task.TASK_METRICS[domain])]:
        metric = task.METRICS[entry["metric"]]
        assert (entry["aggregation"], entry["higher_is_better"]) == (metric.aggregation, metric.higher_is_better)


def test_one_kind_per_domain_and_every_metric_reported_by_some_kind() -> None:
    assert set(task.TASK_METRICS) == set(records.DOMAINS)
    assert {name for names in task.TASK_METRICS.values() for name in names} == set(task.METRICS)
    assert {f"src_{slug}" for slug in records.SOURCES} <= set(task.METRICS)
    assert (*task.METRICS, *LOOP_VIEWS) == agentvqa.METRICS


# --------------------------------------------------------------------------- score

FAILED = "[LMMS_EVAL_REQUEST_FAILED after 3 retries]"
SCORE_CASES = [
    # reply, convention: pred, correct, rule, no_answer_reason, request_failed, no_answer_rate view
    ("A", "norm1000_yx", "A", True, "bare_label", None, False),
    ("The answer is B.", "norm1000_yx", "B", False, "declaration", None, False),
    ("I am not sure.", "norm1000_yx", None, False, "none", "no_match", False),
    ("", "norm1000_yx", None, False, "none", "empty", False),
    (FAILED, "norm1000_yx", None, False, "none", "request_failed", True),
    ("tap (250, 500)", "norm1000_yx", "A", True, "option_text", None, False),  # option A as shown: (y, x) / 1000
    ("tap (500, 250)", "norm1000_yx", None, False, "none", "no_match", False),  # ... echoed in (x, y)
    ("tap (100, 25)", "norm1000_yx", None, False, "none", "no_match", False),  # ... echoed in released pixels
    ("tap (100, 25)", "pixel_xy", "A", True, "option_text", None, False),
]


@pytest.mark.parametrize(("reply", "convention", "pred", "correct", "rule", "reason", "failed"), SCORE_CASES,
                         ids=["gold", "wrong", "no-answer", "empty", "request-failed", "shown-option",
                              "option-in-xy", "option-in-pixels", "pixel-run-option"])
def test_score(reply: str, convention: str, pred: str | None, correct: bool, rule: str, reason: str | None,
               failed: bool) -> None:
    record = task.score(_doc(convention), reply)
    assert (record["pred"], record["correct"], record["rule"], record["no_answer_reason"]) == (pred, correct, rule,
                                                                                            reason)
    assert record["extraction_path"] == ("rules" if pred else "none") and record["judge"] is None
    assert record["request_failed"] is failed and record["score"] == (100.0 if correct else 0.0)
    assert {key: record[key] for key in ("benchmark", "id", "domain", "source", "answer", "coord_convention",
                                         "coords_status", "with_history")} == {
        "benchmark": "agentvqa", "id": "aitw_1", "domain": "web_agents", "source": "aitw", "answer": "A",
        "coord_convention": convention, "coords_status": "rerendered", "with_history": True}
    values = task_values(task, "web_agents", record)
    assert values["accuracy"] is record
    assert values["no_answer_rate"] == {"score": 0.0 if pred else 100.0}
    assert values["request_failed_rate"] == {"score": 100.0 if failed else 0.0}
    assert values["coords_as_released"] == {"score": 0.0}
    assert values["src_aitw"] == {"score": 100.0 if correct else 0.0} and values["src_monday"] is None


class ScriptedJudge:
    """A `ChoiceJudge` that answers every call with one verdict and remembers the calls."""

    def __init__(self, verdict: task.ChoiceVerdict) -> None:
        self.verdict = verdict
        self.calls: list[task.ChoiceCall] = []

    def __call__(self, calls: Sequence[task.ChoiceCall]) -> list[task.ChoiceVerdict]:
        self.calls.extend(calls)
        return [self.verdict for _ in calls]


LOGGED = {"template_id": "mcq_fallback", "label": "C"}
JUDGE_CASES = [
    # reply, verdict: pred, rule, extraction_path, no_answer_reason, judge asked
    ("Hmm, hard to say.", task.ChoiceVerdict("C", None, LOGGED), "C", "judge", "judge", None, True),
    ("Hmm, hard to say.", task.ChoiceVerdict(None, "judge_none", LOGGED), None, "none", "none", "judge_none", True),
    ("Hmm, hard to say.", task.ChoiceVerdict(None, "transport_error", None), None, "none", "none",
     "transport_error", True),
    ("B", task.ChoiceVerdict("C", None, LOGGED), "B", "bare_label", "rules", None, False),
    ("", task.ChoiceVerdict("C", None, LOGGED), None, "none", "none", "empty", False),
    (FAILED, task.ChoiceVerdict("C", None, LOGGED), None, "none", "none", "request_failed", False),
]


@pytest.mark.parametrize(("reply", "verdict", "pred", "rule", "path", "reason", "asked"), JUDGE_CASES,
                         ids=["judge-letter", "judge-none", "judge-unscored", "rules-first", "empty-not-judged",
                              "failed-not-judged"])
def test_the_judge_reads_only_what_the_rules_could_not(reply: str, verdict: task.ChoiceVerdict, pred: str | None,
                                                       rule: str, path: str, reason: str | None,
                                                       asked: bool) -> None:
    judge = ScriptedJudge(verdict)
    record = task.score(_doc(), reply, judge)
    assert (record["pred"], record["rule"], record["extraction_path"], record["no_answer_reason"]) == (
        pred, rule, path, reason)
    assert record["correct"] is False and record["judge"] == (verdict.logged if asked else None)
    assert judge.calls == ([task.ChoiceCall("aitw_1", "Next?", ("tap (250, 500)", "swipe up", "press back",
                                                                 "type hello"), reply)] if asked else [])


# --------------------------------------------------------------------------- variants and documents

def test_every_variant_has_its_process_docs_and_selects_its_domain_with_its_settings() -> None:
    docs = [{"id": str(i), "domain": domain} for i, domain in enumerate(sorted(records.DOMAINS) * 2)]
    assert len(task.VARIANTS) == 16
    for name, variant in task.VARIANTS.items():
        assert callable(getattr(hooks, f"docs_{name}"))
        chosen = variant(docs)
        domain = "web_agents" if name == "web_agents_nohistory" else name.partition("_norm1000")[0]
        convention = "norm1000" + name.partition("_norm1000")[2] if "norm1000" in name else "pixel_xy"
        assert [d["id"] for d in chosen] == [d["id"] for d in docs if d["domain"] == domain]
        assert {(d["coord_convention"], d["with_history"]) for d in chosen} == {
            (convention, name != "web_agents_nohistory")}
    assert all(set(doc) == {"id", "domain"} for doc in docs), "variants never change their input"


def _png(size: tuple[int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "white").save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize(("cell", "size"), [
    ({"bytes": _png((64, 32)), "path": "a.png"}, [64, 32]), (_png((64, 32)), [64, 32]),
    (Image.new("RGB", (8, 4)), [8, 4]), ({"bytes": None, "path": "images/a.png"}, [None, None]),
], ids=["cell-bytes", "raw-bytes", "pillow-image", "path-only"])
def test_documents_size_coordinate_items_from_in_memory_images(cell: Any, size: list[int | None]) -> None:
    row = {"id": "screenspot_1", "domain": "Web Agents", "source_dataset": "ScreenSpot", "question": "Where?",
           "options": ["click (1, 2)", "click (3, 4)", "scroll", "back"], "answer": "B", "images": [cell],
           "option_coordinates": [[1, 2], [3, 4], None, None], "coordinate_format": "point_xy_abs"}
    (doc,) = task.documents([row])
    meta = json.loads(doc["metadata_json"])
    assert [meta["image_width"], meta["image_height"]] == size and doc["images"] == [cell]
    assert (doc["domain"], doc["source"], doc["answer"]) == ("web_agents", "screenspot", "B")


def test_documents_and_variants_give_the_plugins_rows_on_the_mini_split(mini_env: None) -> None:
    core_docs = task.documents(pq.read_table(MINI_ROWS).to_pylist())
    for name in ("web_agents", "robotics_norm1000_yx", "egocentric_videos", "web_agents_nohistory"):
        plugin = hooks.select_variant(name).remove_columns(["images", "media_root"]).to_list()
        assert [{k: v for k, v in doc.items() if k != "images"} for doc in task.VARIANTS[name](core_docs)] == plugin


# --------------------------------------------------------------------------- prompt

class FakeMedia:
    """A `MediaReader` that names what it was asked for."""

    def __init__(self, native: bool = False) -> None:
        self.native = native

    def image(self, cell: Any) -> Any:
        return ("image", cell)

    def video(self, path: str, n_frames: int) -> Any:
        return Path(path) if self.native else [("frame", path, i) for i in range(n_frames)]


@pytest.mark.parametrize(("video", "native", "media"), [
    ("", False, [("image", "c0"), ("image", "c1")]),
    ("videos/v.mp4", False, [("image", "c0"), ("image", "c1"), *[("frame", "videos/v.mp4", i) for i in range(3)]]),
    ("videos/v.mp4", True, [("image", "c0"), ("image", "c1"), Path("videos/v.mp4")]),
], ids=["images", "images-then-frames", "native-video"])
def test_prompt_puts_images_then_video_then_the_text(video: str, native: bool, media: list[Any]) -> None:
    doc = {**_doc("pixel_xy"), "images": ["c0", "c1"], "video": video}
    shown = task.prompt(doc, SETTINGS, FakeMedia(native))
    assert shown == Prompt(None, (*media, "Next?\nPrevious actions:\nPRESS_HOME\nOptions:\nA. tap (100, 25)\n"
                                          "B. swipe up\nC. press back\nD. type hello\nAnswer with the letter."))
