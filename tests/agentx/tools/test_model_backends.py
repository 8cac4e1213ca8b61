"""The `model` backend on CPU with nothing downloaded: a tiny random zero-shot detector (OWL-ViT class) built
here, a loopback OpenAI-compatible VLM endpoint for the describers, and the HTTP tool server on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from lmms_agentic.adapters.agentic.tool_io import ToolInfrastructureError
from lmms_agentic.judges.testing import ScriptedJudgeServer, ScriptedReply
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, bind
from lmms_agentic.tasks.agentx.tools.model_tools import ModelTools
from lmms_agentic.tasks.agentx.tools.server import ToolServer
from lmms_agentic.tasks.agentx.tools.toolset import agentx_runtime, config_from_env


def _bytes_to_unicode() -> list[str]:
    codes = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    extra = [b for b in range(256) if b not in codes]
    return [chr(c) for c in codes] + [chr(256 + i) for i in range(len(extra))]


@pytest.fixture(scope="module")
def tiny_detector(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-weight OWL-ViT with a character-level CLIP tokenizer, saved as a local checkpoint."""
    transformers = pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp("tiny-owlvit")
    chars = _bytes_to_unicode()
    vocab = {token: i for i, token in enumerate([*chars, *(c + "</w>" for c in chars), "<|startoftext|>",
                                                  "<|endoftext|>"])}
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = transformers.CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"),
                                           pad_token="<|endoftext|>")
    config = transformers.OwlViTConfig(
        text_config={"vocab_size": len(vocab), "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "max_position_embeddings": 16, "bos_token_id": vocab["<|startoftext|>"],
                     "eos_token_id": vocab["<|endoftext|>"], "pad_token_id": vocab["<|endoftext|>"]},
        vision_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 16},
        projection_dim=16)
    transformers.set_seed(0)
    model = transformers.OwlViTForObjectDetection(config).eval()
    processor = transformers.OwlViTProcessor(
        image_processor=transformers.OwlViTImageProcessor(size={"height": 32, "width": 32},
                                                          crop_size={"height": 32, "width": 32}),
        tokenizer=tokenizer)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def test_tiny_detector_locates_and_counts(tiny_detector: Path) -> None:
    tools = ModelTools({"LMMS_AGENTIC_AGENTX_DETECTOR": str(tiny_detector),
                        "LMMS_AGENTIC_AGENTX_DETECTOR_THRESHOLD": "0.0"})
    image = Image.new("RGB", (64, 48), "white")
    found = tools.detections("LocateObjectByText", image, "red block")
    assert len(found) == 4  # (32 / 16)^2 patches, every one above a zero threshold
    assert all(0 <= x1 <= x2 <= 64 and 0 <= y1 <= y2 <= 48 for _, (x1, y1, x2, y2) in found)
    top = tools.run("LocateObjectByText", {"text": "red block", "top1": True}, {"image": image}).text
    x1, y1, x2, y2 = found[0][1]
    assert top == f"({x1}, {y1}, {x2}, {y2}), score {found[0][0] * 100:.0f}"  # GTA: score x 100
    assert tools.run("ObjectCounter", {"text": "red block"}, {"image": image}).text == "4"
    assert tools.run("ObjectCounter", {"text": "red block"}, {"image": image}).text == "4"  # deterministic


def test_model_tool_without_its_setting_says_which_variable() -> None:
    assert ModelTools({}).missing("ObjectCounter") == ModelTools({}).missing("LocateObjectByText")
    assert "LMMS_AGENTIC_AGENTX_DETECTOR" in str(ModelTools({}).missing("ObjectCounter"))
    with pytest.raises(ToolInfrastructureError, match=r"^the model backend needs LMMS_AGENTIC_AGENTX_DETECTOR"):
        ModelTools({}).run("ObjectCounter", {"text": "cat"}, {"image": Image.new("RGB", (8, 8))})


