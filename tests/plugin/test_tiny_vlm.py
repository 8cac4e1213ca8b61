"""The tiny random-weight checkpoints: build offline, reload, generate, are reused; the Qwen2.5-VL text heads are
32 wide (vLLM's CPU attention), and each kind records itself so model_args fits its backend."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("torch")

from lmms_agentic.devtools import tiny_vlm

N_NEW = 4


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tiny_vlm.build_tiny_qwen2_5_vl(tmp_path_factory.mktemp("tiny") / "qwen2_5_vl", seed=0)


@pytest.fixture(scope="module")
def loaded(checkpoint: pathlib.Path) -> tuple[Any, Any]:
    import transformers

    tf: Any = transformers  # its annotations vary across versions
    processor = tf.AutoProcessor.from_pretrained(checkpoint, local_files_only=True)
    model = tf.Qwen2_5_VLForConditionalGeneration.from_pretrained(
        checkpoint, local_files_only=True, device_map="cpu"
    ).eval()
    return processor, model


def _generate(processor: Any, model: Any, content: list[dict[str, Any]], **media: Any) -> tuple[Any, Any]:
    import torch

    messages = [{"role": "user", "content": content}]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], return_tensors="pt", **media)
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=N_NEW, min_new_tokens=N_NEW, do_sample=False)
    return inputs, out


def test_checkpoint_files_and_token_ids(checkpoint: pathlib.Path) -> None:
    meta = json.loads((checkpoint / tiny_vlm.MARKER).read_text(encoding="utf-8"))
    assert meta["seed"] == 0 and meta["kind"] == "qwen2_5_vl" and meta["builder_version"] == tiny_vlm.BUILDER_VERSION
    assert set(tiny_vlm.REQUIRED_FILES) <= set(meta["files"])
    assert all((checkpoint / name).is_file() for name in meta["files"])
    assert 100_000 < meta["parameters"] < 1_000_000
    config = json.loads((checkpoint / "config.json").read_text(encoding="utf-8"))
    ids = meta["token_ids"]
    assert config["image_token_id"] == ids["<|image_pad|>"]
    assert config["video_token_id"] == ids["<|video_pad|>"]
    assert config["vision_start_token_id"] == ids["<|vision_start|>"]
    assert config["vision_end_token_id"] == ids["<|vision_end|>"]
    assert config["text_config"]["eos_token_id"] == ids["<|im_end|>"]
    text = config["text_config"]
    assert (text["hidden_size"], text["num_attention_heads"], text["num_key_value_heads"]) == (64, 2, 1)
    rope = text.get("rope_parameters") or text.get("rope_scaling")
    assert rope["mrope_section"] == [4, 6, 6]  # sums to head size 32 / 2


@pytest.mark.parametrize("kind", ["qwen3_vl", "llava"])
def test_other_kinds_build_and_name_their_backend(kind: str, tmp_path: pathlib.Path) -> None:
    import transformers

    root = tiny_vlm.build(tmp_path / kind, kind)
    assert tiny_vlm.kind_of(root) == kind and tiny_vlm.is_complete(root, 0, kind)
    assert not tiny_vlm.is_complete(root, 0, "qwen2_5_vl")
    args = dict(item.split("=", 1) for item in tiny_vlm.model_args(root).split(","))
    assert args["pretrained"] == str(root) and args["device"] == "cpu"
    config = transformers.AutoConfig.from_pretrained(root)
    assert config.model_type == {"qwen3_vl": "qwen3_vl", "llava": "llava"}[kind]
    assert config.text_config.hidden_size // config.text_config.num_attention_heads == 32
    assert tiny_vlm.BACKEND[kind] in ("qwen3_vl", "llava_hf")
    with pytest.raises(ValueError, match="unknown kind"):
        tiny_vlm.build(tmp_path / "x", "nope")


def test_tokenizer_knows_the_special_tokens(loaded: tuple[Any, Any]) -> None:
    processor, model = loaded
    tok = processor.tokenizer
    for token in tiny_vlm.SPECIAL_TOKENS:
        assert tok.tokenize(f"a{token}b") == ["a", token, "b"]
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    assert len(tok) <= model.config.text_config.vocab_size
    text = "The answer is (B). A C D E F G H I J 0123456789"
    assert tok.decode(tok.encode(text)) == text


def test_chat_template_renders_images_and_videos(loaded: tuple[Any, Any]) -> None:
    processor, _ = loaded
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "image"}, {"type": "video"}, {"type": "text", "text": "Q?"}]},
    ]
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n"
        "<|vision_start|><|image_pad|><|vision_end|><|vision_start|><|video_pad|><|vision_end|>Q?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    plain = processor.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False)
    assert plain.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")


def test_generate_with_image(loaded: tuple[Any, Any]) -> None:
    from PIL import Image

    processor, model = loaded
    image = Image.new("RGB", (64, 64), (200, 30, 30))
    content: list[dict[str, Any]] = [
        {"type": "image", "image": image},
        {"type": "text", "text": "What color? A. red B. blue"},
    ]
    inputs, out = _generate(processor, model, content, images=[image])
    assert tuple(inputs["image_grid_thw"].tolist()[0]) == (1, 4, 4)  # 64x64 -> 56x56 -> 4x4 patches
    n_pad = int((inputs["input_ids"] == model.config.image_token_id).sum())
    assert n_pad == 4  # 16 patches merged 2x2
    assert out.shape == (1, inputs["input_ids"].shape[1] + N_NEW)


def test_generate_with_video(loaded: tuple[Any, Any]) -> None:
    from PIL import Image

    processor, model = loaded
    frames = [Image.new("RGB", (56, 56), (40 * i, 40 * i, 40 * i)) for i in range(4)]
    content: list[dict[str, Any]] = [
        {"type": "video", "video": frames},
        {"type": "text", "text": "What happens?"},
    ]
    inputs, out = _generate(processor, model, content, videos=[frames])
    assert tuple(inputs["video_grid_thw"].tolist()[0]) == (2, 4, 4)  # 4 frames / temporal patch 2
    assert int((inputs["input_ids"] == model.config.video_token_id).sum()) == 8
    assert out.shape == (1, inputs["input_ids"].shape[1] + N_NEW)


def test_second_build_reuses_the_checkpoint(checkpoint: pathlib.Path) -> None:
    marker = checkpoint / tiny_vlm.MARKER
    before = (marker.stat().st_mtime_ns, (checkpoint / "model.safetensors").stat().st_mtime_ns)
    assert tiny_vlm.build_tiny_qwen2_5_vl(checkpoint, seed=0) == checkpoint
    assert (marker.stat().st_mtime_ns, (checkpoint / "model.safetensors").stat().st_mtime_ns) == before
    assert tiny_vlm.is_complete(checkpoint, seed=0)
    assert not tiny_vlm.is_complete(checkpoint, seed=1)
    assert not tiny_vlm.is_complete(checkpoint.parent / "missing")


def test_model_args_and_cli(checkpoint: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = dict(item.split("=", 1) for item in tiny_vlm.model_args(checkpoint).split(","))
    assert args["pretrained"] == str(checkpoint)
    assert args["device"] == "cpu" and args["device_map"] == "cpu"
    assert int(args["max_pixels"]) >= int(args["min_pixels"]) >= 28 * 28
    assert tiny_vlm.main([str(checkpoint), "--args-only"]) == 0
    assert capsys.readouterr().out.strip() == tiny_vlm.model_args(checkpoint)


def test_import_is_cheap() -> None:
    code = "import sys, lmms_agentic.devtools.tiny_vlm; assert not {'torch', 'transformers'} & set(sys.modules)"
    root = str(pathlib.Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def _write_mp4(path: pathlib.Path, n_frames: int = 8) -> None:
    import av
    import numpy as np

    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=8)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(n_frames):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), 30 * i, np.uint8), format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())


@pytest.mark.parametrize("force_simple", [False, True], ids=["chat", "simple"])
def test_lmms_eval_qwen2_5_vl_backend_generates(
    checkpoint: pathlib.Path, tmp_path: pathlib.Path, force_simple: bool
) -> None:
    """lmms-eval's own qwen2_5_vl backend loads the checkpoint and answers an image and a video request."""
    from lmms_eval import models
    from lmms_eval.api.instance import Instance
    from PIL import Image

    video = tmp_path / "clip.mp4"
    _write_mp4(video)
    docs: list[dict[str, Any]] = [
        {"image": Image.new("RGB", (120, 80), (10, 200, 10)), "q": "Which? A. cup B. box"},
        {"video": str(video), "q": "Why?"},
    ]

    def doc_to_messages(doc: dict[str, Any]) -> list[dict[str, Any]]:
        media = (
            {"type": "image", "url": doc["image"]}
            if "image" in doc
            else {"type": "video", "url": doc["video"]}
        )
        return [{"role": "user", "content": [media, {"type": "text", "text": doc["q"]}]}]

    def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
        return [doc.get("image", doc.get("video"))]

    lm = models.get_model("qwen2_5_vl", force_simple).create_from_arg_string(tiny_vlm.model_args(checkpoint))
    lm.task_dict = {"tiny": {"test": docs}}
    gen_kwargs = {"max_new_tokens": N_NEW, "temperature": 0, "until": ["\n\n"]}
    requests = []
    for doc_id, doc in enumerate(docs):
        if force_simple:
            arguments: tuple[Any, ...] = (doc["q"], gen_kwargs, doc_to_visual, doc_id, "tiny", "test")
        else:
            arguments = (doc["q"], doc_to_messages, gen_kwargs, doc_id, "tiny", "test")
        meta = {"task": "tiny", "doc_id": doc_id, "repeats": 1}
        requests.append(Instance("generate_until", arguments, idx=0, metadata=meta))
    answers = [getattr(out, "text", out) for out in lm.generate_until(requests)]
    assert len(answers) == 2 and all(isinstance(answer, str) for answer in answers)
