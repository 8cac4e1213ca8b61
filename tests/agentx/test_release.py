"""Agent-X against real-release quirks, as the authors' released code handles them (tasks/agentx/core/records.py
and tasks/agentx/release.py): malformed reasoning steps, empty or odd query_type / tool_metadata, unusable records,
repeated keys in data.json, renamed keys through a schema override, provenance, the GT as released to the judge,
parse_failure_rate."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import lmms_agentic
from lmms_agentic.adapters import provenance
from lmms_agentic.adapters.bad_records import SKIP_ENV, BadRecordsError
from lmms_agentic.adapters.documents import ReleaseColumnsError
from lmms_agentic.judges.client import reset_default_client
from lmms_agentic.judges.config import ENV as JUDGE_ENV
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply
from lmms_agentic.tasks.agentx import aggregations, hooks
from lmms_agentic.tasks.agentx import release as release_module
from lmms_agentic.tasks.agentx.core.judging import NOT_JUDGEABLE, REPORTED_NAMES
from lmms_agentic.tasks.agentx.release import SCHEMA

MINI = Path(lmms_agentic.tasks_dir()) / "agentx" / "data" / "mini"
Edit = Callable[[dict[str, Any]], None]
Docs = dict[str, dict[str, Any]]
N_TEXT, N_GENERATIVE = len(REPORTED_NAMES), len(REPORTED_NAMES) - 1  # generative items get no Goal call


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Fresh loader cache and provenance, no judge configured (judge results are then `not_configured`)."""
    monkeypatch.setattr(release_module, "_DOCS", {})
    for name in JUDGE_ENV.values():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(JUDGE_ENV["cache_dir"], str(tmp_path / "judge-cache"))
    monkeypatch.delenv(SKIP_ENV, raising=False)
    monkeypatch.delenv("LMMS_AGENTIC_SCHEMA_AGENTX", raising=False)
    provenance.clear()
    reset_default_client()
    yield
    reset_default_client()
    provenance.clear()


def release(tmp_path: Path, edit: Edit | None = None, text: str | None = None, name: str = "agentx") -> Path:
    """A copy of the mini release; `edit` changes its data.json, `text` replaces it."""
    folder = tmp_path / name
    shutil.copytree(MINI, folder)
    if edit is not None:
        data = json.loads((folder / "data.json").read_text())
        edit(data)
        (folder / "data.json").write_text(json.dumps(data))
    if text is not None:
        (folder / "data.json").write_text(text)
    return folder


def load(folder: Path, monkeypatch: pytest.MonkeyPatch, skip: bool = False) -> Docs:
    monkeypatch.setenv("LMMS_AGENTIC_DATA_AGENTX", str(folder))
    if skip:
        monkeypatch.setenv(SKIP_ENV, "1")
    return {row["id"]: row for row in hooks.all_docs()}


