"""`reproduce` checks the backend, the weights (or Hub access) and the API key before it creates anything, and
stops with one line naming what is missing and the fix; a run that fails later leaves no empty run folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic import cli, presets
from lmms_agentic.reproduce import command, preflight, slurm


def _without(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    real = preflight._importable
    monkeypatch.setattr(preflight, "_importable", lambda name: name not in modules and real(name))


def _reproduce(tmp_path: Path, *args: str) -> list[str]:
    return ["reproduce", "--preset", "qwen2_5_vl_7b", "--benchmark", "robovista", "--output", str(tmp_path / "out"),
            *args]


@pytest.mark.parametrize(("backend", "missing", "expected"), [
    ("vllm", ("vllm",), ["cannot start on the vllm backend: vLLM is not installed", "or choose --backend hf",
                         "not in the local Hugging Face cache and HF_HUB_OFFLINE=1",
                         "hf download Qwen/Qwen2.5-VL-7B-Instruct"]),
    ("hf", ("flash_attn",), ["flash_attention_2 but flash-attn is not installed: pip install flash-attn",
                             "HF_HUB_OFFLINE=1"]),
    ("hf", ("flash_attn", "transformers"), ["transformers is not installed: pip install transformers"]),
])
def test_missing_backend_or_weights_stop_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], backend: str,
                                                     missing: tuple[str, ...], expected: list[str]) -> None:
    _without(monkeypatch, *missing)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    monkeypatch.setattr(preflight, "_cached", lambda repo: False)
    assert cli.main(_reproduce(tmp_path, "--backend", backend)) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and error.startswith("lmms-agentic reproduce: error: qwen2_5_vl_7b")
    for fragment in expected:
        assert fragment in error
    assert not (tmp_path / "out").exists()


def test_local_weights_folder_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "vllm")
    backend = presets.backend_for(presets.get("qwen2_5_vl_7b"), "vllm")
    assert preflight._weights_problem(backend, str(tmp_path / "none")).endswith("no such folder (give a local "
                                                                                 "weights folder)")
    assert "no config.json or params.json" in preflight._weights_problem(backend, str(tmp_path))
    (tmp_path / "config.json").write_text("{}")
    assert preflight._weights_problem(backend, str(tmp_path)) == ""
    found = preflight.problems(presets.get("qwen2_5_vl_7b"), backend, weights=str(tmp_path))
    assert len(found) == 1 and found[0].startswith("vLLM is not installed")


def test_a_served_model_needs_no_local_backend_or_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "vllm", "flash_attn")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    preset = presets.get("qwen2_5_vl_7b")
    backend = preflight.check(preset, "vllm", base_url="http://127.0.0.1:1/v1")
    assert backend.name == "vllm"
    with pytest.raises(preflight.PreflightError, match="use --backend vllm"):
        preflight.check(preset, "hf", base_url="http://127.0.0.1:1/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model, args, task_model = command._prepare(preset, backend, Path("unused"), "http://127.0.0.1:9/v1", None)
    assert (model, task_model) == ("openai", "openai") and os.environ["OPENAI_API_KEY"] == "EMPTY"
    assert presets.parse_model_args(args) == {"model": "Qwen/Qwen2.5-VL-7B-Instruct",
                                              "base_url": "http://127.0.0.1:9/v1", "num_concurrent": "16",
                                              "max_retries": "5", "timeout": "600"}
    assert presets.for_run({"model": "openai", "model_args": args}) == preset  # --from recognises the preset


def test_api_key_and_smoke_presets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert cli.main(["reproduce", "--preset", "gpt_4o", "--benchmark", "agentx", "--output", str(tmp_path)]) == 1
    assert "needs an API key in $OPENAI_API_KEY: export OPENAI_API_KEY=..." in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    smoke = presets.get("tiny_qwen3_vl")
    assert preflight.problems(smoke, presets.backend_for(smoke)) == []  # built locally, no weights to find
    baseline = presets.get("always_a")
    assert preflight.problems(baseline, presets.backend_for(baseline)) == []


def test_unreachable_hub_is_named(tmp_path: Path) -> None:
    env = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{slurm.free_port()}", "HF_HOME": str(tmp_path / "hf"),
           "HF_HUB_OFFLINE": "0", "HF_HUB_ETAG_TIMEOUT": "2", "HF_HUB_DOWNLOAD_TIMEOUT": "2"}
    code = ("from lmms_agentic import presets; from lmms_agentic.reproduce import preflight; "
            "print(preflight._weights_problem(presets.backend_for(presets.get('qwen2_5_vl_7b'), 'vllm'), None))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    assert done.stdout.strip().startswith("weights Qwen/Qwen2.5-VL-7B-Instruct are not in the local Hugging Face "
                                          "cache and the Hub is unreachable (")
    assert "hf download Qwen/Qwen2.5-VL-7B-Instruct" in done.stdout


def test_a_run_that_fails_after_the_check_leaves_no_empty_folder(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk went away")

    monkeypatch.setattr(command, "evaluate", broken)
    monkeypatch.setattr(preflight, "check", lambda preset, backend=None, **kw: presets.backend_for(preset, "dummy"))
    (tmp_path / "out").mkdir()
    with pytest.raises(OSError, match="disk went away"):
        command.run(presets.get("always_a"), "agentvqa", output=tmp_path / "out" / "deep")
    assert list((tmp_path / "out").iterdir()) == []  # what existed before stays
