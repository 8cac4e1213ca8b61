"""The viewer's files from a hand-written lmms-eval run folder (no harness, no browser): layout, paging, escaping,
the overview's numbers, media written once, the notes when media cannot be shown, and the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import datasets
import pytest
from PIL import Image

from lmms_agentic.cli import main
from lmms_agentic.tasks.agentx.tools import returned_image
from lmms_agentic.viewer import media, site

from .test_samples import mcq_line

HOSTILE = '</script><script>alert(1)</script><img src=x onerror="alert(2)">\u2028&amp;'


def write_run(folder: Path, replies: list[str | None], task: str = "agentvqa_robotics") -> Path:
    """An lmms-eval output folder: one results file and the task's sample file (one line per reply)."""
    folder.mkdir(parents=True)
    lines = []
    for number, reply in enumerate(replies):
        line = mcq_line(reply if reply in ("A", "B", "C", "D") else None)
        line["accuracy"]["id"] = f"q{number}"
        line["doc_id"], line["filtered_resps"] = number, reply or ""
        lines.append(line)
    accuracy = 100.0 * sum(line["accuracy"]["correct"] for line in lines) / len(lines)
    results = {"results": {task: {"accuracy,none": accuracy, "accuracy_stderr,none": "N/A", "alias": task}},
               "configs": {task: {"metric_list": [{"metric": "accuracy"}]}}, "group_subtasks": {},
               "config": {"model": "agentic_scripted", "model_args": "policy=hash"}}
    (folder / "20260101_000000_results.json").write_text(json.dumps(results), encoding="utf-8")
    (folder / f"20260101_000000_samples_{task}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return folder


def read_data(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text[text.index("=", text.index("]=")) + 1:].rstrip().removesuffix(";"))


def test_script_literal_cannot_end_a_script_or_open_markup() -> None:
    text = site.script_literal({"reply": HOSTILE})
    assert not any(char in text for char in "<>&\u2028")
    assert json.loads(text) == {"reply": HOSTILE}


def test_the_site_pages_its_data_and_keeps_replies_as_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site, "ROWS_PER_FILE", 4)
    monkeypatch.setattr(site, "PAGES_PER_FILE", 3)
    run = write_run(tmp_path / "run", ["B", "A", HOSTILE, "B", None, "B", "C", "B", "D", "B"])
    index = site.write_site([run], tmp_path / "out", media=False, progress=lambda message: None)
    out = index.parent
    assert sorted(p.name for p in out.iterdir()) == ["data", "index.html", "viewer.css", "viewer.js"]
    names = sorted(p.stem for p in (out / "data").iterdir())
    assert names == ["page_0", "page_1", "page_2", "page_3", "rows_0", "rows_1", "rows_2", "site"]
    overview = read_data(out / "data" / "site.js")
    assert overview["total"] == 10 and overview["row_files"] == 3
    row = overview["overview"][0]
    assert (row["task"], row["metric"], row["value"], row["n"], row["samples"]) == (
        "agentvqa_robotics", "accuracy", "50.0", 10, 10)
    assert row["interval"] == "[23.7, 76.3]" and row["method"] == "95% Wilson"
    pages = read_data(out / "data" / "page_0.js")
    assert pages["0-2"]["reply"] == HOSTILE and pages["0-2"]["note"].startswith("media not resolved")
    rows = [r for k in range(3) for r in read_data(out / "data" / f"rows_{k}.js")]
    assert [r["status"] for r in rows].count("correct") == 5
    for data in (out / "data").iterdir():
        assert "</script" not in data.read_text(encoding="utf-8")


def test_rebuilding_replaces_the_old_data(tmp_path: Path) -> None:
    site.write_site([write_run(tmp_path / "big", ["B"] * 150)], tmp_path / "out", media=False,
                    progress=lambda message: None)
    site.write_site([write_run(tmp_path / "small", ["B"])], tmp_path / "out", media=False,
                    progress=lambda message: None)
    assert sorted(p.stem for p in (tmp_path / "out" / "data").iterdir()) == ["page_0", "rows_0", "site"]


