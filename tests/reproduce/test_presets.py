"""Presets are data: they load, name real published rows, cover every reference model (or say why not), and turn
into lmms-eval arguments that the backends accept and that never carry a key."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic import presets
from lmms_agentic.adapters import benchmarks
from lmms_agentic.adapters.reference import load_reference

REFERENCE = {b: {row.model for row in load_reference(b)} for b in ("robovista", "agentvqa", "agentx")}


def test_every_preset_names_published_rows_of_real_benchmarks() -> None:
    for preset in presets.all_presets().values():
        assert preset.reference, preset.name
        for benchmark, models in preset.reference.items():
            unknown = set(models) - REFERENCE[benchmark]
            assert not unknown, f"{preset.name}: {benchmark} has no rows for {unknown}"


def test_every_reference_model_has_a_preset_or_a_reason() -> None:
    covered = {(b, m) for p in presets.all_presets().values() if p.kind != "smoke"
               for b, models in p.reference.items() for m in models}
    reasons = {(b, m) for b, table in presets.unreproducible().items() for m in table}
    for benchmark, models in REFERENCE.items():
        for model in models:
            assert ((benchmark, model) in covered) != ((benchmark, model) in reasons), (benchmark, model)
    assert all(reason.strip() for table in presets.unreproducible().values() for reason in table.values())


def test_a_reference_model_maps_to_one_preset() -> None:
    seen: dict[tuple[str, str], str] = {}
    for preset in presets.all_presets().values():
        if preset.kind == "smoke":
            continue
        for benchmark, models in preset.reference.items():
            for model in models:
                assert (benchmark, model) not in seen, (model, seen.get((benchmark, model)), preset.name)
                seen[(benchmark, model)] = preset.name


def test_open_presets_fit_one_node_and_prefer_vllm() -> None:
    for preset in presets.all_presets().values():
        if preset.kind != "open":
            continue
        assert next(iter(preset.backends)) == "vllm", preset.name
        vllm = preset.backends["vllm"]
        assert vllm.tensor_parallel_size in (1, 2, 4, 8), preset.name
        weight_bytes = 1 if "FP8" in preset.weights.upper() else 2  # bf16 unless an FP8 checkpoint
        budget = 80 * float(vllm.args["gpu_memory_utilization"])  # GB per 80 GB GPU that vLLM may use
        assert preset.params_b is None or preset.params_b * weight_bytes / vllm.tensor_parallel_size < budget, \
            preset.name
        if "hf" in preset.backends:
            assert preset.backends["hf"].model in presets.HF_BACKENDS


@pytest.mark.parametrize("backend", presets.HF_BACKENDS)
def test_hf_arguments_are_constructor_parameters(backend: str) -> None:
    from lmms_eval import models

    parameters = set(inspect.signature(models.get_model(backend, False).__init__).parameters)
    for preset in presets.all_presets().values():
        spec = preset.backends.get("hf")
        if spec is not None and spec.model == backend:
            assert set(presets.parse_model_args(presets.model_args(spec))) <= parameters, preset.name


def test_model_arguments_never_carry_a_key_and_vllm_scales_out() -> None:
    for preset in presets.all_presets().values():
        for spec in preset.backends.values():
            text = presets.model_args(spec, world_size=8)
            assert "api_key" not in text and "sk-" not in text, preset.name
            if spec.name == "api":
                assert spec.key_env and "base_url=https://" in text, preset.name
            if spec.name == "vllm":
                args = presets.parse_model_args(text)
                assert args["model"] == preset.weights
                replicas = 8 // spec.tensor_parallel_size
                assert args.get("data_parallel_size") == (str(replicas) if replicas > 1 else None), preset.name


def test_protocol_tasks_and_task_overrides_exist() -> None:
    for benchmark in ("robovista", "agentvqa", "agentx"):
        known = benchmarks.get(benchmark).task_files()
        default, table = presets.protocols(benchmark)
        assert default in table and set(table.values()) <= set(known)
    for preset in presets.all_presets().values():
        for benchmark, overrides in preset.tasks.items():
            assert set(overrides.values()) <= set(benchmarks.get(benchmark).task_files()), preset.name


def test_paper_decoding_settings() -> None:
    every = presets.all_presets()
    assert presets.gen_kwargs(every["glm_4_1v_9b_thinking"], "agentvqa") == "temperature=0.8,max_new_tokens=8192"
    assert presets.gen_kwargs(every["glm_4_1v_9b_base"], "agentvqa") == ""  # the task's 0.2
    assert presets.gen_kwargs(every["gpt_4o"], "agentvqa") == "temperature=1.0"  # provider default
    assert presets.gen_kwargs(every["kimi_vl_a3b_thinking"], "agentx") == "max_new_tokens=2048"
    assert every["gpt_5_6_sol_high"].backends["api"].reasoning_effort == "high"
    assert every["gpt_5_6_sol_none"].backends["api"].reasoning_effort == "none"
    assert presets.task_for(every["gemini_3_1_pro"], "agentvqa", "default") == "agentvqa_coords_norm1000_yx"


def test_runs_are_matched_to_their_preset(tmp_path: Path) -> None:
    assert presets.for_run({"model": "dummy", "model_args": ""}).name == "always_a"  # type: ignore[union-attr]
    assert presets.for_run({"model": "dummy", "model_args": "response=C"}).name == "always_c"  # type: ignore[union-attr]
    found = presets.for_run({"model": "vllm", "model_args": "model=Qwen/Qwen2.5-VL-7B-Instruct,tensor_parallel_size=1"})
    assert found is not None and found.name == "qwen2_5_vl_7b"
    high = presets.for_run({"model": "agentic_openai", "model_args": "model=gpt-5.6-sol,reasoning_effort=high"})
    assert high is not None and high.name == "gpt_5_6_sol_high"
    (tmp_path / "tiny_vlm.json").write_text('{"kind": "qwen3_vl"}')
    assert presets.for_run({"model": "qwen3_vl", "model_args": f"pretrained={tmp_path}"}).name == "tiny_qwen3_vl"  # type: ignore[union-attr]
    assert presets.for_run({"model": "vllm", "model_args": "model=someone/else"}) is None


def test_listing_and_unknown_preset() -> None:
    text = presets.listing()
    assert all(f"| {name} |" in text for name in presets.all_presets())
    with pytest.raises(presets.PresetError, match="did you mean qwen2_5_vl_7b"):
        presets.get("qwen2_5_vl_7")
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "presets", "nosuch"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("lmms-agentic presets: error: no preset named 'nosuch'")
