"""`python -m lmms_agentic reproduce` end to end on the CPU: a smoke preset (tiny random-weight Qwen3-VL, lmms-eval's
`qwen3_vl` backend, AgentVQA's mini split with its videos) runs through lmms-eval's Python API, writes the run folder
with its manifest, prints the comparison labelled as a smoke test, and `--from` reads the folder back; the multi-model
report takes it with another run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic.report import write_multi_report


@pytest.mark.e2e
def test_smoke_preset_runs_compares_and_reports(tmp_path: Path) -> None:
    env = {**os.environ, "LMMS_AGENTIC_DATA": "mini", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    command = [sys.executable, "-m", "lmms_agentic", "reproduce", "--preset", "tiny_qwen3_vl", "--benchmark",
               "agentvqa", "--limit", "1", "--output", str(tmp_path)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "SMOKE TEST" in done.stdout and "--limit 1: a partial run" in done.stdout
    assert "| agentvqa | default | agentvqa | Constant-letter mean (paper App. F) | accuracy | 25.0 |" in done.stdout
    folder = tmp_path / "tiny_qwen3_vl" / "agentvqa"
    manifest = json.loads((folder / "reproduce.json").read_text())
    assert manifest["preset"]["name"] == "tiny_qwen3_vl" and manifest["backend"]["model"] == "qwen3_vl"
    assert manifest["gen_kwargs"] == "max_new_tokens=8" and manifest["limit"] == 1
    assert manifest["data"]["provenance"]["agentvqa"]["kind"] == "mini"
    assert manifest["versions"]["lmms_eval"] == "0.7.3" and manifest["seeds"]["random"] == 0
    assert (folder / "comparison.md").read_text().startswith("## Reproduction: tiny_qwen3_vl")
    again = subprocess.run([sys.executable, "-m", "lmms_agentic", "reproduce", "--from", str(folder)], env=env,
                           capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0 and "Constant-letter mean" in again.stdout, again.stderr[-2000:]
    from tests.reproduce.conftest import write_run

    write_run(tmp_path / "other", lambda b, d, i: True, model_args="model=Qwen/Qwen3-VL-8B-Instruct")
    _, text = write_multi_report([folder, tmp_path / "other"], tmp_path / "report", n_boot=50)
    # runs labelled by preset / model id; the mini-split run carries a banner and a tag in every table row, the other
    # run neither; the smoke preset is named as a baseline
    lines = text.splitlines()
    rows, banners = [x for x in lines if x.startswith("| ")], [x for x in lines if x.startswith("> **")]
    tiny, other = [r for r in rows if "tiny_qwen3_vl" in r], [r for r in rows if "qwen3_vl_8b" in r]
    assert tiny and all(r.startswith("| tiny_qwen3_vl [mini split] | ") for r in tiny), tiny
    assert other and all(r.startswith("| qwen3_vl_8b | ") for r in other), other
    assert "| tiny_qwen3_vl [mini split] | 0.0 " in text and "| qwen3_vl_8b | 100.0 " in text
    assert text.startswith("> **SMOKE DATA — tiny_qwen3_vl: mini split of agentvqa")
    assert banners and not any("qwen3_vl_8b" in b for b in banners), banners
    assert "- **smoke-test / baseline models** (tiny_qwen3_vl): " in text