def record_of(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda data: data[key][0]


def set_field(key: str, name: str, value: Any) -> Edit:
    def edit(data: dict[str, Any]) -> None:
        if value is KeyError:
            del data[key][0][name]
        else:
            data[key][0][name] = value
    return edit


def steps_of(key: str, make: Callable[[list[Any]], Any]) -> Edit:
    """Replace record `key`'s steps by `make(its unwrapped steps)`."""
    def edit(data: dict[str, Any]) -> None:
        steps = data[key][0]["reasoning_steps"]
        steps = steps[0] if len(steps) == 1 and isinstance(steps[0], list) else steps
        data[key][0]["reasoning_steps"] = make(steps)
    return edit


# ---------------------------------------------------------------- 1. malformed steps, query_type, tool_metadata
STEP_CASES = [
    # (id, key, edit, skipped positions, steps kept)
    ("non_object_steps_skipped", "0", steps_of("0", lambda s: [s[0], "oops", 7, None, s[1]]), [2, 3, 4], 2),
    ("wrapped_then_malformed", "2", steps_of("2", lambda s: [[s[0], ["nested"], s[1]]]), [2], 2),
    ("two_wrappers_not_unwrapped", "2", steps_of("2", lambda s: [[s[0]], [s[1]]]), [1, 2], 0),
    ("generative_item", "8", steps_of("8", lambda s: [*s, "free text"]), [4], 3),
    ("all_good", "3", None, [], 2),
]


@pytest.mark.parametrize(("key", "edit", "skipped", "kept"), [c[1:] for c in STEP_CASES],
                         ids=[c[0] for c in STEP_CASES])
def test_malformed_steps_are_skipped_counted_and_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture, key: str,
                                                         edit: Edit | None, skipped: list[int], kept: int) -> None:
    folder = release(tmp_path, edit)
    released = json.loads((folder / "data.json").read_text())[key][0]["reasoning_steps"]
    with caplog.at_level(logging.WARNING, logger="lmms_agentic"):
        docs = load(folder, monkeypatch)
        load(folder, monkeypatch)  # cached: logged once
    row = docs[key]
    assert row["skipped_steps"] == skipped and len(json.loads(row["gt_steps_flat_json"])) == kept
    assert json.loads(row["gt_steps_json"]) == released  # the judge gets the steps as released
    assert len(docs) == 10 and not row["judge_blocker"]
    facts = provenance.used()["agentx"]
    logged = [r for r in caplog.records if "malformed ground-truth reasoning step" in r.getMessage()]
    if skipped:
        assert facts["skipped_steps"] == {"count": len(skipped), "records": [{"id": key, "positions": skipped}]}
        assert len(logged) == 1 and key in logged[0].getMessage()
    else:
        assert "skipped_steps" not in facts and not logged
    sample = hooks.record(row, ["no json here"], judge=False)  # the deterministic checks run on the kept steps
    assert sample["gt_skipped_steps"] == skipped and "step_keyword_mismatch" in sample["errors"]


JUDGE_CASES = [
    # (id, key, edit, judged by the judge?, blocker text, query_type in the row)
    ("empty_query_type_judged_as_is", "0", set_field("0", "query_type", ""), True, "", ""),
    ("padded_query_type_verbatim", "6", set_field("6", "query_type", " objective "), True, "", " objective "),
    ("tool_metadata_list", "3", set_field("3", "tool_metadata", ["OCR", "Calculator"]), False,
     "tool_metadata is a list, not an object", "objective"),
    ("tool_metadata_null", "7", set_field("7", "tool_metadata", None), False, "tool_metadata is null", "objective"),
    ("tool_metadata_missing", "8", set_field("8", "tool_metadata", KeyError), False, "tool_metadata is missing",
     "subjective"),
    ("query_type_null", "4", set_field("4", "query_type", None), False, "query_type is null, not a string", ""),
    ("query_type_number", "9", set_field("9", "query_type", 1), False, "query_type is a int, not a string", ""),
]


@pytest.mark.parametrize(("key", "edit", "judged", "blocker", "query_type"), [c[1:] for c in JUDGE_CASES],
                         ids=[c[0] for c in JUDGE_CASES])
def test_query_type_and_tool_metadata_as_the_released_judge_scripts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, edit: Edit, judged: bool, blocker: str,
        query_type: str) -> None:
    docs = load(release(tmp_path, edit), monkeypatch)
    row = docs[key]
    assert len(docs) == 10 and row["query_type"] == query_type and blocker in row["judge_blocker"]
    assert bool(row["judge_blocker"]) is not judged
    sample = hooks.record(row, [""])
    reasons = {result["unscored_reason"] for result in sample["judge"].values()}
    assert len(sample["judge"]) == (N_GENERATIVE if row["is_generative"] else N_TEXT)
    if judged:  # sent to the judge layer (no judge configured here), with the released label
        assert reasons == {"not_configured"} and sample["not_judged"] is None
        assert "not_judged" not in provenance.used()["agentx"]
    else:  # the released scripts leave every score of the item None: unscored, nothing sent
        assert reasons == {NOT_JUDGEABLE} and blocker in sample["not_judged"]
        assert all(blocker in result["detail"] for result in sample["judge"].values())
        assert provenance.used()["agentx"]["not_judged"]["records"][0]["id"] == key
        assert aggregations.cov_ground([sample]) == 0.0 and sample["format_ok"] is False  # counted, not dropped


