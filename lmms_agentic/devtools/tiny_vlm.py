"""Build tiny random-weight vision-language checkpoints locally, with no download.

Three kinds, one per lmms-eval chat backend the model presets use on local weights:

- ``qwen2_5_vl`` (``Qwen2_5_VLForConditionalGeneration``, backend ``qwen2_5_vl``; also what ``make test-vllm`` loads
  into vLLM's CPU build): text head size 32 (2 query heads, 1 key/value head over hidden size 64, 3D rotary
  sections 4/6/6), because vLLM's CPU attention kernels support no smaller head size;
- ``qwen3_vl`` (``Qwen3VLForConditionalGeneration``, backend ``qwen3_vl``: 16-pixel patches, deepstack layers);
- ``llava`` (``LlavaForConditionalGeneration`` with a CLIP vision tower and a Llama text model, backend
  ``llava_hf``).

Each has a byte-level BPE tokenizer trained here with the `tokenizers` library on a small built-in corpus (the
Qwen-VL special tokens, plus ``<image>`` for LLaVA), its processor and a ChatML-style chat template. The weights
are random: these are plumbing checks for lmms-eval's backends on CPU, not models; their answers are random text.
A build is a few hundred thousand parameters (about 1 MB) and takes seconds.

Use them with::

    python -m lmms_agentic.devtools.tiny_vlm OUT_DIR [--kind qwen2_5_vl|qwen3_vl|llava]
    lmms-eval --model qwen2_5_vl --model_args "$(python -m lmms_agentic.devtools.tiny_vlm OUT_DIR --args-only)" ...

``model_args(path)`` gives the ``--model_args`` for the kind stored in ``path`` (CPU, small pixel budgets).
Nothing is imported from torch or transformers until a function is called.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

MARKER = "tiny_vlm.json"
BUILDER_VERSION = 2  # 2: Qwen2.5-VL text heads 2 x 32 (vLLM CPU), kinds qwen3_vl and llava
KINDS = ("qwen2_5_vl", "qwen3_vl", "llava")
BACKEND = {"qwen2_5_vl": "qwen2_5_vl", "qwen3_vl": "qwen3_vl", "llava": "llava_hf"}
"""The lmms-eval backend (``--model``) that runs each kind."""
MIN_PIXELS = 56 * 56  # Qwen2.5-VL: 4 patches of 28x28 -> 1 merged vision token
MAX_PIXELS = 4 * 56 * 56  # 16 merged vision tokens per image (or per 2 video frames)
QWEN3_MIN_PIXELS = 64 * 64  # Qwen3-VL: 16-pixel patches merged 2x2 -> 32x32 per token; 4 tokens
QWEN3_MAX_PIXELS = 4 * 64 * 64
MAX_NUM_FRAMES = 4
CLIP_IMAGE_SIZE = 32  # LLaVA: every image becomes 32x32 -> 4x4 patches of 8 -> 16 image tokens
VOCAB_SIZE = 640  # tokens learnt by BPE, special tokens included
DEFAULT_SYSTEM = "You are a helpful assistant."
IMAGE_TOKEN = "<image>"

# Qwen2.5-VL's special tokens, in Qwen's order; they take ids 0..N-1 of the trained vocabulary.
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
# Files every build must leave; the marker also lists all files written (their names vary with the
# transformers version, e.g. processor_config.json vs preprocessor_config.json).
REQUIRED_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json")

# Qwen2-VL-style ChatML template, written for this checkpoint. Images render as
# <|vision_start|><|image_pad|><|vision_end|>, videos with <|video_pad|>; the processor expands the pad
# token to one per merged vision patch. A default system turn is added when none is given.
CHAT_TEMPLATE = (
    "{%- set ns = namespace(images=0, videos=0) -%}"
    "{%- for message in messages -%}"
    "{%- if loop.first and message['role'] != 'system' -%}"
    "{{- '<|im_start|>system\\n" + DEFAULT_SYSTEM + "<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'image' or 'image' in part or 'image_url' in part -%}"
    "{%- set ns.images = ns.images + 1 -%}"
    "{%- if add_vision_id -%}{{- 'Picture ' ~ ns.images ~ ': ' -}}{%- endif -%}"
    "{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}"
    "{%- elif part['type'] == 'video' or 'video' in part -%}"
    "{%- set ns.videos = ns.videos + 1 -%}"
    "{%- if add_vision_id -%}{{- 'Video ' ~ ns.videos ~ ': ' -}}{%- endif -%}"
    "{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}"
    "{%- elif 'text' in part -%}{{- part['text'] -}}"
    "{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

# Tokenizer training text: option letters, digits, and common English / benchmark words.
_WORDS = (
    "the a an of to in is it that this what which where who when why how and or not yes no "
    "answer question image video picture frame object robot arm hand table cup box ball red green "
    "blue yellow black white left right up down front back above below next move pick place push "
    "open close grasp put on off into from with for by at as be are was were has have do does "
    "option choice correct best first second third last one two three four five six seven eight "
    "nine ten zero step action goal task agent tool call search click type scroll screen button "
    "page text number count color shape size large small many few more less than same different "
    "you your I we they he she my our is are can will should would could please think reason final"
)
_CORPUS: tuple[str, ...] = (
    _WORDS,
    _WORDS.upper(),
    _WORDS.title(),
    "A B C D E F G H I J (A) (B) (C) (D) (E) (F) (G) (H) (I) (J) A. B. C. D. E. F. G. H. I. J.",
    "0 1 2 3 4 5 6 7 8 9 10 11 12 20 50 100 0.5 1.0 3.14 2024 -1 +1 = % $ # @ & * / \\ | ~ ^ _",
    'The answer is A. The answer is (B). Answer: C. {"answer": "D"} [1, 2, 3] <think> </think>',
    "Question: What is shown in the image? Options: A. a cup B. a box C. a ball D. a robot\nAnswer:",
)



LLAVA_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'image' -%}{{- '<image>\\n' -}}"
    "{%- elif part['type'] == 'text' -%}{{- part['text'] -}}"
    "{%- endif -%}{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def kind_of(path: str | os.PathLike[str]) -> str:
    """The kind recorded in a build's marker (``qwen2_5_vl`` for builds that predate kinds)."""
    try:
        meta = json.loads((pathlib.Path(path) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "qwen2_5_vl"
    kind = meta.get("kind", "qwen2_5_vl") if isinstance(meta, dict) else "qwen2_5_vl"
    return kind if kind in KINDS else "qwen2_5_vl"


def model_args(path: str | os.PathLike[str], kind: str | None = None) -> str:
    """The lmms-eval ``--model_args`` string for the build at ``path`` on CPU (backend: ``BACKEND[kind]``)."""
    resolved = pathlib.Path(path).resolve()
    if "," in str(resolved):  # lmms-eval splits model_args on commas
        raise ValueError(f"checkpoint path must not contain a comma: {resolved}")
    kind = kind or kind_of(resolved)
    if kind == "llava":
        return f"pretrained={resolved},device=cpu,device_map=cpu,dtype=float32,attn_implementation=sdpa"
    low, high = (QWEN3_MIN_PIXELS, QWEN3_MAX_PIXELS) if kind == "qwen3_vl" else (MIN_PIXELS, MAX_PIXELS)
    return (
        f"pretrained={resolved},device=cpu,device_map=cpu,attn_implementation=sdpa,"
        f"min_pixels={low},max_pixels={high},max_num_frames={MAX_NUM_FRAMES}"
    )


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
    saved = {key: os.environ.get(key) for key in keys}
    os.environ.update(dict.fromkeys(keys, "1"))
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def is_complete(out_dir: str | os.PathLike[str], seed: int | None = None, kind: str | None = None) -> bool:
    """True when ``out_dir`` holds a finished build (marker written last), with ``seed`` and ``kind`` if given."""
    root = pathlib.Path(out_dir)
    try:
        meta = json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(meta, dict) or meta.get("builder_version") != BUILDER_VERSION:
        return False
    if (seed is not None and meta.get("seed") != seed) or (kind is not None and meta.get("kind") != kind):
        return False
    files = meta.get("files")
    if not isinstance(files, list) or not set(REQUIRED_FILES) <= set(files):
        return False
    return all(isinstance(name, str) and (root / name).is_file() for name in files)


def _previous_files(root: pathlib.Path) -> list[str]:
    try:
        files = json.loads((root / MARKER).read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [name for name in files if isinstance(name, str) and "/" not in name and name != MARKER]


def _train_tokenizer(special: tuple[str, ...]) -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    # Same pipeline shape as Qwen2's tokenizer: NFC, a split regex, then byte-level BPE.
    split = (
        r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
        r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
    )
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(split), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=1,
        special_tokens=list(special),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(_CORPUS) * 4, trainer=trainer)
    return tok


def _tokenizer(tf: Any, special: tuple[str, ...]) -> tuple[Any, dict[str, int], int]:
    """The trained tokenizer (Qwen2TokenizerFast: Qwen-VL processors check the class), the special tokens' ids
    and the embedding size (the vocabulary rounded up to 64)."""
    tokenizer = tf.Qwen2TokenizerFast(
        tokenizer_object=_train_tokenizer(special),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
    )
    ids = {token: int(tokenizer.convert_tokens_to_ids(token)) for token in special}
    return tokenizer, ids, ((len(tokenizer) + 63) // 64) * 64


def _text_config(ids: dict[str, int], vocab_size: int, mrope: list[int] | None) -> dict[str, Any]:
    """A 2-layer text model: hidden 64, 2 query heads and 1 key/value head of size 32."""
    text: dict[str, Any] = {
        "vocab_size": vocab_size, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 4096,
        "rope_theta": 10000.0, "bos_token_id": ids["<|endoftext|>"], "eos_token_id": ids["<|im_end|>"],
        "pad_token_id": ids["<|endoftext|>"],
    }
    if mrope is not None:  # 3D rotary sections (time, height, width) summing to head_dim / 2
        text["rope_scaling"] = {"type": "mrope", "mrope_section": mrope}
    return text


def _qwen_vision_processor(tf: Any, kind: str, tokenizer: Any) -> Any:
    patch, low, high = (16, QWEN3_MIN_PIXELS, QWEN3_MAX_PIXELS) if kind == "qwen3_vl" else (14, MIN_PIXELS, MAX_PIXELS)
    vision: dict[str, Any] = {"size": {"shortest_edge": low, "longest_edge": high}, "patch_size": patch,
                              "temporal_patch_size": 2, "merge_size": 2}
    video_class = tf.Qwen3VLVideoProcessor if kind == "qwen3_vl" else tf.Qwen2VLVideoProcessor
    video = dict(vision)
    if hasattr(video_class, "cap_pixels_per_frame"):  # the qwen-vl-utils behaviour, no warning
        video["cap_pixels_per_frame"] = True
    processor_class = tf.Qwen3VLProcessor if kind == "qwen3_vl" else tf.Qwen2_5_VLProcessor
    return processor_class(image_processor=tf.Qwen2VLImageProcessor(**vision), tokenizer=tokenizer,
                           video_processor=video_class(**video), chat_template=CHAT_TEMPLATE)


def _qwen_model(tf: Any, kind: str, ids: dict[str, int], vocab_size: int) -> Any:
    tokens = {"image_token_id": ids["<|image_pad|>"], "video_token_id": ids["<|video_pad|>"],
              "vision_start_token_id": ids["<|vision_start|>"], "vision_end_token_id": ids["<|vision_end|>"],
              "tie_word_embeddings": False}
    vision: dict[str, Any] = {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
                              "out_hidden_size": 64, "spatial_merge_size": 2, "temporal_patch_size": 2}
    if kind == "qwen3_vl":
        text = _text_config(ids, vocab_size, None)
        text["rope_scaling"] = {"rope_type": "default", "mrope_section": [4, 6, 6], "mrope_interleaved": True}
        vision.update(patch_size=16, num_position_embeddings=16, deepstack_visual_indexes=[0])
        return tf.Qwen3VLForConditionalGeneration(tf.Qwen3VLConfig(text_config=text, vision_config=vision, **tokens))
    vision.update(patch_size=14, window_size=112, fullatt_block_indexes=[1], tokens_per_second=2)
    text = _text_config(ids, vocab_size, [4, 6, 6])
    text["max_window_layers"] = 2
    return tf.Qwen2_5_VLForConditionalGeneration(tf.Qwen2_5_VLConfig(text_config=text, vision_config=vision, **tokens))


def _llava(tf: Any, ids: dict[str, int], vocab_size: int, tokenizer: Any) -> tuple[Any, Any]:
    vision = tf.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                 image_size=CLIP_IMAGE_SIZE, patch_size=8, projection_dim=32)
    text = tf.LlamaConfig(**_text_config(ids, vocab_size, None))
    config = tf.LlavaConfig(vision_config=vision, text_config=text, image_token_index=ids[IMAGE_TOKEN],
                            vision_feature_select_strategy="default", vision_feature_layer=-1,
                            tie_word_embeddings=False)
    pixels = {"shortest_edge": CLIP_IMAGE_SIZE}
    crop = {"height": CLIP_IMAGE_SIZE, "width": CLIP_IMAGE_SIZE}
    processor = tf.LlavaProcessor(image_processor=tf.CLIPImageProcessor(size=pixels, crop_size=crop),
                                  tokenizer=tokenizer, patch_size=8, vision_feature_select_strategy="default",
                                  chat_template=LLAVA_TEMPLATE, image_token=IMAGE_TOKEN, num_additional_image_tokens=1)
    return tf.LlavaForConditionalGeneration(config), processor


def _write_checkpoint(root: pathlib.Path, seed: int, kind: str) -> dict[str, Any]:
    import torch

    # Loaded as Any: transformers' annotations vary across versions and are not needed here.
    tf: Any = importlib.import_module("transformers")
    special = (*SPECIAL_TOKENS, IMAGE_TOKEN) if kind == "llava" else SPECIAL_TOKENS
    tokenizer, ids, vocab_size = _tokenizer(tf, special)
    tokenizer.chat_template = LLAVA_TEMPLATE if kind == "llava" else CHAT_TEMPLATE
    torch.manual_seed(seed)
    if kind == "llava":
        model, processor = _llava(tf, ids, vocab_size, tokenizer)
    else:
        model, processor = _qwen_model(tf, kind, ids, vocab_size), _qwen_vision_processor(tf, kind, tokenizer)
    model = model.to(torch.float32).eval()
    model.generation_config = tf.GenerationConfig(
        do_sample=False, max_new_tokens=16, bos_token_id=ids["<|endoftext|>"],
        eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]], pad_token_id=ids["<|endoftext|>"],
    )
    model.save_pretrained(root, safe_serialization=True)
    processor.save_pretrained(root)
    tokenizer.save_pretrained(root)
    return {
        "builder_version": BUILDER_VERSION,
        "kind": kind,
        "backend": BACKEND[kind],
        "seed": seed,
        "transformers": tf.__version__,
        "torch": torch.__version__,
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": vocab_size,
        "token_ids": ids,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def build(out_dir: str | os.PathLike[str], kind: str = "qwen2_5_vl", seed: int = 0) -> pathlib.Path:
    """Build a checkpoint of ``kind`` into ``out_dir`` (deterministic for a given seed) and return its path.

    If ``out_dir`` already holds a complete build of the same kind and seed, it is returned untouched. The
    files are written in a sibling scratch folder and moved in, the marker file last.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    root = pathlib.Path(out_dir).resolve()
    if is_complete(root, seed, kind):
        return root
    root.mkdir(parents=True, exist_ok=True)
    for stale in _previous_files(root):  # an older build's files, e.g. from another transformers version
        (root / stale).unlink(missing_ok=True)
    (root / MARKER).unlink(missing_ok=True)
    started = time.perf_counter()
    with _offline(), tempfile.TemporaryDirectory(prefix=".tiny_vlm-", dir=root.parent) as scratch:
        staging = pathlib.Path(scratch)
        meta = _write_checkpoint(staging, seed, kind)
        meta["files"] = sorted(item.name for item in staging.iterdir())
        for name in meta["files"]:
            target = root / name
            if target.is_dir():
                shutil.rmtree(target)
            os.replace(staging / name, target)
            target.chmod(0o644)
    meta["build_seconds"] = round(time.perf_counter() - started, 2)
    marker = root / f".{MARKER}.tmp"
    marker.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(marker, root / MARKER)
    return root


def _builder(kind: str) -> Callable[..., pathlib.Path]:
    def build_kind(out_dir: str | os.PathLike[str], seed: int = 0) -> pathlib.Path:
        return build(out_dir, kind, seed)

    build_kind.__name__ = f"build_tiny_{kind}"
    build_kind.__doc__ = f"Build the tiny {kind} checkpoint into ``out_dir`` (see :func:`build`)."
    return build_kind


build_tiny_qwen2_5_vl = _builder("qwen2_5_vl")
build_tiny_qwen3_vl = _builder("qwen3_vl")
build_tiny_llava = _builder("llava")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lmms_agentic.devtools.tiny_vlm",
        description="Build a tiny random-weight VLM checkpoint (no download) for lmms-eval plumbing checks.",
    )
    parser.add_argument("out_dir", help="folder to write the checkpoint into (reused if already built)")
    parser.add_argument("--kind", choices=KINDS, default="qwen2_5_vl", help="architecture (default qwen2_5_vl)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the random weights (default 0)")
    parser.add_argument("--args-only", action="store_true", help="print only the lmms-eval --model_args")
    args = parser.parse_args(argv)
    try:
        path = build(args.out_dir, args.kind, seed=args.seed)
    except OSError as exc:
        where = exc.filename or args.out_dir
        print(f"lmms-agentic tiny-vlm: error: cannot write the checkpoint to {where} ({exc.strerror or exc}); "
              "choose a writable OUT_DIR with free space", file=sys.stderr)
        return 1
    if args.args_only:
        print(model_args(path))
    else:
        print(f"checkpoint: {path} ({args.kind}; lmms-eval --model {BACKEND[args.kind]})")
        print(f"model_args: {model_args(path)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
