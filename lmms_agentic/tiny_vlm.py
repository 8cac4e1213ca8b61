"""Build a tiny random-weight Qwen2.5-VL checkpoint locally, with no download.

The checkpoint (about 240k parameters, about 1 MB on disk) has the real Qwen2.5-VL architecture, a
byte-level BPE tokenizer trained here with the `tokenizers` library on a small built-in corpus, the
Qwen2.5-VL special tokens, an image processor, a video processor and a Qwen2-VL-style chat template.
Its weights are random: it is a plumbing check for lmms-eval's ``qwen2_5_vl`` backend (chat and
``--force_simple``) on CPU, not a model; its answers are random text.

Use it with::

    python -m lmms_agentic.tiny_vlm OUT_DIR
    lmms-eval --model qwen2_5_vl --model_args "$(python -m lmms_agentic.tiny_vlm OUT_DIR --args-only)" ...

where the model_args are (see :func:`model_args`)::

    pretrained=OUT_DIR,device=cpu,device_map=cpu,attn_implementation=sdpa,
    min_pixels=3136,max_pixels=12544,max_num_frames=4

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
import tempfile
import time
from collections.abc import Iterator
from typing import Any

MARKER = "tiny_vlm.json"
BUILDER_VERSION = 1
MIN_PIXELS = 56 * 56  # 4 patches of 28x28 -> 1 merged vision token
MAX_PIXELS = 4 * 56 * 56  # 16 merged vision tokens per image (or per 2 video frames)
MAX_NUM_FRAMES = 4
VOCAB_SIZE = 640  # tokens learnt by BPE, special tokens included
DEFAULT_SYSTEM = "You are a helpful assistant."

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


def model_args(path: str | os.PathLike[str]) -> str:
    """The lmms-eval ``--model_args`` string for the ``qwen2_5_vl`` backend on CPU."""
    resolved = pathlib.Path(path).resolve()
    if "," in str(resolved):  # lmms-eval splits model_args on commas
        raise ValueError(f"checkpoint path must not contain a comma: {resolved}")
    return (
        f"pretrained={resolved},device=cpu,device_map=cpu,attn_implementation=sdpa,"
        f"min_pixels={MIN_PIXELS},max_pixels={MAX_PIXELS},max_num_frames={MAX_NUM_FRAMES}"
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


def is_complete(out_dir: str | os.PathLike[str], seed: int | None = None) -> bool:
    """True when ``out_dir`` holds a finished build (marker written last), with ``seed`` if given."""
    root = pathlib.Path(out_dir)
    try:
        meta = json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(meta, dict) or meta.get("builder_version") != BUILDER_VERSION:
        return False
    if seed is not None and meta.get("seed") != seed:
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


def _train_tokenizer() -> Any:
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
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(_CORPUS) * 4, trainer=trainer)
    return tok


def _write_checkpoint(root: pathlib.Path, seed: int) -> dict[str, Any]:
    import torch

    # Loaded as Any: transformers' annotations vary across versions and are not needed here.
    tf: Any = importlib.import_module("transformers")
    # Qwen2TokenizerFast: Qwen2_5_VLProcessor checks the class in transformers 4.x (v5 keeps it as an alias).
    tokenizer = tf.Qwen2TokenizerFast(
        tokenizer_object=_train_tokenizer(),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    ids = {token: int(tokenizer.convert_tokens_to_ids(token)) for token in SPECIAL_TOKENS}
    vocab_size = ((len(tokenizer) + 63) // 64) * 64

    text = {
        "vocab_size": vocab_size,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 4096,
        "max_window_layers": 2,
        # 3D rotary sections (time, height, width) summing to head_dim / 2; v5 maps this to rope_parameters.
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
        "rope_theta": 10000.0,
        "bos_token_id": ids["<|endoftext|>"],
        "eos_token_id": ids["<|im_end|>"],
        "pad_token_id": ids["<|endoftext|>"],
    }
    vision = {
        "depth": 2,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_heads": 2,
        "out_hidden_size": 64,
        "patch_size": 14,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "window_size": 112,
        "fullatt_block_indexes": [1],
        "tokens_per_second": 2,
    }
    config = tf.Qwen2_5_VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = tf.Qwen2_5_VLForConditionalGeneration(config).to(torch.float32).eval()
    model.generation_config = tf.GenerationConfig(
        do_sample=False,
        max_new_tokens=16,
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]],
        pad_token_id=ids["<|endoftext|>"],
    )
    model.save_pretrained(root, safe_serialization=True)

    pixels = {"shortest_edge": MIN_PIXELS, "longest_edge": MAX_PIXELS}
    vision_kwargs: dict[str, Any] = {
        "size": pixels,
        "patch_size": 14,
        "temporal_patch_size": 2,
        "merge_size": 2,
    }
    video_kwargs = dict(vision_kwargs)
    if hasattr(tf.Qwen2VLVideoProcessor, "cap_pixels_per_frame"):  # the qwen-vl-utils behaviour, no warning
        video_kwargs["cap_pixels_per_frame"] = True
    processor = tf.Qwen2_5_VLProcessor(
        image_processor=tf.Qwen2VLImageProcessor(**vision_kwargs),
        tokenizer=tokenizer,
        video_processor=tf.Qwen2VLVideoProcessor(**video_kwargs),
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(root)
    tokenizer.save_pretrained(root)
    return {
        "builder_version": BUILDER_VERSION,
        "seed": seed,
        "transformers": tf.__version__,
        "torch": torch.__version__,
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocab_size": vocab_size,
        "token_ids": ids,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def build_tiny_qwen2_5_vl(out_dir: str | os.PathLike[str], seed: int = 0) -> pathlib.Path:
    """Build the checkpoint into ``out_dir`` (deterministic for a given seed) and return its path.

    If ``out_dir`` already holds a complete build for the same seed, it is returned untouched. The
    files are written in a sibling scratch folder and moved in, the marker file last.
    """
    root = pathlib.Path(out_dir).resolve()
    if is_complete(root, seed):
        return root
    root.mkdir(parents=True, exist_ok=True)
    for stale in _previous_files(root):  # an older build's files, e.g. from another transformers version
        (root / stale).unlink(missing_ok=True)
    (root / MARKER).unlink(missing_ok=True)
    started = time.perf_counter()
    with _offline(), tempfile.TemporaryDirectory(prefix=".tiny_vlm-", dir=root.parent) as scratch:
        staging = pathlib.Path(scratch)
        meta = _write_checkpoint(staging, seed)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lmms_agentic.tiny_vlm",
        description="Build a tiny random-weight Qwen2.5-VL checkpoint (no download) for lmms-eval plumbing.",
    )
    parser.add_argument("out_dir", help="folder to write the checkpoint into (reused if already built)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the random weights (default 0)")
    parser.add_argument("--args-only", action="store_true", help="print only the lmms-eval --model_args")
    args = parser.parse_args(argv)
    path = build_tiny_qwen2_5_vl(args.out_dir, seed=args.seed)
    if args.args_only:
        print(model_args(path))
    else:
        print(f"checkpoint: {path}")
        print(f"model_args: {model_args(path)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
