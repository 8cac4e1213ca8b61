"""The README's install lines are true for someone who has only the repository: lmms-agentic is not on PyPI, so no
line may install it by name; every extra a line names is declared; and the README's "Installation" block runs as
written in bash (the clone URL pointing at this repository, `pip` given `--dry-run --no-deps --no-build-isolation`
so nothing is downloaded or installed: it checks that each path or git URL builds lmms-agentic's metadata).

The git URL is this repository, so the block checks the committed state (a CI clone's). The lm-eval extra's
dependency closure is checked against the installed distributions' metadata (offline): no lmms-eval, no torch.
"""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
URL = "<repository URL>"
PIP_COMMAND = re.compile(r"pip install [^`\n#]*")
HEAVY = ("lmms-eval", "torch", "torchvision", "transformers", "accelerate", "triton")


def install_block() -> list[str]:
    """The shell lines of the README's "Installation" section (comments and blank lines dropped)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Installation\n", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        for line in block.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()
            if command:
                lines.append(command)
    return lines


def _extras() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return set(project["optional-dependencies"])


def test_no_line_installs_lmms_agentic_from_pypi() -> None:
    """`pip install lmms-agentic` and `pip install 'lmms-agentic[lmeval]'` found nothing: not published."""
    commands = PIP_COMMAND.findall(README.read_text(encoding="utf-8"))
    named = [c for c in commands if "lmms-agentic" in c or "lmms_agentic" in c]
    assert named, "the README names no git URL install"
    assert all("@ git+" in c for c in named), [c for c in named if "@ git+" not in c]
    assert any(c.startswith("pip install -e '.[") for c in commands)


def test_every_extra_the_readme_installs_is_declared() -> None:
    declared = _extras()
    for command in PIP_COMMAND.findall(README.read_text(encoding="utf-8")):
        for extras in re.findall(r"(?:\.|lmms-agentic)\[([^\]]+)\]", command):
            assert set(extras.split(",")) <= declared, (command, declared)


def test_the_install_block_runs_as_written(tmp_path: Path) -> None:
    lines = install_block()
    assert lines[0] == f"git clone {URL} lmms-agentic && cd lmms-agentic"
    pip_lines = [line for line in lines if line.startswith("pip install")]
    assert len(pip_lines) >= 5 and any("@ git+" in line for line in pip_lines)
    script = "\n".join([
        "set -euo pipefail",
        'pip() { "$TEST_PYTHON" -m pip "$@" --dry-run --no-deps --no-build-isolation --no-input; }',
        *(f"echo '+ {line}'\n{line}" for line in lines),
    ]).replace(URL, f"file://{REPO}")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(tmp_path), "TEST_PYTHON": sys.executable,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert out.count("Would install lmms-agentic-") == len(pip_lines), out[-4000:]
    assert (tmp_path / "lmms-agentic" / ".venv" / "bin" / "activate").is_file()


def _closure(requirements: list[str]) -> dict[str, str]:
    """Distribution name -> version of everything ``requirements`` pull in, from the installed metadata."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    todo = [Requirement(text) for text in requirements]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        requirement = todo.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            continue  # not installed here (a platform-specific dependency)
        found[key[0]] = dist.version
        environments = [{"extra": extra} for extra in key[1]] or [{"extra": ""}]
        for text in dist.requires or []:
            inner = Requirement(text)
            if inner.marker is None or any(inner.marker.evaluate(e) for e in environments):
                todo.append(inner)
    return found


def test_the_lmeval_install_needs_neither_lmms_eval_nor_torch() -> None:
    """`[lmeval]` resolved 171 packages, lmms-eval, torch and 13 CUDA wheels among them, for API backends."""
    from packaging.requirements import Requirement

    try:
        metadata.distribution("lm-eval")
    except metadata.PackageNotFoundError:
        pytest.skip("lm-eval is not installed here: pip install -e '.[lmeval]'")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["lmeval"]]
    assert not [r for r in requirements if Requirement(r).name in HEAVY]
    closure = _closure(requirements)
    heavy = sorted(n for n in closure if n in HEAVY or n.startswith("nvidia-"))
    assert not heavy and "lm-eval" in closure, heavy
    assert len(closure) < 100, sorted(closure)
