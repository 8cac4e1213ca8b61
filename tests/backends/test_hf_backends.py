"""lmms-eval's Hugging Face chat backends that model presets use (`qwen2_5_vl`, `qwen3_vl`, `llava_hf`) on CPU.

Each backend loads a tiny random-weight checkpoint of its architecture, built here with no download
(`lmms_agentic.devtools.tiny_vlm`), and answers chat requests carrying images (and a video for the Qwen backends)
through lmms-eval's own request path. The answers are random text: the checks are that every request gets a string
answer, that tokens were generated (the backends swallow generation errors into an empty answer), and that the model
arguments a preset gives its `hf` backend are accepted by that backend's constructor.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

pytest.importorskip("torch")

from lmms_agentic.devtools import tiny_vlm

N_NEW = 4


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    root = tmp_path_factory.mktemp("tiny")
    return {kind: tiny_vlm.build(root / kind, kind) for kind in tiny_vlm.KINDS}


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


def _docs(tmp_path: pathlib.Path, with_video: bool) -> list[dict[str, Any]]:
    from PIL import Image

    docs: list[dict[str, Any]] = [
        {"images": [Image.new("RGB", (120, 80), (10, 200, 10))], "q": "Which? A. cup B. box"},
        {"images": [Image.new("RGB", (64, 64), (200, 10, 10)), Image.new("RGB", (96, 64), (10, 10, 200))],
         "q": "Which image is red? A. first B. second"},
    ]
    if with_video:
        video = tmp_path / "clip.mp4"
        _write_mp4(video)
        docs.append({"video": str(video), "q": "What happens?"})
    return docs


def _messages(doc: dict[str, Any]) -> list[dict[str, Any]]:
    media = ([{"type": "image", "url": image} for image in doc["images"]] if "images" in doc
             else [{"type": "video", "url": doc["video"]}])
    return [{"role": "system", "content": [{"type": "text", "text": "Answer with a letter."}]},
            {"role": "user", "content": [*media, {"type": "text", "text": doc["q"]}]}]


def _answer(lm: Any, docs: list[dict[str, Any]]) -> list[Any]:
    from lmms_eval.api.instance import Instance

    lm.task_dict = {"tiny": {"test": docs}}
    requests = []
    for doc_id, doc in enumerate(docs):
        gen_kwargs = {"max_new_tokens": N_NEW, "temperature": 0, "until": []}
        arguments = (doc["q"], _messages, gen_kwargs, doc_id, "tiny", "test")
        requests.append(Instance("generate_until", arguments, idx=0,
                                 metadata={"task": "tiny", "doc_id": doc_id, "repeats": 1}))
    return list(lm.generate_until(requests))


@pytest.mark.parametrize("kind", tiny_vlm.KINDS)
def test_chat_backend_answers_images_and_video(kind: str, checkpoints: dict[str, pathlib.Path],
                                               tmp_path: pathlib.Path) -> None:
    from lmms_eval import models

    lm = models.get_model(tiny_vlm.BACKEND[kind], False).create_from_arg_string(
        tiny_vlm.model_args(checkpoints[kind]))
    assert not lm.is_simple
    docs = _docs(tmp_path, with_video=kind != "llava")
    results = _answer(lm, docs)
    assert len(results) == len(docs)
    for result in results:
        assert isinstance(getattr(result, "text", result), str)
        counts = getattr(result, "token_counts", None)
        # llava_hf and qwen2_5_vl log the tokens generated; None would mean generation raised and was swallowed
        if kind == "llava":
            assert counts is not None and counts.output_tokens > 0


@pytest.mark.parametrize("kind", tiny_vlm.KINDS)
def test_preset_hf_arguments_load_the_backend(kind: str, checkpoints: dict[str, pathlib.Path]) -> None:
    """The model_args a preset gives its `hf` backend, pointed at the tiny checkpoint and the CPU, load."""
    from lmms_eval import models

    from lmms_agentic import presets

    chosen = [p for p in presets.all_presets().values()
              if "hf" in p.backends and p.backends["hf"].model == tiny_vlm.BACKEND[kind]]
    assert chosen, f"no preset uses the {tiny_vlm.BACKEND[kind]} backend"
    spec = chosen[0].backends["hf"]
    args = presets.cpu_model_args(spec, str(checkpoints[kind]))
    lm = models.get_model(spec.model, False).create_from_arg_string(args)
    assert lm is not None


def test_lm_eval_hf_multimodal_stops_when_a_documents_images_would_not_all_reach_the_model(
        checkpoints: dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    """lm-eval's `hf-multimodal` keeps the first `max_images` images and turns the other placeholders into text: a
    RoboVista ICL document (an example image and the question's) with `max_images=1` stops before any generation, with
    one line naming the fix. Its mini-split runs on all three benchmarks: `tests/lmeval/test_readme_commands.py`."""
    pytest.importorskip("lm_eval")
    import os
    import subprocess
    import sys

    from lmms_agentic.lmeval import tasks_dir

    env = {**os.environ, "LMMS_AGENTIC_DATA": "mini", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "hf-multimodal", "--model_args",
         f"pretrained={checkpoints['qwen2_5_vl']},max_images=1", "--device", "cpu", "--include_path", tasks_dir(),
         "--tasks", "robovista_icl_seed0", "--apply_chat_template", "--limit", "1", "--output_path",
         str(tmp_path / "out")], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False)
    last = (done.stdout + done.stderr).strip().splitlines()[-1]
    assert done.returncode != 0 and "ImageLimitError: robovista_icl_seed0: document" in last, last
    assert "at most 1 (max_images in --model_args" in last and "pass max_images=64" in last
    assert "Running generate_until requests" not in done.stderr
