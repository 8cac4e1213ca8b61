"""Agent-X prompt protocols of the authors' per-model scripts: verbatim texts, layouts, frame rules, task selection."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import lmms_agentic
from lmms_agentic import presets
from lmms_agentic.tasks.agentx import hooks
from lmms_agentic.tasks.agentx.core import release_data, script_protocols, script_texts
from lmms_agentic.tasks.agentx.core.prompt import VideoFile, build_prompt

TASKS = Path(lmms_agentic.tasks_dir()) / "agentx"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(("text", "length", "digest"), [
    # computed over the strings the authors' scripts build (mbzuai-oryx/Agent-X@c62b043)
    (script_texts.OPEN_INSTRUCTION_TEMPLATE, 413, "298a21265214bccdf3245df798e410b0e91423dbd153f1954047638f4626793f"),
    (script_texts.FORMAT_BLOCK_OPEN, 1976, "e7b076bc7ee2689da4d50c3e62f973793df471fac0cd7b533882747e81baa83c"),
    (script_texts.FORMAT_BLOCK_PIXTRAL, 1950, "aacf1122c3f2e5bd6db354ac9f422715492b678e8e3aaf4c36dfbff81b98c6d4"),
    (script_texts.FORMAT_BLOCK_GEMINI, 1918, "7134354aadde7135c9dbb84ad5de37b5c740558bd7bbbff858233459d3f0cd83"),
    (script_texts.KIMI_INSTRUCTION_TEMPLATE, 2360, "fbb5031123fed9bcef00742fff2dd4d39aa4ddd6b7adef5b2f980defac7adb5f"),
], ids=["open_instruction", "open_block", "pixtral_block", "gemini_block", "kimi_instruction"])
def test_verbatim_texts_match_the_scripts(text: str, length: int, digest: str) -> None:
    assert (len(text), _sha(text)) == (length, digest)


def test_instructions_open_as_the_scripts_do() -> None:
    assert script_protocols.get("qwen").instruction().startswith("You are an intelligent multi-modal assistant.")
    assert script_protocols.get("gpt").instruction() == release_data.instruction()
    assert "The output must be a single dictionary containing query, reasoning steps and final answer" in \
        script_protocols.get("gemma").instruction()
    assert script_protocols.get("kimi").instruction().startswith("\nYou are an intelligent multi-modal assistant.")
    assert release_data.toolmeta_json() in script_protocols.get("kimi").instruction()


IMAGES = [Image.new("RGB", (8 + i, 8)) for i in range(3)]


def _layout(protocol: str, visuals: Any, frames: bool = False) -> tuple[str, list[str]]:
    built = script_protocols.build_script_prompt(script_protocols.get(protocol), "Q?", visuals, frames=frames)
    parts = []
    for part in built.segments:
        if isinstance(part, Image.Image):
            parts.append(f"img{part.size[0] - 8}")
        elif isinstance(part, VideoFile):
            parts.append("video")
        else:
            parts.append(part.replace(script_protocols.get(protocol).instruction(), "<instruction>"))
    system = built.system.replace(script_protocols.get(protocol).instruction(), "<instruction>")
    return system, parts


@pytest.mark.parametrize(("protocol", "visuals", "frames", "system", "parts"), [
    ("gpt", IMAGES[:1], False, "<instruction>\n\n", ["img0", "Query: Q?"]),
    ("gpt", IMAGES, False, "<instruction>\n\n", ["Query: Q?", "img0", "img1", "img2"]),
    ("gpt", IMAGES, True, "<instruction>\n\n", ["Query: Q?", "img0", "img1", "img2"]),
    ("gemini", IMAGES, False, "<instruction>", ["img0", "img1", "img2", "Query: Q?"]),
    ("qwen", IMAGES, False, "", ["img0", "img1", "<instruction>\n\n Query: Q?"]),
    ("qwen", VideoFile("v.mp4"), False, "", ["video", "<instruction>\n\nQuery: Q?"]),
    ("gemma", IMAGES, False, "<instruction>", ["img0", "img1", "Query: Q?"]),
    ("gemma", IMAGES, True, "<instruction>", ["img0", "img1", "img2", "Query: Q?"]),
    ("pixtral", IMAGES, False, "", ["img0", "img1", "<instruction>\nQuery: Q?"]),
    ("kimi", IMAGES, False, "", ["img0", "img1", "<instruction>\nQuery: Q?"]),
    ("kimi", IMAGES, True, "", ["img0", "img1", "img2", "<instruction>\nQuery: Q?"]),
    ("kimi", [*IMAGES, IMAGES[0]], True, "", ["img0", "img1", "img2", "<instruction>\nQuery: Q?"]),
])
def test_each_script_layout(protocol: str, visuals: Any, frames: bool, system: str, parts: list[str]) -> None:
    assert _layout(protocol, visuals, frames) == (system, parts)


def test_paper_protocol_is_the_paper_prompt() -> None:
    paper = script_protocols.get(script_protocols.PAPER)
    for visuals, frames in ((IMAGES, False), (IMAGES, True), (VideoFile("v.mp4"), False)):
        assert script_protocols.build_script_prompt(paper, "Q?", visuals, frames=frames) == \
            build_prompt("Q?", visuals, frames=frames)


@pytest.mark.parametrize(("rule", "total", "wanted", "indices"), [
    ("first", 300, 8, [0, 1, 2, 3, 4, 5, 6, 7]),
    ("first", 5, 8, [0, 1, 2, 3, 4]),
    ("floor", 300, 4, [0, 75, 150, 225]),
    ("floor", 10, 4, [0, 2, 5, 7]),
])
def test_frame_rules(rule: str, total: int, wanted: int, indices: list[int]) -> None:
    assert script_protocols.FrameRule(rule)(total, wanted) == indices


def test_random_frames_are_seeded_per_video() -> None:
    plan = script_protocols.get("gemma").video
    first, again = plan.frame_rule("files/a.mp4"), plan.frame_rule("files/a.mp4")
    assert first is not None and again is not None
    picked = first(300, 4)
    assert picked == again(300, 4) == sorted(set(picked)) and len(picked) == 4  # sorted, distinct, repeatable
    other = plan.frame_rule("files/b.mp4")
    assert other is not None and other(300, 4) != picked
    assert first(3, 4) == [0, 1, 2]  # a short video gives every frame (the script would fail on it)
    assert script_protocols.get(script_protocols.PAPER).video.frame_rule("files/a.mp4") is None  # uniform


# --------------------------------------------------------------------------- the task variants on the mini split

SNAPSHOTS = {  # sha256 (first 16) of [(role, [text or part type])] for mini tasks 0 (1 image), 2 (2 images), 5 (video)
    "gpt": ("836ef4a4f33f2b66", "a63a87056848f0ef", "355e760b1a1c35e5"),
    "gemini": ("22ea8ed6edc78338", "ea6d52d00e1cf142", "38c1a9fb266700cf"),
    "qwen": ("2c3bb367356d25e3", "5dcf99159f1a91ce", "a9a865a0bee34161"),
    "gemma": ("352c66b7fbf6a7a9", "8045190b878af255", "04f8226e99a32d4d"),
    "pixtral": ("4363115c0a6a1336", "28c52ed3506591a0", "eaddeef25012d4fa"),
    "kimi": ("2a39001f6ccaea53", "2e9dad1c26d528f6", "9b548329ffd72afd"),
}


def _config(path: Path) -> dict[str, Any]:
    from lmms_eval import utils

    config: dict[str, Any] = utils.load_yaml_config(str(path), mode="full")
    return config


@pytest.mark.parametrize("protocol", sorted(SNAPSHOTS))
def test_script_tasks_send_the_snapshot_prompts(protocol: str, mini_env: None) -> None:
    config = _config(TASKS / f"agentx_script_{protocol}_text_answer.yaml")
    docs = {d["id"]: d for d in config["process_docs"](None)}
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    found = []
    for key in ("0", "2", "5"):
        messages = config["doc_to_messages"](docs[key], kwargs)
        shape = [(m["role"], [p.get("text") if p["type"] == "text" else p["type"] for p in m["content"]])
                 for m in messages]
        found.append(_sha(json.dumps(shape))[:16])
    assert tuple(found) == SNAPSHOTS[protocol]
    record = config["process_results"](docs["0"], ["{}"])["ground_s"]
    assert record["prompt_protocol"]["protocol"] == protocol  # logged per sample
    assert record["prompt_protocol"]["video"]["seeded"] is (script_protocols.get(protocol).video.rule == "random")


def test_the_default_task_logs_the_paper_protocol(mini_env: None) -> None:
    config = _config(TASKS / "agentx_text_answer.yaml")
    doc = config["process_docs"](None)[0]
    assert "prompt_protocol" not in doc
    assert config["process_results"](doc, ["{}"])["ground_s"]["prompt_protocol"]["protocol"] == "paper"


def test_a_script_task_refuses_other_video_settings(mini_env: None) -> None:
    config = _config(TASKS / "agentx_script_gemini_text_answer.yaml")
    video = next(d for d in config["process_docs"](None) if d["media_type"] == "video")
    with pytest.raises(ValueError, match="samples video as video_mode=frames, n_frames=4"):
        hooks.doc_to_messages(video, {"video_mode": "frames", "n_frames": 8, "system_role": True})


@pytest.mark.parametrize(("preset", "task"), [
    ("gpt_4o", "agentx_script_gpt"), ("o4_mini", "agentx_script_gpt"), ("gemini_2_5_pro", "agentx_script_gemini"),
    ("qwen2_5_vl_7b", "agentx_script_qwen"), ("gemma3_4b", "agentx_script_gemma"),
    ("pixtral_12b", "agentx_script_pixtral"), ("kimi_vl_a3b_thinking", "agentx_script_kimi"),
    ("internvl3_8b", "agentx"),
])
def test_presets_select_their_script(preset: str, task: str) -> None:
    chosen = presets.get(preset)
    assert presets.task_for(chosen, "agentx", "single_shot") == task
    if task != "agentx":
        reproduced = set(script_protocols.get(task.removeprefix("agentx_script_")).models)
        assert set(chosen.reference["agentx"]) <= reproduced
