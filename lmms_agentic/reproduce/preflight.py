"""Checks `reproduce` makes before it creates anything: the backend can be imported, the weights are reachable
(a local folder, the local Hugging Face cache, or the Hub when the machine may use it) and an API preset's key is set.

``check`` collects every problem and raises one ``PreflightError`` whose message is a single line naming what is
missing and the fix, so a run that cannot work stops in a second instead of failing inside lmms-eval after the
model started loading (a ``TypeError`` from a backend whose import failed, a raw ``OSError`` from Transformers)
and leaves no run folder behind. A run against a served model (``--base-url`` with an open-weight preset: the
model is already loaded by ``vllm serve``) needs only lmms-eval's OpenAI client.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from lmms_agentic import presets
from lmms_agentic.presets import Backend, Preset
from lmms_agentic.presets.served import not_servable

HUB_TIMEOUT_S = 10.0
"""How long the Hub look-up may take before the Hub counts as unreachable."""
WEIGHT_FILES = ("config.json", "params.json")
"""A weights folder holds one of these (Transformers layout; Mistral's native layout)."""
TRUE = ("1", "true", "yes", "on")


class PreflightError(ValueError):
    """What a reproduction lacks before it can start, and the fix (one line)."""


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _missing_modules(backend: Backend, preset: Preset, served: bool) -> list[str]:
    others = ", ".join(f"--backend {name}" for name in preset.backends if name != backend.name)
    alternative = f", or choose {others}" if others else ""
    problems = [] if _importable("lmms_eval") else [
        "lmms-eval is not installed (pip install -e '.[lmms-eval]' in the checkout)"]
    if served or backend.name == "api":
        if not _importable("openai"):
            problems.append("the openai package (lmms-eval's OpenAI-compatible client) is not installed: "
                            "pip install openai")
    elif backend.name == "vllm" and not _importable("vllm"):
        problems.append(f"vLLM is not installed in this environment: pip install vllm on a GPU machine (or serve "
                        f"the model with `vllm serve` and pass --base-url){alternative}")
    elif backend.name == "hf":
        for module, package in (("torch", "torch"), ("transformers", "transformers")):
            if not _importable(module):
                problems.append(f"{package} is not installed: pip install {package}")
        if (preset.kind != "smoke" and backend.args.get("attn_implementation") == "flash_attention_2"
                and not _importable("flash_attn")):
            problems.append("the hf backend uses attn_implementation=flash_attention_2 but flash-attn is not "
                            f"installed: pip install flash-attn --no-build-isolation{alternative}")
    return problems


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in TRUE


def _cached(repo: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    for name in WEIGHT_FILES:
        try:
            found = try_to_load_from_cache(repo, name)
        except ValueError:  # not a valid repository id
            return False
        if isinstance(found, str):
            return True
    return False


def _hub_problem(repo: str) -> str:
    """"" when the Hub serves ``repo`` to this machine, else what stands in the way and the fix."""
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    fix = f"download them where the Hub is reachable (hf download {repo}) or pass --weights DIR"
    try:
        info = HfApi().model_info(repo, timeout=HUB_TIMEOUT_S)
    except GatedRepoError:
        return f"weights {repo} are gated on the Hub: accept the licence there and set HF_TOKEN"
    except RepositoryNotFoundError:
        return (f"weights {repo} do not exist on the Hub (or are private): check the preset's weights id "
                "(`python -m lmms_agentic presets`) or pass --weights DIR")
    except Exception as error:  # any transport failure means the Hub is unreachable from here
        reason = type(error).__name__
        return f"weights {repo} are not in the local Hugging Face cache and the Hub is unreachable ({reason}): {fix}"
    if getattr(info, "gated", False) and not get_token():
        return f"weights {repo} are gated on the Hub: accept the licence there and set HF_TOKEN (no token found)"
    return ""


def _weights_problem(backend: Backend, weights: str | None) -> str:
    if weights is not None:
        folder = Path(weights)
        if not folder.is_dir():
            return f"--weights {weights}: no such folder (give a local weights folder)"
        if not any((folder / name).is_file() for name in WEIGHT_FILES):
            return f"--weights {weights}: no {' or '.join(WEIGHT_FILES)} in the folder (not a weights folder)"
        return ""
    repo = backend.weights
    if Path(repo).is_dir() or _cached(repo):
        return ""
    if _offline():
        return (f"weights {repo} are not in the local Hugging Face cache and HF_HUB_OFFLINE=1: download them first "
                f"(hf download {repo}; HF_HOME picks the cache) or pass --weights DIR")
    return _hub_problem(repo)


def _key_problem(preset: Preset, backend: Backend) -> str:
    key_env = backend.key_env or "OPENAI_API_KEY"
    if os.environ.get(key_env, ""):
        return ""
    return (f"preset {preset.name} needs an API key in ${key_env}: export {key_env}=... (it is passed to lmms-eval "
            "inside this process and never written to the run folder)")


def problems(preset: Preset, backend: Backend, *, weights: str | None = None, served: bool = False) -> list[str]:
    """Everything that stops ``preset`` from running on ``backend`` here, each with its fix ([] when ready)."""
    found = _missing_modules(backend, preset, served)
    if not served and backend.name in ("vllm", "hf") and preset.kind != "smoke":
        weight = _weights_problem(backend, weights)
        if weight:
            found.append(weight)
    if backend.name == "api":
        key = _key_problem(preset, backend)
        if key:
            found.append(key)
    return found


def check(preset: Preset, backend_name: str | None = None, *, weights: str | None = None,
          base_url: str | None = None) -> Backend:
    """The backend ``reproduce`` will use, after checking it can start; ``PreflightError`` (one line) if not."""
    backend = presets.backend_for(preset, backend_name)
    served = base_url is not None and backend.name != "api"
    if served and backend.name != "vllm":
        raise PreflightError(f"--base-url with --backend {backend.name}: a served open-weight model is evaluated "
                             "through the vllm backend's server (use --backend vllm)")
    why = not_servable(backend) if served else ""
    if why:
        raise PreflightError(f"{preset.name} cannot run against a served model: {why}; run it without --base-url")
    found = problems(preset, backend, weights=weights, served=served)
    if found:
        raise PreflightError(f"{preset.name} cannot start on the {backend.name} backend: " + "; ".join(found))
    return backend
