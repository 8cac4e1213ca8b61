"""What a run is called in reports, tables and charts.

A run's label is, in order: the ``--label`` given for it; the name of the preset that describes the run (presets
are matched by the model id, so two models never share one); the model id the backend was given, read from the
results file's ``config.model_args`` (``model=``, then ``model_version=``, then ``pretrained=``; a path gives its
last folder name); lmms-eval's ``model_name``; and only then the backend (``openai``, ``vllm``). Labels shared by
several runs are made unique with the run folder's name, then a number (``unique``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MODEL_KEYS = ("model", "model_version", "pretrained")
"""The ``model_args`` keys that name the model, in the order they are read."""


def model_args(config: Mapping[str, Any]) -> dict[str, str]:
    """``config.model_args`` (lmms-eval's ``k=v,...`` string, or lm-eval's dict) as a dict."""
    value = config.get("model_args")
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    pairs = (part.split("=", 1) for part in str(value or "").split(",") if "=" in part)
    return {key.strip(): text.strip() for key, text in pairs}


def model_id(config: Mapping[str, Any]) -> str | None:
    """The model id the backend was given (``MODEL_KEYS``), or None."""
    args = model_args(config)
    return next((args[key] for key in MODEL_KEYS if args.get(key)), None)


def short(name: str) -> str:
    """A model id or path as a label: the part after its last ``/`` (``Qwen/Qwen2.5-VL-7B`` -> ``Qwen2.5-VL-7B``)."""
    return name.rstrip("/").rsplit("/", 1)[-1] or name


def run_label(results: Mapping[str, Any], preset: str | None = None, override: str | None = None) -> str:
    """The label of one run (module docstring)."""
    if override:
        return override
    if preset:
        return preset
    config = results.get("config") if isinstance(results.get("config"), Mapping) else {}
    found = model_id(config or {}) or results.get("model_name") or (config or {}).get("model")
    return short(str(found)) if found else "unknown model"


def unique(labels: Sequence[str], folders: Sequence[str]) -> list[str]:
    """``labels`` with every shared one followed by its run folder's name (``"x (run_a)"``), then by a number
    when that is shared too: no two runs ever get the same label."""
    out = [label if labels.count(label) == 1 else f"{label} ({folder})"
           for label, folder in zip(labels, folders, strict=True)]
    shared = {label for label in out if out.count(label) > 1}
    taken = set(out) - shared
    for index, label in enumerate(out):
        if label not in shared:
            continue
        number = 1
        candidate = f"{label} #1"
        while candidate in taken:
            number += 1
            candidate = f"{label} #{number}"
        taken.add(candidate)
        out[index] = candidate
    return out
