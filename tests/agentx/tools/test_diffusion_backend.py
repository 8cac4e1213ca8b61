"""ImageGenerator and ImageStylization on the `model` backend, through the agent loop's entry point, with tiny
random-weight diffusers checkpoints built here (a Stable Diffusion text-to-image one and an InstructPix2Pix one,
character-level CLIP tokenizer, nothing downloaded): the image each returns and how the episode keeps it, the
settings used and recorded, determinism, a missing checkpoint, a non-image input."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from lmms_agentic.adapters import provenance
from lmms_agentic.adapters.agentic.tool_runtime import ToolRuntime
from lmms_agentic.tasks.agentx.tools import execution, hooks
from lmms_agentic.tasks.agentx.tools.catalogue import BoundCall, bind
from lmms_agentic.tasks.agentx.tools.model_tools import DIFFUSION_SEED, ENV_DIFFUSION, ENV_DIFFUSION_EDIT, ModelTools
from lmms_agentic.tasks.agentx.tools.toolset import RESULTS_KEY, agentx_runtime, reset_default_runtime, tools_of

diffusers = pytest.importorskip("diffusers", reason="diffusers is not installed: pip install -e '.[tools]'")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

KWARGS = {"max_steps": 8, "video_mode": "frames", "n_frames": 8}
TOOLS_ON_MODEL = "ImageGenerator=model,ImageStylization=model"
LATENT_SIDE = 8
VAE_SCALE = 8  # four VAE blocks, as Stable Diffusion's


def _byte_level_chars() -> list[str]:
    codes = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    extra = [b for b in range(256) if b not in codes]
    return [chr(c) for c in codes] + [chr(256 + i) for i in range(len(extra))]


def _components(folder: Path, unet_inputs: int) -> dict[str, Any]:
    """Random tiny components: a CLIP text encoder with a character-level tokenizer, a UNet and a VAE."""
    chars = _byte_level_chars()
    vocab = {token: i for i, token in enumerate([*chars, *(c + "</w>" for c in chars), "<|startoftext|>",
                                                  "<|endoftext|>"])}
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = transformers.CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"),
                                           pad_token="<|endoftext|>", model_max_length=77)
    text_encoder = transformers.CLIPTextModel(transformers.CLIPTextConfig(
        vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        max_position_embeddings=77, projection_dim=16, bos_token_id=vocab["<|startoftext|>"],
        eos_token_id=vocab["<|endoftext|>"], pad_token_id=vocab["<|endoftext|>"]))
    unet = diffusers.UNet2DConditionModel(
        sample_size=LATENT_SIDE, in_channels=unet_inputs, out_channels=4, block_out_channels=(8, 16),
        layers_per_block=1, down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=16, attention_head_dim=2,
        norm_num_groups=4)
    vae = diffusers.AutoencoderKL(
        block_out_channels=(8, 8, 8, 8), down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4, latent_channels=4, norm_num_groups=4, sample_size=64)
    return {"unet": unet, "vae": vae, "text_encoder": text_encoder, "tokenizer": tokenizer, "safety_checker": None,
            "feature_extractor": None, "requires_safety_checker": False}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """The two checkpoints, saved as a user's local folders; torch on one thread while the module runs (the tiny
    models are dominated by thread hand-offs on a shared machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        root = tmp_path_factory.mktemp("tiny-diffusion")
        torch.manual_seed(0)
        text_to_image = diffusers.StableDiffusionPipeline(
            **_components(root, unet_inputs=4), scheduler=diffusers.PNDMScheduler(skip_prk_steps=True, steps_offset=1))
        text_to_image.save_pretrained(root / "sd")
        editing = diffusers.StableDiffusionInstructPix2PixPipeline(
            **_components(root, unet_inputs=8), scheduler=diffusers.EulerAncestralDiscreteScheduler())
        editing.save_pretrained(root / "instruct-pix2pix")
        yield {"sd": root / "sd", "edit": root / "instruct-pix2pix"}
    torch.set_num_threads(threads)


@pytest.fixture()
def configured(checkpoints: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolRuntime]:
    """The process's runtime as a user configures it: both tools on `model`, the checkpoints named by the variables."""
    monkeypatch.setenv("LMMS_AGENTIC_AGENTX_TOOLS", TOOLS_ON_MODEL)
    monkeypatch.setenv(ENV_DIFFUSION, str(checkpoints["sd"]))
    monkeypatch.setenv(ENV_DIFFUSION_EDIT, str(checkpoints["edit"]))
    reset_default_runtime()
    runtime = agentx_runtime(sandbox_warm=0)
    yield runtime
    reset_default_runtime()