def test_the_deterministic_gold_tools_fall_back_to_the_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    row = load(release(tmp_path, set_field("3", "tool_metadata", "OCR")), monkeypatch)["3"]
    steps = json.loads(row["gt_steps_flat_json"])
    reply = json.dumps({"reasoning_steps": [{"tool_used": s["tool"]} for s in steps], "final_answer": "46"})
    assert hooks.record(row, [reply], judge=False)["toolset_f1_prog"] == 1.0


UNUSABLE: list[tuple[str, str, Any]] = [
    ("1", "query", ""), ("2", "query", None), ("3", "file_path", "  "), ("4", "reasoning_steps", "one step"),
    ("5", "reasoning_steps", KeyError), ("6", "final_answer", 42), ("7", "final_answer", {"justification": "j"}),
]


def test_every_unusable_record_is_named_in_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def edit(data: dict[str, Any]) -> None:
        for key, name, value in UNUSABLE:
            set_field(key, name, value)(data)
        data["9"] = data["9"][0]  # not a one-element list
    with pytest.raises(BadRecordsError) as error:
        load(release(tmp_path, edit), monkeypatch)
    listed = {(e.record_id, e.field_name) for e in error.value.exclusions}
    assert listed == {(key, name) for key, name, _ in UNUSABLE} | {("9", "<record>")}
    assert f"{len(UNUSABLE) + 1} record(s) cannot be used" in str(error.value) and SKIP_ENV in str(error.value)


