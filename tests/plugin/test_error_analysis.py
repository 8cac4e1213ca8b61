"""The generic error-mode analysis (`lmms_agentic.error_analysis`): sampling, statistics, image-carrying judge
requests, image-support declaration, a constructed run with scripted modes, the agreement command, and one
end-to-end run on real lmms-eval output against the loopback judge."""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmms_agentic import cli
from lmms_agentic.error_analysis import agreement, judging, output, run
from lmms_agentic.judges import JsonObjectParser, JudgeConfig, PromptTemplate, Text
from lmms_agentic.judges import error_modes as spec
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply

from ..conftest import run_lmms_eval

MARK = re.compile(r"SCRIPTED_MODE=([A-Za-z -]+)")


def _user_text(call: ScriptedCall) -> str:
    content = call.body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content if "text" in p)


def _images(call: ScriptedCall) -> list[str]:
    content = call.body["messages"][-1]["content"]
    return [] if isinstance(content, str) else [p["image_url"]["url"] for p in content if "image_url" in p]


def mode_from_reply(call: ScriptedCall) -> ScriptedReply:
    """The judge double: the mode named by the model reply's SCRIPTED_MODE marker, else the taxonomy's first mode."""
    marked = MARK.search(_user_text(call))
    listed = re.search(r"^1\. ([^:]+):", str(call.body["messages"][0]["content"]), re.MULTILINE)
    mode = marked.group(1).strip() if marked else listed.group(1) if listed else "?"
    return ScriptedReply(json.dumps({"mode": mode, "reason": f"scripted\nas {mode}"}))


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedJudgeServer]:
    with ScriptedJudgeServer(mode_from_reply) as server:
        for key, value in {"LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url, "LMMS_AGENTIC_JUDGE_MODEL": "vlm-judge",
                           "LMMS_AGENTIC_JUDGE_CACHE": str(tmp_path / "cache"), "LMMS_AGENTIC_JUDGE_VISION": "1",
                           "LMMS_AGENTIC_JUDGE_MAX_RETRIES": "0", "LMMS_AGENTIC_DATA": "mini"}.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("LMMS_AGENTIC_JUDGE_PRESET", raising=False)
        yield server


# ------------------------------------------------------------------ small pieces

@pytest.mark.parametrize(("label", "key"), [
    ("Grounding Error", "grounding_error"), ("COT Failure", "cot_failure"),
    ("Action-Time Disconnect", "action_time_disconnect"), ("  viewpoint gap ", "viewpoint_gap"),
    ("perception_gaps", "perception_gaps"),
])
def test_slug(label: str, key: str) -> None:
    assert spec.slug(label) == key


@pytest.mark.parametrize(("count", "n", "low", "high"), [(0, 10, 0.0, 27.75), (5, 10, 23.66, 76.34),
                                                         (10, 10, 72.25, 100.0), (78, 100, 68.93, 85.0)])
def test_wilson(count: int, n: int, low: float, high: float) -> None:
    got = output.wilson(count, n)
    assert got == pytest.approx((low, high), abs=0.01)
    assert all(math.isnan(v) for v in output.wilson(0, 0))


@pytest.mark.parametrize(("pairs", "kappa"), [
    ([("a", "a"), ("b", "b"), ("a", "a")], 1.0),
    ([("a", "a")] * 5, 1.0),                                                 # one label used by both raters
    ([("a", "a")] * 20 + [("a", "b")] * 5 + [("b", "a")] * 10 + [("b", "b")] * 15, 0.4),   # textbook 2x2 case
    ([("a", "b"), ("b", "a")], -1.0),
    ([], math.nan),
])
def test_cohen_kappa(pairs: list[tuple[str, str]], kappa: float) -> None:
    got = agreement.cohen_kappa(pairs)
    assert (math.isnan(got) and math.isnan(kappa)) or got == pytest.approx(kappa)


def _item(i: int, source: str, domain: str = "d", correct: bool = False, failed: bool = False) -> spec.Item:
    record = {"benchmark": "b", "id": f"{source}_{i}", "domain": domain, "source": source, "answer": "A",
              "pred": "B", "correct": correct, "request_failed": failed}
    return spec.Item("v", "t", record, "reply", "correct")


