"""The `!function` targets of the lm-eval task YAMLs that `lmms_agentic/lmeval/generate.py` writes on demand.

Every generated task loads its documents through `load_docs`, lm-eval's `custom_dataset` hook, which receives the
task's `dataset_kwargs`. Those name the lmms-eval task the YAML was generated from and restate what lm-eval
cannot read from lmms-eval's YAML: the `process_docs`, `doc_to_messages`, `doc_to_target` and `process_results`
hooks (absolute references), the `lmms_eval_specific_kwargs` entry (with `video_mode: frames`), and the
placeholder row lmms-eval would have given `process_docs` (the benchmark's manifest, or a permutation task's
settings row), as a path inside the installed task folder. Data is located exactly as under lmms-eval
(`LMMS_AGENTIC_DATA=mini | /root`, or the Hub).

Why `custom_dataset` and not `dataset_path: json`: lm-eval does not resolve a relative `data_files` path against
the YAML's folder, so the placeholder could only be named by an absolute path, which a committed YAML cannot know.

The image limit: lm-eval merges the `--model_args` into every task's metadata, which it passes to `custom_dataset`
too, so `load_docs` sees `max_images` when it is set (`image_limit`). Without it the backend's default applies:
999 for the local backends (`hf-multimodal`, `vllm-vlm`, recognised by `pretrained`), 1 for the API backends and
when nothing is known (a `TaskManager` built without metadata); a document with more images stops the run with one
line naming `max_images=N` (`bridge.ImageLimitError`), so an image is never dropped without a word.

The document-level hooks are `lmms_agentic.lmeval.bridge`'s; importing this module installs
`lmms_agentic.lmeval.runtime` (images at their placeholders in the API backends, each lm-eval warning once).
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets

from lmms_agentic.lmeval import runtime
from lmms_agentic.lmeval.bridge import (
    DocList,
    Hook,
    TaskSpec,
    doc_to_image,
    doc_to_target,
    doc_to_text,
    documents,
    process_results,
)

__all__ = ["doc_to_image", "doc_to_target", "doc_to_text", "image_limit", "load_docs", "process_results", "resolve"]
SPEC_KEY = "lmms_agentic"
"""The `dataset_kwargs` key holding the task's spec (namespaced: lm-eval also passes its metadata as kwargs)."""
LOCAL_BACKEND_MAX_IMAGES = 999
"""lm-eval 0.4.13's `max_images` default of `hf-multimodal` and `vllm-vlm` (the API backends': 1)."""

runtime.install()


@functools.cache
def resolve(reference: str) -> Hook:
    """The callable an absolute `package.module.function` reference names."""
    module, _, name = reference.rpartition(".")
    if not module:
        raise ValueError(f"hook reference {reference!r} must be absolute (package.module.function)")
    function: Hook = getattr(importlib.import_module(module), name)
    return function


def placeholder(relative: str) -> datasets.Dataset:
    """The one-row dataset lmms-eval loads from `relative` (inside the installed task folder)."""
    from lmms_agentic import tasks_dir

    path = Path(tasks_dir()) / relative
    return datasets.Dataset.from_list([json.loads(path.read_text(encoding="utf-8"))])


def image_limit(metadata: Mapping[str, Any]) -> tuple[int, str]:
    """(the most images the model receives per request, where that number comes from), from lm-eval's metadata."""
    if "max_images" in metadata:
        try:
            return int(metadata["max_images"]), "max_images in --model_args / metadata"
        except (TypeError, ValueError):
            raise ValueError(f"max_images={metadata['max_images']!r} in --model_args is not a whole number") from None
    if "pretrained" in metadata:
        return LOCAL_BACKEND_MAX_IMAGES, "the local backends' default max_images"
    return 1, "lm-eval's API backends default to max_images=1; no max_images was given"


def spec_of(settings: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> TaskSpec:
    """The runtime spec of a generated task's `dataset_kwargs.lmms_agentic` block, with the image limit that
    lm-eval's `metadata` (the model arguments) implies."""
    limit, source = image_limit(metadata or {})
    return TaskSpec(task=str(settings["task"]), doc_to_messages=resolve(settings["doc_to_messages"]),
                    doc_to_target=resolve(settings["doc_to_target"]),
                    process_results=resolve(settings["process_results"]), kwargs=dict(settings["kwargs"]),
                    metrics=tuple(settings.get("metrics") or ()), max_images=limit, max_images_source=source)


def load_docs(**kwargs: Any) -> dict[str, DocList]:
    """lm-eval's `custom_dataset` hook: the task's documents under the split name `test`."""
    if SPEC_KEY not in kwargs:
        raise ValueError(f"lmms_agentic.lmeval.task_functions.load_docs needs dataset_kwargs.{SPEC_KEY}; use the task "
                         "YAMLs that `python -m lmms_agentic lmeval-tasks-dir` generates")
    settings = kwargs[SPEC_KEY]
    docs = resolve(settings["process_docs"])(placeholder(settings["placeholder"]))
    return {"test": documents(spec_of(settings, kwargs), docs)}