def test_unusable_records_are_excluded_and_recorded_on_request(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    docs = load(release(tmp_path, set_field("6", "final_answer", 42)), monkeypatch, skip=True)
    assert sorted(docs, key=int) == ["0", "1", "2", "3", "4", "5", "7", "8", "9"]
    facts = provenance.used()["agentx"]
    assert facts["excluded"]["count"] == 1 and facts["excluded"]["records"][0]["id"] == "6"
    assert facts["usable_rows"] == 9 and facts["rows"] == 10


# ---------------------------------------------------------------- 2. repeated keys in data.json
def _with_repeats(tmp_path: Path, extra: str, nested: bool = False) -> Path:
    """The mini data.json text with `extra` inserted as more top-level entries (json.dumps cannot repeat keys)."""
    text = (MINI / "data.json").read_text()
    data = json.loads(text)
    body = json.dumps(data)[:-1] + extra + "}"
    if nested:
        body = body.replace('"query_type": "objective"', '"query_type": "objective", "query_type": "subjective"', 1)
    return release(tmp_path, text=body)


def _copy_of(key: str, query: str) -> str:
    record = json.loads((MINI / "data.json").read_text())[key][0]
    return f', "{key}": ' + json.dumps([{**record, "query": query}])


def test_repeated_keys_are_reported_in_the_same_error_as_bad_records(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _with_repeats(tmp_path, _copy_of("3", "second copy") + _copy_of("3", "third") + _copy_of("5", "x")
                           + ', "10": []')
    with pytest.raises(BadRecordsError) as error:
        load(folder, monkeypatch)
    listed = [(e.record_id, e.field_name, e.problem) for e in error.value.exclusions]
    assert listed[0][:2] == ("10", "<record>")
    assert listed[1:] == [("3", "id", "occurs more than once")] * 2 + [("5", "id", "occurs more than once")]


def test_repeated_keys_keep_the_first_copy_on_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    first = json.loads((MINI / "data.json").read_text())["3"][0]["query"]
    folder = _with_repeats(tmp_path, _copy_of("3", "the second copy"))
    with caplog.at_level(logging.WARNING, logger="lmms_agentic"):
        docs = load(folder, monkeypatch, skip=True)
    assert docs["3"]["query"] == first and len(docs) == 10  # Python's json alone would keep the LAST copy
    facts = provenance.used()["agentx"]
    repeated = {"id": "3", "field": "id", "problem": "occurs more than once"}
    assert facts["excluded"] == {"count": 1, "records": [repeated]}
    assert facts["rows"] == 11 and facts["usable_rows"] == 10
    assert any("repeated key" in r.getMessage() and "3" in r.getMessage() for r in caplog.records)


def test_a_key_repeated_inside_a_record_makes_it_unusable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _with_repeats(tmp_path, "", nested=True)
    with pytest.raises(BadRecordsError) as error:
        load(folder, monkeypatch)
    (bad,) = error.value.exclusions
    assert bad.record_id == "0" and bad.field_name == "query_type" and "more than once" in bad.problem
    assert "0" not in load(folder, monkeypatch, skip=True)


# ---------------------------------------------------------------- 6. schema override and provenance
RENAMED = {"query": "question", "file_path": "media", "query_type": "kind", "tool_metadata": "tools",
           "reasoning_steps": "steps", "final_answer": "answer"}


def _renamed(data: dict[str, Any]) -> None:
    for key, (record,) in data.items():
        data[key] = [{RENAMED.get(name, name): value for name, value in record.items()}]


def _override(path: Path) -> Path:
    path.write_text("fields:\n" + "".join(f"  {name}: {raw}\n" for name, raw in RENAMED.items()))
    return path


@pytest.mark.parametrize("where", ["next_to_the_data", "named_by_env"])
def test_a_release_with_renamed_keys_loads_with_a_schema_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              where: str) -> None:
    reference = load(release(tmp_path, name="plain"), monkeypatch)
    folder = release(tmp_path, _renamed)
    if where == "next_to_the_data":
        schema_file = _override(folder / "lmms_agentic_schema.yaml")
    else:
        schema_file = _override(tmp_path / "agentx_schema.yaml")
        monkeypatch.setenv("LMMS_AGENTIC_SCHEMA_AGENTX", str(schema_file))
    provenance.clear()
    docs = load(folder, monkeypatch)
    assert docs.keys() == reference.keys()
    for key, row in docs.items():
        assert {k: v for k, v in row.items() if k != "media_root"} == \
            {k: v for k, v in reference[key].items() if k != "media_root"}
    facts = provenance.used()["agentx"]
    assert facts["schema"]["source"] == str(schema_file) and facts["schema"]["fields"]["query"] == "question"
    assert facts["kind"] == "local" and facts["path"] == str(folder) and facts["rows"] == 10
    assert facts["fingerprint"].startswith("sha256:") and facts["usable_rows"] == 10


def test_renamed_keys_without_an_override_say_how_to_map_them(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ReleaseColumnsError) as error:
        load(release(tmp_path, _renamed), monkeypatch)
    message = str(error.value)
    assert "'query' (query)" in message and "'final_answer' (final_answer)" in message
    assert "lmms_agentic_schema.yaml" in message and "fields:\n  query: <data.json key>" in message


def test_mini_load_records_data_provenance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    monkeypatch.delenv("LMMS_AGENTIC_DATA_AGENTX", raising=False)
    hooks.all_docs()
    facts = provenance.used()["agentx"]
    assert facts["kind"] == "mini" and facts["rows"] == 10 and facts["usable_rows"] == 10
    assert facts["schema"]["source"] == "defaults" and facts["schema"]["fields"] == dict(SCHEMA.fields)
    assert not {"excluded", "skipped_steps", "not_judged"} & set(facts)


# ---------------------------------------------------------------- 4. the GT reaches the judge as released
def test_the_judge_receives_the_wrapped_gt_steps_as_released(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    monkeypatch.delenv("LMMS_AGENTIC_DATA_AGENTX", raising=False)
    row = {r["id"]: r for r in hooks.all_docs()}["2"]
    released = json.loads((MINI / "data.json").read_text())["2"][0]["reasoning_steps"]
    assert isinstance(released[0], list)  # the mini release wraps key "2" as [[...]]
    with ScriptedJudgeServer(lambda call: ScriptedReply("{'Score': 1}")) as server:
        monkeypatch.setenv(JUDGE_ENV["base_url"], server.base_url)
        monkeypatch.setenv(JUDGE_ENV["model"], "judge-test-2025-01-01")
        reset_default_client()
        sample = hooks.record(row, ["I cannot see."])
        prompts = [call.prompt for call in server.calls]
    assert sample["judge"]["ground_s"]["score"] == 1.0 and len(prompts) == N_TEXT
    wrapped = f"'GT reasoning steps': {released!s}"
    assert wrapped.startswith("'GT reasoning steps': [[{'step': 1")
    gt_prompts = [p for p in prompts if "'GT reasoning steps'" in p]
    assert len(gt_prompts) == 7 and all(wrapped in p for p in gt_prompts)  # every metric that sends {gt}
    assert not any("'GT reasoning steps': [{" in p for p in prompts)


# ---------------------------------------------------------------- 5. parse_failure_rate
def test_a_parsed_reply_without_a_final_answer_is_not_a_parse_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GT trace of a generative task has an empty answer; replayed as the reply, it parses."""
    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    monkeypatch.delenv("LMMS_AGENTIC_DATA_AGENTX", raising=False)
    docs = {r["id"]: r for r in hooks.all_docs()}
    samples = []
    for key in ("1", "8"):  # the generative tasks of the mini release
        steps = json.loads(docs[key]["gt_steps_flat_json"])
        reply = json.dumps({"reasoning_steps": [{"step": s["step"], "task": s["task"], "tool_used": s["tool"],
                                                 "tool_output": s["output"], "thought": s["thought"]} for s in steps],
                            "final_answer": json.loads(docs[key]["gt_final_answer_json"])})
        samples.append(hooks.record(docs[key], [reply], judge=False))
    assert [s["parse_failure"] for s in samples] == [None, None]
    assert [s["trace_issues"] for s in samples] == [["missing_final_answer"]] * 2
    samples.append(hooks.record(docs["1"], ["no object at all"], judge=False))
    assert samples[-1]["parse_failure"] == "invalid_json"
    assert aggregations.parse_failure_rate(samples) == pytest.approx(1 / 3)


@pytest.mark.parametrize(("stored", "counts"), [
    (None, 0.0), ("no_output", 1.0), ("invalid_json", 1.0),
    ("missing_final_answer", 0.0), ("unknown_tool", 0.0), ("multiple_tools_in_step", 0.0),  # pre-1.1 records
])
def test_parse_failure_rate_counts_only_unreadable_replies(stored: str | None, counts: float) -> None:
    assert aggregations.parse_failure_rate([{"id": "0", "parse_failure": stored}]) == counts


@pytest.mark.parametrize("content", [b"\xff\xfe not utf-8", b"{not json", b"[1, 2]", b"[" * 5000 + b"]" * 5000, b"{}"],
                         ids=["not-utf8", "not-json", "not-a-mapping", "nested-too-deep", "no-records"])
def test_an_unreadable_data_json_is_an_error_lmms_eval_does_not_retry(tmp_path: Path, content: bytes) -> None:
    """lmms-eval retries dataset loading except on the plugin's deterministic errors: each way data.json cannot be
    read must be one of them (a retry re-reads the same bytes), and must name the file."""
    from lmms_agentic.harness.host import deterministic_errors
    from lmms_agentic.tasks.agentx.release import load

    (tmp_path / "data.json").write_bytes(content)
    with pytest.raises(deterministic_errors()) as caught:
        load(tmp_path, generative_ids=())
    assert str(tmp_path / "data.json") in str(caught.value)