def test_stratified_sample_spreads_across_sources() -> None:
    items = [_item(i, "a") for i in range(10)] + [_item(i, "b") for i in range(2)] + [_item(i, "c") for i in range(5)]
    items += [_item(i, "a", domain="e") for i in range(3)]
    chosen = run.stratified_sample(items, 9, seed=3)
    per = Counter((i.domain, i.source) for i in chosen)
    assert per[("d", "b")] == 2 and abs(per[("d", "a")] - per[("d", "c")]) <= 1
    assert sum(v for (d, _), v in per.items() if d == "d") == 9 and per[("e", "a")] == 3
    assert [i.id for i in chosen] == [i.id for i in run.stratified_sample(list(reversed(items)), 9, seed=3)]
    assert run.stratified_sample(items, None, 0) == items


@pytest.mark.parametrize(("population", "kept"), [("incorrect", {"a_0"}), ("all", {"a_0", "a_1"})])
def test_eligible(population: str, kept: set[str]) -> None:
    keep, skip = run.eligible([_item(0, "a"), _item(1, "a", correct=True), _item(2, "a", failed=True)], population)
    assert {i.id for i in keep} == kept and "a_2" in {i.id for i in skip}


@pytest.mark.parametrize(("line", "reply"), [({"resps": [["<think>x</think>B"]], "filtered_resps": ["B"]},
                                              "<think>x</think>B"),
                                             ({"filtered_resps": "C"}, "C"), ({"resps": []}, "")])
def test_full_reply(line: dict[str, Any], reply: str) -> None:
    assert run.full_reply(line) == reply


def _run_with(tmp_path: Path, data: dict[str, Any] | None) -> run.Run:
    results = {"lmms_agentic": {"data": {"robovista": data}}} if data else {}
    return run.Run(tmp_path, tmp_path / "x_results.json", results, [])


@pytest.mark.parametrize(("env", "logged", "chosen", "warns"), [
    ({}, {"kind": "mini", "chosen_by": "LMMS_AGENTIC_DATA=mini"}, "mini", False),        # the run's setting
    ({"LMMS_AGENTIC_DATA": "mini"}, None, "mini", False),                                   # the environment's
    ({"LMMS_AGENTIC_DATA": "/elsewhere"}, {"kind": "local", "path": "/data/robovista",
                                            "chosen_by": "LMMS_AGENTIC_DATA=/data"}, "/elsewhere", True),
    ({}, {"kind": "local", "path": "/data/robovista", "chosen_by": "LMMS_AGENTIC_DATA_ROBOVISTA=/data/robovista"},
     None, False),
])
def test_data_location_follows_the_run(tmp_path: Path, env: dict[str, str], logged: dict[str, Any] | None,
                                       chosen: str | None, warns: bool) -> None:
    from lmms_agentic.adapters import benchmarks

    line = run.use_run_data(_run_with(tmp_path, logged), benchmarks.get("robovista"), env)
    assert env.get("LMMS_AGENTIC_DATA") == chosen
    assert ("WARNING" in line) is warns
    if chosen is None:
        assert env["LMMS_AGENTIC_DATA_ROBOVISTA"] == "/data/robovista"


