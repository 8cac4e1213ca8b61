"""The README's lm-eval commands, run as written (bash, `$(python -m lmms_agentic lmeval-tasks-dir)` included) on the
mini splits, with only what a test machine needs substituted: the loopback server for OpenAI's URL, the tiny
random-weight Qwen2.5-VL (`lmms_agentic.devtools.tiny_vlm`) for the 7B checkpoint, a temporary output folder, and, for
CPU time, `--device cpu`, `--limit 2` (every subtask of the three benchmarks still runs) and a few generated tokens.

Each must finish with results for the three benchmark groups, a samples file per task and no traceback; the
hf-multimodal line is the one whose Agent-X context needs `max_length`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import loopback
from .conftest import OFFLINE

pytestmark = pytest.mark.e2e
pytest.importorskip("lm_eval", reason="pip install -e '.[lmeval]'")
README = Path(__file__).resolve().parents[2] / "README.md"
GROUPS = ("robovista", "agentvqa", "agentx")
CPU = ["--limit", "2", "--gen_kwargs", "max_gen_toks=4"]


def readme_commands() -> list[str]:
    """The `lm_eval` commands of the README's lm-evaluation-harness section (continuation lines joined)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## lm-evaluation-harness\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.DOTALL):
        for command in block.replace("\\\n", " ").splitlines():
            if command.startswith("lm_eval "):
                commands.append(re.sub(r"\s+", " ", command.split("   #")[0]).strip())
    return commands


COMMANDS = {re.search(r"--model (\S+)", command).group(1): command  # type: ignore[union-attr]
            for command in readme_commands()}


def test_the_readme_names_both_lm_eval_backends() -> None:
    assert set(COMMANDS) == {"local-chat-completions", "hf-multimodal"}
    assert all("max_images=64" in command and "--apply_chat_template" in command for command in COMMANDS.values())
    assert "max_length=16384" in COMMANDS["hf-multimodal"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    from lmms_agentic.devtools import tiny_vlm

    return tiny_vlm.build(tmp_path_factory.mktemp("tiny") / "qwen2_5_vl", "qwen2_5_vl")


@pytest.fixture
def server(book: loopback.ReplyBook) -> Iterator[loopback.ScriptedJudgeServer]:
    with loopback.model_server(book) as running:
        yield running


def _run(command: str, output: Path) -> subprocess.CompletedProcess[str]:
    command = re.sub(r"--output_path \S+", f"--output_path {output}", command)
    env = {**os.environ, **OFFLINE, "LMMS_AGENTIC_DATA": "mini", "OPENAI_API_KEY": "loopback",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", command], env=env, cwd=output.parent, capture_output=True, text=True,
                          timeout=1500, check=False)


def _check(done: subprocess.CompletedProcess[str], output: Path) -> None:
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in log, log[-4000:]
    results = sorted(output.rglob("results_*.json"))
    assert results, log[-4000:]
    text = results[-1].read_text()
    assert all(f'"{group}"' in text for group in GROUPS)
    assert len(list(output.rglob("samples_*.jsonl"))) > 10


def test_the_api_command(server: loopback.ScriptedJudgeServer, tmp_path: Path) -> None:
    command = COMMANDS["local-chat-completions"].replace(
        "base_url=https://api.openai.com/v1/chat/completions", f"base_url={server.base_url}/chat/completions")
    assert command != COMMANDS["local-chat-completions"]
    _check(_run(f"{command} {' '.join(CPU)}", tmp_path / "api"), tmp_path / "api")
    assert server.calls, "the requests reached the loopback server"


def test_the_hf_multimodal_command(tiny: Path, tmp_path: Path) -> None:
    command = COMMANDS["hf-multimodal"].replace("pretrained=Qwen/Qwen2.5-VL-7B-Instruct", f"pretrained={tiny}")
    assert command != COMMANDS["hf-multimodal"]
    _check(_run(f"{command} --device cpu {' '.join(CPU)}", tmp_path / "hf"), tmp_path / "hf")
