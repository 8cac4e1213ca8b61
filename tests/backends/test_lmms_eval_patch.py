"""The upstream patch `docs/upstream/lmms-eval-batched-agentic-rounds.patch`, applied to a copy of the installed
lmms-eval.

The installed `lmms_eval` package is copied into a site-packages-like folder under tmp_path and patched with GNU
`patch -p1 --fuzz=0` (context must match exactly; line offsets are fine). A hunk that no longer applies, because
the installed lmms-eval changed, fails the test naming the file and the hunk's header. One pytest subprocess, with
the copy first on PYTHONPATH, then runs the patch's own test (`test/eval/test_agentic_batch_rounds.py`, created by
the patch) and `tests/backends/lmms_eval_patch_check.py`: the copy is what it imports, and the patched `evaluate()`
gives the same responses with `--agentic_batch_rounds` on and off. The lines the patch adds are also checked against
lmms-eval's code style (black 25.1.0 `--line-length=240`, isort 6.0.1 `--profile black`; its pre-commit hooks).
"""

from __future__ import annotations

import difflib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PATCH = REPO / "docs" / "upstream" / "lmms-eval-batched-agentic-rounds.patch"
CHECK = Path(__file__).with_name("lmms_eval_patch_check.py")
UPSTREAM_TEST = "test/eval/test_agentic_batch_rounds.py"
PATCHED_SOURCES = ("lmms_eval/evaluator.py", "lmms_eval/__main__.py")
SUBPROCESS_TIMEOUT = 300


class PatchFailed(AssertionError):
    """The patch does not apply; the message names each hunk that failed."""


def hunks(patch_text: str) -> dict[str, list[str]]:
    """The hunk headers (`@@ -a,b +c,d @@ context`) of each file the patch changes, in order."""
    found: dict[str, list[str]] = {}
    current = ""
    for line in patch_text.splitlines():
        if line.startswith("+++ "):
            current = line[4:].split("\t")[0].removeprefix("b/")
            found[current] = []
        elif line.startswith("@@ ") and current:
            found[current].append(line)
    return found


def apply_patch(root: Path, patch_file: Path = PATCH) -> None:
    """Apply `patch_file` to the tree at `root` (`patch -p1`, no fuzz); raise `PatchFailed` naming failed hunks."""
    tool = shutil.which("patch")
    if tool is None:
        pytest.skip("GNU patch is not installed")
    run = subprocess.run([tool, "-p1", "--fuzz=0", "--batch", "--forward", "--no-backup-if-mismatch",
                          "--reject-file=-", "-i", str(patch_file)], cwd=root, capture_output=True, text=True)
    if run.returncode == 0:
        return
    headers = hunks(patch_file.read_text(encoding="utf-8"))
    failed, current = [], ""
    for line in run.stdout.splitlines():
        if match := re.match(r"(?:patching|checking) file (\S+)", line):
            current = match.group(1)
        elif match := re.match(r"Hunk #(\d+) FAILED", line):
            header = headers.get(current, [])[int(match.group(1)) - 1:][:1] or ["?"]
            failed.append(f"{current} hunk #{match.group(1)}: {header[0]}")
    raise PatchFailed(f"{patch_file.name} no longer applies to the lmms-eval at {root}:\n  "
                      + "\n  ".join(failed or [run.stdout.strip() or run.stderr.strip()]))


@pytest.fixture(scope="module")
def installed() -> Path:
    """The installed `lmms_eval` package folder."""
    spec = importlib.util.find_spec("lmms_eval")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("lmms-eval is not installed (the [lmms-eval] extra)")
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.fixture(scope="module")
def patched(installed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site-packages-like folder holding a patched copy of the installed `lmms_eval`."""
    root = tmp_path_factory.mktemp("patched") / "site-packages"
    shutil.copytree(installed, root / "lmms_eval", ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
    apply_patch(root)
    return root


def test_the_patch_names_a_hunk_that_no_longer_applies(installed: Path, tmp_path: Path) -> None:
    for name in PATCHED_SOURCES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(installed.parent / name, tmp_path / name)
    evaluator = tmp_path / "lmms_eval" / "evaluator.py"
    source = evaluator.read_text(encoding="utf-8")
    call = 'current_raw_output = lm.generate_until([single_req])[0]'
    assert call in source
    evaluator.write_text(source.replace(call, 'current_raw_output = lm.generate_until([single_req]).pop()'))
    with pytest.raises(PatchFailed) as failure:
        apply_patch(tmp_path)
    message = str(failure.value)
    second_hunk = hunks(PATCH.read_text(encoding="utf-8"))["lmms_eval/evaluator.py"][1]
    assert f"lmms_eval/evaluator.py hunk #2: {second_hunk}" in message
    assert message.count(" hunk #") == 1


def test_the_patch_and_its_test_pass_on_a_copy_of_the_installed_lmms_eval(patched: Path) -> None:
    test_dir = patched / "test" / "eval"
    assert (patched / UPSTREAM_TEST).is_file()
    shutil.copy(CHECK, test_dir / "test_patched_evaluate_switch.py")
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "WORLD_SIZE", "RANK", "LOCAL_RANK", "PYTEST_ADDOPTS")}
    env.update(PYTHONPATH=str(patched), LMMS_EVAL_PATCHED_COPY=str(patched), PYTHONDONTWRITEBYTECODE="1")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull,
                          "--rootdir", str(patched), UPSTREAM_TEST, "test/eval/test_patched_evaluate_switch.py"],
                         cwd=patched, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"\b11 passed\b", run.stdout), run.stdout[-2000:]  # 9 of the patch's test, 2 of the check


def _style_findings(path: Path, root: Path) -> list[str]:
    """The lines black then isort (lmms-eval's hooks and settings) would change in `path`."""
    import black
    import isort

    source = path.read_text(encoding="utf-8")
    config = isort.Config(profile="black", src_paths=(root,))  # as from a checkout: lmms_eval is first-party
    formatted = isort.code(black.format_str(source, mode=black.Mode(line_length=240)), config=config)
    return [line for line in difflib.unified_diff(source.splitlines(), formatted.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_the_patch_adds_no_style_finding(installed: Path, patched: Path) -> None:
    pins = (REPO / "constraints" / "export-style-lmms-eval.txt").read_text(encoding="utf-8")
    for tool in ("black", "isort"):
        version = importlib.metadata.version(tool)
        if f"{tool}=={version}" not in pins:
            pytest.skip(f"{tool} {version} is not the version lmms-eval's pre-commit pins")
    assert _style_findings(patched / UPSTREAM_TEST, patched) == []
    for name in PATCHED_SOURCES:  # the wheel's files have a few findings of their own; the patch adds none
        assert _style_findings(patched / name, patched) == _style_findings(installed.parent / name, patched), name
