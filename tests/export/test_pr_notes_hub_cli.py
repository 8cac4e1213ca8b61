"""The pull-request notes of an export (`UPSTREAM_PR.md`) name Hugging Face Hub commands the installed hub library
ships (`hf ...`; it has no `huggingface-cli`), and each of them, with its options, is accepted by that CLI."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic.adapters import benchmarks
from lmms_agentic.lmeval.export import docs

BENCHMARKS = ("robovista", "agentvqa", "agentx")
_HF_COMMAND = re.compile(r"`(hf [^`]+)`")


def _notes(tmp_path: Path, harness: str) -> str:
    for name in BENCHMARKS:
        (tmp_path / harness / docs.TASK_DIRS[harness] / name).mkdir(parents=True)
    return docs.pr_notes(tmp_path / harness, harness)


def _hf() -> str:
    found = Path(sys.executable).parent / "hf"
    return str(found) if found.exists() else (shutil.which("hf") or pytest.skip("the hub CLI `hf` is not installed"))


@pytest.mark.parametrize("harness", sorted(docs.TASK_DIRS))
def test_the_notes_name_hub_commands_the_installed_cli_accepts(harness: str, tmp_path: Path) -> None:
    text = _notes(tmp_path, harness)
    assert "huggingface-cli" not in text
    commands = set(_HF_COMMAND.findall(text))
    assert "hf auth login" in commands  # dataset access
    unpinned = [benchmarks.get(b).source for b in BENCHMARKS if not benchmarks.get(b).source.revision]
    assert {f"hf datasets info {source.hub_id} --expand sha" for source in unpinned} <= commands  # the commit to pin
    for command in sorted(commands):
        words = command.split()[1:]
        path = [w for w in words if re.fullmatch(r"[a-z]+", w)][:2]  # the subcommand (ids contain / or -)
        help_text = subprocess.run([_hf(), *path, "--help"], capture_output=True, text=True, timeout=120,
                                   check=False)
        assert help_text.returncode == 0, f"`{command}`: hf {' '.join(path)} --help: {help_text.stderr[-500:]}"
        for option in (w for w in words if w.startswith("--")):
            assert option in help_text.stdout, f"`{command}`: {option} is not an option of hf {' '.join(path)}"
        if "--expand" in words:
            assert re.search(r"\bsha\b", help_text.stdout), "hf datasets info --expand has no sha property"