def test_permutation_rows_get_the_options_the_model_saw(robovista_docs: Any) -> None:
    from lmms_agentic.adapters import benchmarks, permutation

    expanded = permutation.expand(robovista_docs, "circular").to_list()
    row = next(r for r in expanded if r["perm_index"] == 2)
    record = {"benchmark": "robovista", "id": row["id"], "group_id": row["group_id"], "permutation": row["permutation"],
              "domain": row["domain"], "source": row["source"]}
    store = run.DocStore(benchmarks.get("robovista"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        doc = store.get(spec.Item("v", "t", record, "", "correct"))
        with pytest.raises(KeyError, match="not in the data"):
            store.get(spec.Item("v", "t", {**record, "group_id": "nope"}, "", "correct"))
    assert (doc["options"], doc["answer"]) == (row["options"], row["answer"])


# ------------------------------------------------------------------ judge: images and declarations

def test_images_travel_as_content_parts_and_enter_the_cache_key(tmp_path: Path) -> None:
    template = PromptTemplate(id="test/vision", version="1", user="Describe:\n{{response}}",
                              parser=JsonObjectParser(required={"colour": Text()}))
    with ScriptedJudgeServer(lambda call: ScriptedReply('{"colour": "red"}')) as server:
        config = JudgeConfig(base_url=server.base_url, model="m", cache_dir=tmp_path / "c", max_retries=0)
        client = judging.MultimodalJudgeClient(config)
        red, blue = (judging.data_url(Image.new("RGB", (3000, 1000), c)) for c in ("red", "blue"))
        first = client.judge(judging.ImageJudgeRequest(template, {"response": "x"}, "1", images=(red,)))
        second = client.judge(judging.ImageJudgeRequest(template, {"response": "x"}, "2", images=(blue,)))
        again = client.judge(judging.ImageJudgeRequest(template, {"response": "x"}, "3", images=(red,)))
        assert server.request_count == 2 and again.cached and first.request_key != second.request_key
        parts = server.calls[0].body["messages"][-1]["content"]
        assert [p["type"] for p in parts] == ["image_url", "text"] and "<<<DATA response" in parts[1]["text"]
        assert parts[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
        ok, _ = judging.probe_vision(client)
        assert ok
    decoded = Image.open(io.BytesIO(base64.b64decode(red.split(",", 1)[1])))
    assert decoded.size == (1536, 512)


@pytest.mark.parametrize(("config", "env", "flag", "accepted"), [
    ({}, {}, None, False),                                                        # no judge at all
    ({"base_url": "http://x/v1", "model": "m"}, {}, None, False),                 # not declared
    ({"base_url": "http://x/v1", "model": "m"}, {"LMMS_AGENTIC_JUDGE_VISION": "1"}, None, True),
    ({"base_url": "http://x/v1", "model": "m"}, {}, True, True),                  # --judge-vision
    ({"base_url": "http://x/v1", "model": "m", "preset": "gpt-4o"}, {}, None, True),
    ({"base_url": "http://x/v1", "model": "m", "preset": "gpt-4o"}, {"LMMS_AGENTIC_JUDGE_VISION": "0"}, None, False),
    ({"base_url": "http://x/v1", "model": "m", "preset": "qwen3-14b-local"}, {}, None, False),
])
def test_image_support_must_be_declared(config: dict[str, Any], env: dict[str, str], flag: bool | None,
                                        accepted: bool) -> None:
    if accepted:
        assert judging.require_judge(JudgeConfig(**config), flag, env)
    else:
        with pytest.raises(judging.JudgeSetupError, match="LMMS_AGENTIC_JUDGE"):
            judging.require_judge(JudgeConfig(**config), flag, env)


def test_text_only_judge_is_refused_before_any_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder = constructed_run(tmp_path / "run", {})
    with ScriptedJudgeServer(lambda call: ScriptedReply("{}")) as server:
        monkeypatch.setenv("LMMS_AGENTIC_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("LMMS_AGENTIC_JUDGE_MODEL", "text-only")
        monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")  # restored after the test (the command sets it from --data)
        monkeypatch.delenv("LMMS_AGENTIC_JUDGE_VISION", raising=False)
        monkeypatch.delenv("LMMS_AGENTIC_JUDGE_PRESET", raising=False)
        assert cli.main(["errors", str(folder), "--data", "mini", "--quiet"]) == 1
        assert server.request_count == 0
    assert "not declared image-capable" in capsys.readouterr().err


# ------------------------------------------------------------------ a constructed run with known modes

KNOWN = {  # AgentVQA mini ids -> the mode their scripted reply carries (None: the item is answered correctly)
    "aitw_0001": "Grounding Error", "screenspot_0001": "Grounding Error", "monday_0001": "Action Mismatch",
    "vsibench_0001": "Motion Misperception", "egoplan_0001": "Motion Misperception", "openeqa_0001": "Perception Gaps",
    "gameqa_0001": "Visual Miscomprehension", "marioqa_0001": "Tracking Drift", "atari_0001": None,
    "embspatial_0001": "Viewpoint Gap", "space10_0001": "Viewpoint Gap", "3dsr_0001": "Not A Mode",
    "roborefit_0001": "Spatial Confusion", "erqa_0001": "Spatial Confusion", "robo2vlm_0001": "Spatial Confusion",
}


def constructed_run(folder: Path, modes: Mapping[str, str | None]) -> Path:
    """A finished-run folder (results + one sample file per AgentVQA domain task) whose incorrect replies carry
    ``SCRIPTED_MODE=<mode>`` markers; items mapped to None are correct."""
    from lmms_agentic.tasks.agentvqa import hooks

    folder.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        docs = hooks.all_docs().select_columns(["id", "domain", "source", "answer"]).to_list()
    domains = sorted({d["domain"] for d in docs})
    tasks = {domain: f"agentvqa_{domain}" for domain in domains}
    kwargs = {"history_header": "Previous actions:", "post_prompt": "Answer.", "video_mode": "native", "n_frames": 4}
    results = {"results": {}, "group_subtasks": {"agentvqa": list(tasks.values())},
               "configs": {t: {"lmms_eval_specific_kwargs": {"default": kwargs, **kwargs}} for t in tasks.values()},
               "config": {"model": "constructed"}}
    (folder / "20260101_000000_results.json").write_text(json.dumps(results))
    for domain, task in tasks.items():
        lines = []
        for i, doc in enumerate(d for d in docs if d["domain"] == domain):
            mode = modes.get(doc["id"])
            wrong = "B" if doc["answer"] != "B" else "C"
            pred = doc["answer"] if mode is None else wrong
            record = {"benchmark": "agentvqa", "id": doc["id"], "domain": domain, "source": doc["source"],
                      "answer": doc["answer"], "pred": pred, "correct": mode is None, "request_failed": False,
                      "coord_convention": "pixel_xy", "with_history": True, "score": 100.0 * (mode is None)}
            reply = f"<think>I look at the picture. SCRIPTED_MODE={mode}</think>Answer: {pred}"
            lines.append(json.dumps({"doc_id": i, "accuracy": record, "resps": [[reply]], "filtered_resps": [pred]}))
        (folder / f"20260101_000000_samples_{task}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_constructed_run_gives_the_known_distribution(tmp_path: Path, judge_env: ScriptedJudgeServer,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = constructed_run(tmp_path / "run", KNOWN)
    out = tmp_path / "out"
    assert cli.main(["errors", str(folder), "--data", "mini", "--output", str(out), "--verify", "5",
                          "--video-frames", "3", "--quiet"]) == 0
    calls = judge_env.calls
    assert len(calls) == 14  # 15 items, one correct
    assert all(_images(c) for c in calls), "every judge call carries the visual input"
    video = [c for c in calls if "Egocentric Videos domain" in str(c.body["messages"][0]["content"])]
    assert {len(_images(c)) for c in video} == {3}
    shares = {(r["domain"], r["mode"]): r for r in _csv(out / "distribution.csv")}
    expected = {("web_agents", "grounding_error"): (2, 3), ("web_agents", "action_mismatch"): (1, 3),
                ("egocentric_videos", "motion_misperception"): (2, 3), ("egocentric_videos", "perception_gaps"): (1, 3),
                ("games", "visual_miscomprehension"): (1, 2), ("games", "tracking_drift"): (1, 2),
                ("spatial_planning", "viewpoint_gap"): (2, 2), ("robotics", "spatial_confusion"): (3, 3),
                ("robotics", "object_misrecognition"): (0, 3)}
    for key, (count, n) in expected.items():
        assert (int(shares[key]["count"]), int(shares[key]["n"])) == (count, n), key
    assert shares[("web_agents", "grounding_error")]["paper"] == "78.0"
    assignments = {r["id"]: r for r in _csv(out / "assignments.csv")}
    assert assignments["3dsr_0001"]["status"] == "unscored:parse_failure"  # a mode outside the taxonomy
    assert assignments["aitw_0001"]["reason"] == "scripted as Grounding Error" and "atari_0001" not in assignments
    assert (out / "agentvqa_error_modes.png").stat().st_size > 0
    summary = (out / "summary.md").read_text()
    assert "13 judged of 14 predictions; not labelled: unscored:parse_failure 1" in summary

    verify = _csv(out / "verify.csv")
    assert len(verify) == 5 and all(r["media"] for r in verify)
    assert all((out / m).exists() for r in verify for m in r["media"].split())
    for k, row in enumerate(verify):  # the verifier agrees with the judge except on the first row
        row["verified_mode"] = row["judge_mode"] if k else next(
            m.strip() for m in row["allowed_modes"].split("|") if m.strip() != row["judge_mode"])
    verify[1]["verified_mode"] = verify[1]["verified_mode"].replace("_", " ").title()  # display names accepted
    with (out / "verify.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(verify[0]))
        writer.writeheader()
        writer.writerows(verify)
    pairs, blank = agreement.read_verified(out / "verify.csv")
    report = agreement.agreement(pairs, blank)
    assert report["n"] == 5 and report["accuracy"] == pytest.approx(80.0)
    assert report["kappa"] == pytest.approx(agreement.cohen_kappa([(p.judge, p.human) for p in pairs]))
    assert cli.main(["agreement", str(out / "verify.csv"), "--json", str(out / "a.json")]) == 0

    judge_env.reset()  # a rerun is served from the judge cache
    filled = (out / "verify.csv").read_bytes()
    capsys.readouterr()
    assert cli.main(["errors", str(folder), "--data", "mini", "--output", str(out), "--quiet",
                          "--video-frames", "3", "--no-verify-media"]) == 0
    assert judge_env.request_count == 1  # only the unscored reply is asked again
    assert (out / "verify.csv").read_bytes() == filled, "the hand-filled verification is kept"
    assert len(_csv(out / "verify_2.csv")) == 13  # --verify 100: every judged assignment
    assert f"kept your {out / 'verify.csv'} (5 row(s) with verified_mode filled); this run's verification subset " \
           f"is {out / 'verify_2.csv'}" in capsys.readouterr().out


def test_dry_run_sends_nothing(tmp_path: Path, judge_env: ScriptedJudgeServer) -> None:
    folder = constructed_run(tmp_path / "run", KNOWN)
    assert cli.main(["errors", str(folder), "--dry-run", "--output", str(tmp_path / "out"),
                          "--sample", "1", "--video-frames", "2"]) == 0
    lines = [json.loads(line) for line in (tmp_path / "out" / "requests.jsonl").read_text().splitlines()]
    assert len(lines) == 5 and judge_env.request_count == 0  # one per domain
    assert all(line["images"] > 0 and line["template"].startswith("agentvqa/error_mode/") for line in lines)


def test_a_run_without_samples_or_with_a_truncated_results_file_is_named(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    folder = constructed_run(tmp_path / "run", KNOWN)
    results = folder / "20260101_000000_results.json"
    text = results.read_text()
    results.write_text(text[: len(text) // 2])
    assert cli.main(["errors", str(folder), "--dry-run", "--quiet"]) == 1
    assert re.fullmatch(
        f"lmms-agentic errors: error: {re.escape(str(results))}: not a valid results file, JSON error at line 1 "
        r"column \d+ \(the file ends early: the run was interrupted while writing it, or the disk was full\); "
        "rerun the evaluation or pass another run", capsys.readouterr().err.strip())
    results.write_text(text)
    for sample in folder.glob("*_samples_*.jsonl"):
        sample.unlink()
    assert cli.main(["errors", str(folder), "--dry-run", "--quiet"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"lmms-agentic errors: error: {results}: the run logged no samples (no sample file next to it), so there "
        "are no predictions to analyse; rerun the evaluation with --log_samples")


def test_agreement_rejects_labels_outside_the_row_taxonomy(tmp_path: Path) -> None:
    path = tmp_path / "verify.csv"
    path.write_text("variant,domain,judge_mode,allowed_modes,verified_mode\n"
                    "v,web_agents,grounding_error,grounding_error | action_mismatch,Tracking Drift\n")
    with pytest.raises(agreement.VerificationError, match="line 2"):
        agreement.read_verified(path)


# ------------------------------------------------------------------ end to end

@pytest.mark.e2e
def test_errors_on_a_real_lmms_eval_run(tmp_path: Path) -> None:
    done = run_lmms_eval(["--model", "dummy", "--tasks", "agentvqa,robovista_cot"], tmp_path / "run",
                         env={"LMMS_AGENTIC_DATA": "mini"})
    done.assert_ok()
    with ScriptedJudgeServer(mode_from_reply) as server:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("LMMS_AGENTIC_")},
               "LMMS_AGENTIC_JUDGE_BASE_URL": server.base_url, "LMMS_AGENTIC_JUDGE_MODEL": "vlm-judge",
               "LMMS_AGENTIC_JUDGE_CACHE": "off", "LMMS_AGENTIC_DATA": "mini", "HF_HUB_OFFLINE": "1"}
        command = [sys.executable, "-m", "lmms_agentic", "errors", str(tmp_path / "run"),
                   "--judge-vision", "--output", str(tmp_path / "errors"), "--quiet", "--sample", "2"]
        finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert finished.returncode == 0, finished.stderr[-3000:]
        assert server.request_count > 0 and all(_images(c) for c in server.calls)
    rows = _csv(tmp_path / "errors" / "distribution.csv")
    first = {r["domain"]: r for r in rows if r["variant"] == "agentvqa" and r["count"] == r["n"]}
    assert set(first) == {"web_agents", "egocentric_videos", "games", "spatial_planning", "robotics"}
    robovista = {r["mode"]: r for r in rows if r["variant"] == "robovista_cot" and r["domain"] == "all"}
    assert int(robovista["correct"]["count"]) + int(robovista["misidentification"]["count"]) == int(
        robovista["correct"]["n"])
    assert "## robovista_cot" in (tmp_path / "errors" / "summary.md").read_text()
