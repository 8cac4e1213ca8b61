"""The harnesses' own code style, applied to (and checked on) exported Python files.

- lmms-eval (`.pre-commit-config.yaml`, `pyproject.toml` at v0.7.x): black 25.1.0 with `--line-length=240`, then
  isort 6.0.1 with `--profile black`.
- lm-eval (`.pre-commit-config.yaml`, `pyproject.toml` at 0.4.13): `ruff-check --fix` and `ruff-format` (ruff
  v0.16.3 in its hooks) with the `[tool.ruff.lint]` settings below (no `[tool.ruff]` section: line length 88,
  target from `requires-python = ">=3.10"`). The inlined modules are lmms-agentic's own code, written against its
  rules: findings that ruff cannot fix (its docstring and bandit rules) are suppressed line by line with
  `ruff check --add-noqa`, so the file passes the hooks without changing what the code does.

`format_files` applies a style, `check_files` verifies it (both raise `FormattingError` with the tool's output).
black and isort are Python dependencies of the export (`pip install -e '.[export]'`); ruff is run as a
command (`ruff` next to the interpreter, else on PATH).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

LMMS_EVAL_BLACK_LINE_LENGTH = 240
LMEVAL_RUFF_TOML = """\
target-version = "py310"

[lint]
preview = true
explicit-preview-rules = true
extend-select = ["B", "C419", "D", "E", "F", "FURB", "I", "TC", "RUF034", "S", "SIM", "S307", "UP", "W605"]
fixable = ["B", "D", "E", "F401", "FURB", "I001", "RUF", "SIM", "TC", "UP", "W605"]
ignore = ["D10", "D200", "D202", "D205", "D212", "D415", "D417", "E11", "E402", "E501", "E701", "E731", "E741",
          "SIM108", "SIM105", "SIM401", "SIM118", "S311", "S701", "S101"]

[lint.extend-per-file-ignores]
"__init__.py" = ["F401", "F402", "F403", "F405"]

[lint.isort]
combine-as-imports = true
known-first-party = ["lm_eval"]
lines-after-imports = 2

[lint.pydocstyle]
convention = "google"
ignore-var-parameters = true
"""


class FormattingError(RuntimeError):
    """A formatter failed or a file does not follow the harness's style."""


def _ruff() -> str:
    local = Path(sys.executable).with_name("ruff")
    found = str(local) if local.exists() else shutil.which("ruff")
    if not found:
        raise FormattingError("ruff is needed for lm-eval exports (pip install ruff)")
    return found


def _run(command: Sequence[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(command), capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise FormattingError(f"{' '.join(command[:3])} failed:\n{done.stdout}{done.stderr}")
    return done


def _ruff_config(folder: Path) -> Path:
    path = folder / "ruff.toml"
    path.write_text(LMEVAL_RUFF_TOML, encoding="utf-8")
    return path


def _lmms_eval_format(text: str) -> str:
    import black
    import isort

    formatted = black.format_str(text, mode=black.Mode(line_length=LMMS_EVAL_BLACK_LINE_LENGTH))
    return str(isort.code(formatted, profile="black"))


def format_files(harness: str, files: Sequence[Path]) -> None:
    """Rewrite `files` in the harness's style."""
    if harness == "lmms-eval":
        for path in files:
            path.write_text(_lmms_eval_format(path.read_text(encoding="utf-8")), encoding="utf-8")
        return
    ruff = _ruff()
    with tempfile.TemporaryDirectory() as folder:
        config = str(_ruff_config(Path(folder)))
        paths = [str(p) for p in files]
        _run([ruff, "check", "--config", config, "--fix", "--quiet", "--no-cache", *paths], check=False)
        _run([ruff, "format", "--config", config, "--quiet", "--no-cache", *paths])
        _run([ruff, "check", "--config", config, "--add-noqa", "--quiet", "--no-cache", *paths], check=False)
        _run([ruff, "format", "--config", config, "--quiet", "--no-cache", *paths])


def check_files(harness: str, files: Sequence[Path]) -> None:
    """Raise `FormattingError` unless `files` pass the harness's formatter and linter checks."""
    if harness == "lmms-eval":
        bad = [str(p) for p in files if _lmms_eval_format(p.read_text(encoding="utf-8")) != p.read_text("utf-8")]
        if bad:
            raise FormattingError(f"not black -l {LMMS_EVAL_BLACK_LINE_LENGTH} + isort --profile black clean: {bad}")
        return
    ruff = _ruff()
    with tempfile.TemporaryDirectory() as folder:
        config = str(_ruff_config(Path(folder)))
        paths = [str(p) for p in files]
        _run([ruff, "check", "--config", config, "--no-cache", *paths])
        _run([ruff, "format", "--config", config, "--check", "--no-cache", *paths])
