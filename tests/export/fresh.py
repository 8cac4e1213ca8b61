"""A contributor's machine for the exports: a venv with only the harness (and the extras `UPSTREAM_PR.md` declares),
from the package registry, with the exported folder copied into the installed harness's task tree.

`harness_venv(harness)` builds the venv once per requirement set under `EXPORT_VENV_DIR` (default
`.cache/export-venvs/`, ignored by git; a clean clone builds it afresh), installing with the project's CPU
constraints so torch is not re-resolved. `install_folder` copies a task folder into `<site-packages>/<package>/tasks/`
(what merging the pull request does) and returns the copy.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONSTRAINTS = REPO / "constraints" / "cpu.txt"
REQUIREMENTS = {
    "lm-eval": ["lm-eval[api]==0.4.13", "pillow", "av", "pytest"],
    "lmms-eval": ["lmms-eval==0.7.3", "pytest"],
}
"""The harness as a contributor installs it, the extras the exports declare (lm-eval: `pillow`, from its `dev`
extra, and `av` for AgentVQA's video frames, which no lm-eval extra installs; `[api]` for the OpenAI-compatible
model), and pytest for the export's own test."""
PACKAGES = {"lm-eval": "lm_eval", "lmms-eval": "lmms_eval"}


def _venv_root() -> Path:
    return Path(os.environ.get("EXPORT_VENV_DIR", REPO / ".cache" / "export-venvs"))


def harness_venv(harness: str) -> Path:
    """The venv's python for `harness` (built on first use; rebuilt when the requirements or constraints change)."""
    requirements = REQUIREMENTS[harness]
    key = hashlib.sha256("\n".join([*requirements, CONSTRAINTS.read_text()]).encode()).hexdigest()[:12]
    venv = _venv_root() / f"{harness}-{key}"
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if stamp.exists():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-c", str(CONSTRAINTS), *requirements],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pip install {' '.join(requirements)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    stamp.write_text(" ".join(requirements) + "\n")
    return python


def site_packages(python: Path) -> Path:
    done = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def install_folder(python: Path, harness: str, folder: Path, relative: str | None = None) -> Path:
    """Copy an exported task folder (or, with `relative`, the folder at that path under site-packages, e.g. the
    shared module) into the venv's installed harness (replacing an earlier copy)."""
    target = site_packages(python) / (relative or f"{PACKAGES[harness]}/tasks/{folder.name}")
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(folder, target)
    return target