def test_media_are_written_once_with_thumbnails(tmp_path: Path) -> None:
    writer = media.MediaWriter(tmp_path)
    image = Image.new("RGB", (2000, 1000), (200, 30, 30))
    first, again = writer.image(image, "image 1"), writer.image(image.copy(), "image 2")
    assert first["full"] == again["full"] and again["label"] == "image 2"
    assert len(list((tmp_path / "media").iterdir())) == 2
    with Image.open(tmp_path / first["full"]) as full, Image.open(tmp_path / first["thumb"]) as thumb:
        assert full.size == (media.FULL_SIDE, media.FULL_SIDE // 2) and max(thumb.size) == media.THUMB_SIDE


def test_returned_images_are_written_from_the_log_or_say_why_not(tmp_path: Path) -> None:
    writer = media.MediaWriter(tmp_path)
    logged = returned_image.reference(Image.new("RGB", (640, 480), (10, 200, 10)))
    entries: list[dict[str, Any]] = [
        {"image": "image_2", "returned_image": logged},
        {"image": "image_3", "returned_image": {"png_b64": '<img src=x onerror="alert(1)">'}},
        {"image": "image_4"},  # logged before rounds kept a thumbnail
        {"image": None, "returned_image": None}]
    rows: list[dict[str, Any]] = [{"image": entry["image"] or ""} for entry in entries]
    media.add_returned_images(writer, entries, rows)
    assert rows[0]["returned"]["label"] == f"image_2: 640x480, sha256 {logged['pixels_sha256'][:12]}"
    with Image.open(tmp_path / rows[0]["returned"]["full"]) as written:
        assert written.size == (returned_image.THUMBNAIL_SIDE, 192)
    assert rows[1] == {"image": "image_3", "returned_note": "the logged thumbnail is not base64"}
    assert "not in the sample log" in rows[2]["returned_note"] and rows[3] == {"image": ""}


def test_returned_images_are_written_without_the_data_too(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", ["B"])
    samples_file = next(run.glob("*_samples_*.jsonl"))
    line = json.loads(samples_file.read_text(encoding="utf-8"))
    logged = returned_image.reference(Image.effect_noise((30, 20), 50))
    line["accuracy"]["rounds"] = [{"round": 1, "kind": "call", "tool": "DrawBoundingBox", "image": "image_2",
                                   "returned_image": logged}]
    line["filtered_resps"] = json.dumps({"state": {"rounds": line["accuracy"]["rounds"]}})  # the episode payload
    samples_file.write_text(json.dumps(line) + "\n", encoding="utf-8")
    out = site.write_site([run], tmp_path / "out", media=False, progress=lambda message: None).parent
    page = read_data(out / "data" / "page_0.js")["0-0"]
    row = page["rounds"][0]
    assert (out / row["returned"]["full"]).is_file() and (out / row["returned"]["thumb"]).is_file()
    assert len(list((out / "media").iterdir())) == 2
    assert logged["png_b64"] not in (out / "data" / "page_0.js").read_text(encoding="utf-8")  # a file, not text
    elided = f"[{len(logged['png_b64']):,} base64 characters: the returned image's thumbnail, shown in the rounds " \
             "table]"
    assert page["record"]["rounds"][0]["returned_image"]["png_b64"] == elided and elided in page["reply"]


def _resolve(tmp_path: Path, loader: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from lmms_agentic.devtools import permutations
    from lmms_agentic.report.runs import load_run

    monkeypatch.setattr(permutations, "load_task", loader)
    run = load_run(write_run(tmp_path / "run", ["B"]))
    line = run.lines("agentvqa_robotics")[0]
    resolver = media.MediaResolver(media.MediaWriter(tmp_path / "out"))
    return resolver.resolve(run, "agentvqa_robotics", line, line["accuracy"], "mini data at /nowhere")


def test_the_page_says_why_media_are_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(task: str) -> Any:
        raise FileNotFoundError("no data at /nowhere")

    found = _resolve(tmp_path, missing, monkeypatch)
    assert found["media"] == [] and found["note"] == (
        "media unavailable: the task's data could not be read (FileNotFoundError: no data at /nowhere)")


def test_a_record_missing_from_the_data_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = datasets.Dataset.from_list([{"id": "other"}])
    found = _resolve(tmp_path, lambda task: ({"doc_to_visual": lambda doc, kwargs: []}, docs), monkeypatch)
    assert found["note"] == "media unavailable: record 'q0' is not in the data read now (mini data at /nowhere)"


def test_the_document_is_checked_by_id_and_its_prompt_rendered(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    docs = datasets.Dataset.from_list([{"id": "other"}, {"id": "q0"}])
    image = Image.new("RGB", (40, 30), (0, 90, 0))

    def messages(doc: Any, kwargs: Any) -> list[dict[str, Any]]:
        return [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
                {"role": "user", "content": [{"type": "image", "url": image},
                                             {"type": "text", "text": f"Question about {doc['id']}"}]}]

    found = _resolve(tmp_path, lambda task: ({"doc_to_messages": messages}, docs), monkeypatch)
    assert found["note"] == "" and [m["label"] for m in found["media"]] == ["image 1"]
    assert found["messages"] == [{"role": "system", "parts": [{"text": "Be brief."}]},
                                 {"role": "user", "parts": [{"media": 0}, {"text": "Question about q0"}]}]


def test_run_data_restores_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lmms_agentic.report.runs import load_run

    monkeypatch.delenv("LMMS_AGENTIC_DATA", raising=False)
    run = load_run(write_run(tmp_path / "run", ["B"]))
    run.results["lmms_agentic"] = {"data": {"agentvqa": {"kind": "mini", "chosen_by": "LMMS_AGENTIC_DATA=mini"}}}
    with media.run_data(run) as lines:
        assert os.environ["LMMS_AGENTIC_DATA"] == "mini" and lines[0].startswith("agentvqa: mini data")
    assert "LMMS_AGENTIC_DATA" not in os.environ


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", ["B", "A"])
    assert main(["view", str(run), "-o", str(tmp_path / "out"), "--no-media", "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == f"viewer: {(tmp_path / 'out' / 'index.html').resolve()} (open it in " \
                                              "a browser; it reads only files next to it)"
    assert main(["view", str(tmp_path / "nothing"), "-o", str(tmp_path / "out2")]) == 1
    assert "no such file or folder" in capsys.readouterr().err


def test_frames_of_a_video_are_labelled_as_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = datasets.Dataset.from_list([{"id": "q0", "video": "clip.mp4"}])
    shades = [Image.new("RGB", (32, 24), (10 * n, 0, 0)) for n in range(3)]

    def messages(doc: Any, kwargs: Any) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [*({"type": "image", "url": frame} for frame in shades),
                                             {"type": "text", "text": "What happens?"}]}]

    found = _resolve(tmp_path, lambda task: ({"doc_to_messages": messages}, docs), monkeypatch)
    assert [m["label"] for m in found["media"]] == ["frame 1 of 3", "frame 2 of 3", "frame 3 of 3"]
    assert {m["kind"] for m in found["media"]} == {"frame"}
