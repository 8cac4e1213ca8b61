"""Every install hint in the repository (documentation, error messages, test skip reasons) installs from a checkout
or a git URL: lmms-agentic is not on PyPI, so a hint that installs it by name (with or without extras) finds
nothing. README.md's own lines are checked by ``test_install_from_checkout``; this covers every other file."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUFFIXES = {".md", ".py", ".yaml", ".yml", ".txt", ".sh", ".cfg", ".toml"}
QUOTES_THE_FAILURE = {"tests/plugin/test_install_from_checkout.py"}
"""Files that quote an install by name on purpose, as what fails."""
BY_NAME = re.compile(r"pip install (?:-\S+ )*['\"]?lmms[-_]agentic(?:\[[^\]]*\])?(?P<rest>[^`'\"\n]*)")


def _tracked() -> list[Path]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    return [REPO / name for name in done.stdout.split("\0") if name and Path(name).suffix in SUFFIXES
            and name not in QUOTES_THE_FAILURE]


def test_no_hint_installs_lmms_agentic_by_name() -> None:
    found = []
    for path in _tracked():
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for hint in BY_NAME.finditer(line):
                if not hint.group("rest").lstrip().startswith("@ git+"):
                    found.append(f"{path.relative_to(REPO)}:{number}: {hint.group(0)}")
    assert found == [], "install from a checkout (pip install -e '.[extra]') or a git URL:\n" + "\n".join(found)