@pytest.fixture(scope="module")
def video_doc() -> dict[str, Any]:
    """A generative task of the mini split whose inputs are 160x96 video frames."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        from lmms_agentic.tasks.agentx import hooks as agentx_hooks

        return next(dict(row) for row in agentx_hooks.all_docs() if row["media_type"] == "video")


def _call(tool: str, **arguments: Any) -> str:
    return json.dumps({"thought": f"use {tool}", "tool": tool, "arguments": arguments})


def _episode(doc: dict[str, Any], replies: list[str], runtime: ToolRuntime) -> tuple[dict[str, Any], list[Any]]:
    """lmms-eval's agentic loop in miniature (reply, `doc_to_text`, until terminal): the scored record and the
    visuals of the last round."""
    outputs: list[str] = []
    info: Any = None
    for round_idx, reply in enumerate(replies, start=1):
        outputs.append(reply)
        _, _, terminal, updated, info = hooks.doc_to_text(doc, KWARGS, previous_output=outputs, round_idx=round_idx,
                                                          previous_round_info=info, runtime=runtime)
        if terminal:
            return hooks.record(doc, list(updated), judge=False, kwargs=KWARGS), list(info["visuals"])
    raise AssertionError("the script must end with a final answer")


def _pixels(image: Image.Image) -> np.ndarray[Any, Any]:
    return np.asarray(image.convert("RGB"))


def _bound(tool: str, arguments: dict[str, Any], n_visuals: int = 1) -> BoundCall:
    call = bind(tool, arguments, n_visuals, n_visuals)
    assert isinstance(call, BoundCall), call
    return call


def test_both_tools_return_images_the_episode_keeps_like_any_image_tool(
        configured: ToolRuntime, video_doc: dict[str, Any]) -> None:
    frames = hooks.input_visuals(video_doc, KWARGS)
    n = len(frames)
    replies = [_call("ImageGenerator", keywords="a red bicycle, watercolor"),
               _call("ImageStylization", image="image_1", instruction="make it look like a pencil sketch"),
               _call("ImageStylization", image="a photo of a bicycle", instruction="make it blue"),
               _call("ImageStylization", image=f"image_{n + 9}", instruction="make it blue"),
               _call("DrawBoundingBox", image=f"image_{n + 1}", bbox="(4, 4, 40, 40)"),
               json.dumps({"thought": "done", "final_answer": {"value": "done", "justification": "drawn"}})]
    record, visuals = _episode(video_doc, replies, configured)
    generated, styled, not_an_image, no_such_image, drawn, final = record["rounds"]

    side = LATENT_SIDE * VAE_SCALE  # the pipeline's default size
    for entry, name in ((generated, f"image_{n + 1}"), (styled, f"image_{n + 2}"), (drawn, f"image_{n + 3}")):
        assert entry["status"] == "ok" and entry["image"] == name, entry
        assert entry["observation"].endswith(f"(attached as {name})")
    assert generated["backend"] == styled["backend"] == "model" and drawn["backend"] == "local"
    assert generated["observation"] == f"an image of a red bicycle, watercolor (attached as image_{n + 1})"
    new_images = visuals[n:n + 2]
    assert [image.size for image in new_images] == [(side, side), frames[0].size]  # restyled at the input's size
    assert all(image.mode == "RGB" for image in new_images)
    assert _pixels(new_images[1]).std() > 0  # a decoded image, not a blank

    for entry in (not_an_image, no_such_image):  # the model's mistake, answered; the episode goes on
        assert entry["status"] == "invalid_arguments" and entry["valid"] is False and entry["image"] is None
        assert "image" in entry["observation"] and "unavailable" not in entry["observation"]
    assert final["kind"] == "final" and record["execution"]["finished"]
    per_tool = record["execution"]["per_tool"]
    assert per_tool["ImageStylization"]["calls"] == 3 and per_tool["ImageStylization"]["valid"] == 1
    assert per_tool["ImageGenerator"]["backends"] == ["model"]
    json.dumps(record, ensure_ascii=False, allow_nan=True)  # the stored sample holds the image's name, not pixels


def test_the_declared_settings_are_the_ones_used_and_recorded(configured: ToolRuntime,
                                                              checkpoints: dict[str, Path]) -> None:
    assert RESULTS_KEY == execution.RUNTIME_KEY
    provenance.clear()
    hooks.prepare_episodes(configured)  # the round loop, before the first model call
    before = provenance.collected()[execution.RUNTIME_KEY]["tools"]["diffusion"]
    assert before == {
        "ImageGenerator": {"variable": ENV_DIFFUSION, "checkpoint": str(checkpoints["sd"]), "pipeline": None,
                           "seed": DIFFUSION_SEED},
        "ImageStylization": {"variable": ENV_DIFFUSION_EDIT, "checkpoint": str(checkpoints["edit"]),
                             "pipeline": None, "seed": DIFFUSION_SEED}}

    frame = Image.new("RGB", (96, 64), (200, 40, 40))
    steps: dict[str, list[int]] = {}

    def scheduled(tool: str, set_timesteps: Any) -> Any:
        def spy(num_inference_steps: int, *args: Any, **kwargs: Any) -> Any:
            steps.setdefault(tool, []).append(num_inference_steps)
            return set_timesteps(num_inference_steps, *args, **kwargs)
        return spy

    for tool, arguments in (("ImageGenerator", {"keywords": "a lighthouse"}),
                            ("ImageStylization", {"image": "image_1", "instruction": "make it night"})):
        configured.execute({}, _bound(tool, arguments), [frame])  # loads the pipeline
        scheduler = tools_of(configured).models.pipeline(tool).pipe.scheduler
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(scheduler, "set_timesteps", scheduled(tool, scheduler.set_timesteps))
            first = configured.execute({}, _bound(tool, arguments), [frame])
        second = configured.execute({}, _bound(tool, arguments), [frame])
        assert first.status == second.status == "ok" and first.image is not None and second.image is not None
        assert np.array_equal(_pixels(first.image), _pixels(second.image))  # the same seed, the same pixels

        settings = tools_of(configured).models.diffusion_settings()[tool]
        pipe = tools_of(configured).models.pipeline(tool).pipe
        direct = {"prompt": next(iter(arguments.values())) if tool == "ImageGenerator" else arguments["instruction"],
                  **({"image": frame} if tool == "ImageStylization" else {}),
                  **{k: v for k, v in settings.items() if k.endswith(("steps", "scale"))},
                  "generator": torch.Generator().manual_seed(settings["seed"])}
        expected = pipe(**direct).images[0].resize(first.image.size, Image.Resampling.BICUBIC)
        assert np.array_equal(_pixels(first.image), _pixels(expected))  # exactly these settings made the image

    declared = tools_of(configured).models.diffusion_settings()
    generator, stylization = (declared[t] for t in ("ImageGenerator", "ImageStylization"))
    assert generator == {"variable": ENV_DIFFUSION, "checkpoint": str(checkpoints["sd"]),
                         "pipeline": "StableDiffusionPipeline", "num_inference_steps": 50, "guidance_scale": 7.5,
                         "seed": 0}  # the pipeline's own defaults, passed explicitly
    assert stylization == {"variable": ENV_DIFFUSION_EDIT, "checkpoint": str(checkpoints["edit"]),
                           "pipeline": "StableDiffusionInstructPix2PixPipeline", "num_inference_steps": 100,
                           "guidance_scale": 7.5, "image_guidance_scale": 1.5, "seed": 0}
    assert steps == {"ImageGenerator": [50], "ImageStylization": [100]}  # what the scheduler was asked for
    after = provenance.collected()[execution.RUNTIME_KEY]["tools"]  # (asked when the results file is written)
    provenance.clear()
    assert after["diffusion"] == {"ImageGenerator": generator, "ImageStylization": stylization}
    assert after["backends_used"]["ImageGenerator"] == "model"


def test_concurrent_calls_give_the_pixels_of_one_call(configured: ToolRuntime) -> None:
    """The batched loop runs a round's calls at once; a pipeline's scheduler is shared state."""
    call = _bound("ImageGenerator", {"keywords": "two boats"}, n_visuals=0)
    alone = configured.execute({}, call, [])
    together: list[Any] = [None, None]

    def run(slot: int) -> None:
        together[slot] = configured.execute({}, call, [])

    threads = [threading.Thread(target=run, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert alone.image is not None
    for observed in together:
        assert observed.status == "ok" and np.array_equal(_pixels(observed.image), _pixels(alone.image))


def test_an_sd_checkpoint_alone_also_restyles(checkpoints: dict[str, Path]) -> None:
    tools = ModelTools({ENV_DIFFUSION: str(checkpoints["sd"])})
    image = Image.new("RGB", (75, 45), (20, 120, 220))
    styled = tools.run("ImageStylization", {"instruction": "make it a mosaic"}, {"image": image})
    assert styled.image is not None and styled.image.size == image.size
    assert tools.diffusion_settings()["ImageStylization"]["pipeline"] == "StableDiffusionImg2ImgPipeline"


def test_a_missing_checkpoint_is_unavailable_and_the_reason_names_the_path_and_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "no-such-checkpoint"
    monkeypatch.setenv("LMMS_AGENTIC_AGENTX_TOOLS", TOOLS_ON_MODEL)
    monkeypatch.setenv(ENV_DIFFUSION, str(missing))
    monkeypatch.delenv(ENV_DIFFUSION_EDIT, raising=False)
    runtime = agentx_runtime(sandbox_warm=0)
    observed = runtime.execute({}, _bound("ImageGenerator", {"keywords": "a cat"}, n_visuals=0), [])
    assert observed.status == "unavailable" and observed.text == "ImageGenerator is unavailable right now."
    assert observed.reason == f"the diffusion checkpoint {str(missing)!r} ({ENV_DIFFUSION}) is not a folder"
    restyled = runtime.execute({}, _bound("ImageStylization", {"image": "image_1", "instruction": "blue"}),
                               [Image.new("RGB", (8, 8))])
    assert restyled.status == "unavailable" and restyled.reason is not None and ENV_DIFFUSION in restyled.reason
    assert set(runtime.failures.counts()) == {"ImageGenerator", "ImageStylization"}
    unset = ModelTools({})
    assert ENV_DIFFUSION in str(unset.missing("ImageGenerator"))
    assert f"{ENV_DIFFUSION_EDIT} or {ENV_DIFFUSION}" in str(unset.missing("ImageStylization"))
    assert ModelTools({ENV_DIFFUSION_EDIT: str(missing)}).missing("ImageStylization") is None