def test_describers_use_an_openai_compatible_endpoint() -> None:
    with ScriptedJudgeServer(lambda call: ScriptedReply("A red square on white.")) as server:
        tools = ModelTools({"LMMS_AGENTIC_AGENTX_VLM_BASE_URL": server.base_url,
                            "LMMS_AGENTIC_AGENTX_VLM_MODEL": "vlm-test", "VLM_KEY": "sk-local",
                            "LMMS_AGENTIC_AGENTX_VLM_API_KEY_ENV": "VLM_KEY"})
        image = Image.new("RGB", (40, 40), "white")
        assert tools.run("SceneDescriber", {}, {"image": image}).text == "A red square on white."
        tools.run("RegionDescriber", {"bbox": "(0, 0, 20, 20)", "attribute": "color"}, {"image": image})
        first, second = server.calls
    assert first.body["temperature"] == 0 and first.body["model"] == "vlm-test"
    assert first.headers.get("Authorization") == "Bearer sk-local"
    parts = second.body["messages"][0]["content"]
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,") and "color" in parts[1]["text"]


def test_tool_server_on_loopback_runs_tools_for_a_remote_runtime() -> None:
    server_runtime = agentx_runtime(config_from_env({}, server_side=True), sandbox_warm=0)
    server = ToolServer(server_runtime).start()
    try:
        config = config_from_env({"LMMS_AGENTIC_AGENTX_TOOLS": "DrawBoundingBox=remote,Calculator=remote",
                                         "LMMS_AGENTIC_AGENTX_TOOL_SERVER": server.url})
        client = agentx_runtime(config, sandbox_warm=0)
        client.check_server()
        image = Image.new("RGB", (50, 50), "white")
        call = bind("DrawBoundingBox", {"image": "image_1", "bbox": "(5, 5, 20, 20)"}, 1, 1)
        assert isinstance(call, BoundCall)
        drawn = client.execute({"gt_steps_flat_json": "[]"}, call, [image])
        assert drawn.status == "ok" and drawn.backend == "remote:local" and drawn.image is not None
        assert drawn.image.getpixel((5, 10)) == (255, 0, 0)
        bad = bind("Calculator", {"expression": "1/0"}, 1, 1)
        assert isinstance(bad, BoundCall)
        failed = client.execute({"gt_steps_flat_json": "[]"}, bad, [image])
        assert failed.status == "error" and "ZeroDivisionError" in failed.text
    finally:
        server.stop()
    unreachable = agentx_runtime(config_from_env({"LMMS_AGENTIC_AGENTX_TOOLS": "*=remote",
                                                      "LMMS_AGENTIC_AGENTX_TOOL_SERVER": server.url}),
                              sandbox_warm=0).execute({"gt_steps_flat_json": "[]"}, bad, [image])
    assert unreachable.status == "unavailable" and unreachable.text == "Calculator is unavailable right now."
    assert unreachable.reason is not None and "did not answer" in unreachable.reason


@pytest.mark.parametrize(("setting", "message"), [
    ("OCR=model", "has no model backend"), ("Solver=remote", "LMMS_AGENTIC_AGENTX_TOOL_SERVER"),
    ("Calculator=gpu", "backend"), ("Nope=local", "bad entry")])
def test_bad_backend_configuration_is_one_clear_line(setting: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        config_from_env({"LMMS_AGENTIC_AGENTX_TOOLS": setting})


def test_star_remote_leaves_the_replay_only_tools_on_replay() -> None:
    config = config_from_env({"LMMS_AGENTIC_AGENTX_TOOLS": "*=remote,OCR=local",
                                     "LMMS_AGENTIC_AGENTX_TOOL_SERVER": "http://127.0.0.1:9"})
    assert config.backends["MathOCR"] == config.backends["WebSearch"] == "replay"  # no server runs them
    assert config.backends["SceneDescriber"] == config.backends["Solver"] == "remote"
    assert config.backends["OCR"] == "local"  # a named entry wins
