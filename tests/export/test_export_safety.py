"""`export` never deletes a user's file without being told, and a bad output is one line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic.lmeval.export import safety
from lmms_agentic.lmeval.export.safety import ExportError

REPO = Path(__file__).resolve().parents[2]


def _layout(root: Path) -> tuple[Path, list[Path]]:
    folder = root / "lmms_eval" / "tasks" / "robovista"
    return folder, [folder / "utils.py", folder / "robovista.yaml", root / "test" / "eval" / "test_robovista.py",
                    root / "UPSTREAM_PR.md"]


def test_a_fresh_or_re_exported_folder_is_accepted(tmp_path: Path) -> None:
    folder, planned = _layout(tmp_path)
    assert safety.prepare(tmp_path, folder, planned) == []
    safety.write_files({path: "x" for path in planned})
    assert safety.prepare(tmp_path, folder, planned) == [], "the export's own files are replaced in place"


@pytest.mark.parametrize("user_files", [["notes.md"], ["sub/keep.yaml"], [f"f{i}.txt" for i in range(7)]])
def test_a_folder_with_files_the_export_did_not_write_is_refused_and_kept(tmp_path: Path,
                                                                           user_files: list[str]) -> None:
    folder, planned = _layout(tmp_path)
    for name in user_files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("mine")
    with pytest.raises(ExportError, match="--force") as error:
        safety.prepare(tmp_path, folder, planned)
    assert "\n" not in str(error.value) and Path(user_files[0]).name in str(error.value)
    assert all((folder / name).read_text() == "mine" for name in user_files)


def test_force_deletes_only_the_stray_files_and_names_them(tmp_path: Path) -> None:
    folder, planned = _layout(tmp_path)
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "old.yaml").write_text("mine")
    (folder / "utils.py").write_text("previous export")
    removed = safety.prepare(tmp_path, folder, planned, force=True)
    assert removed == [(folder / "sub" / "old.yaml").absolute()]
    assert not (folder / "sub").exists() and (folder / "utils.py").exists()


@pytest.mark.parametrize("linked", ["out", "folder", "file"])
def test_a_symbolic_link_on_the_way_is_one_line(tmp_path: Path, linked: str) -> None:
    real = tmp_path / "real"
    real.mkdir()
    out = tmp_path / "out"
    if linked == "out":
        out.symlink_to(real)
    folder, planned = _layout(out)
    if linked == "folder":
        folder.parent.mkdir(parents=True)
        folder.symlink_to(real)
    if linked == "file":
        folder.mkdir(parents=True)
        (folder / "utils.py").symlink_to(real / "elsewhere.py")
    with pytest.raises(ExportError, match="symbolic link") as error:
        safety.prepare(out, folder, planned)
    assert "\n" not in str(error.value)
    assert not any(real.iterdir()), "nothing was written through the link"


def test_a_file_where_a_folder_should_be_is_one_line(tmp_path: Path) -> None:
    folder, planned = _layout(tmp_path)
    folder.parent.mkdir(parents=True)
    folder.write_text("not a folder")
    with pytest.raises(ExportError, match="not a task folder"):
        safety.prepare(tmp_path, folder, planned)


def test_an_unwritable_output_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, planned = _layout(tmp_path)
    folder.mkdir(parents=True)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == folder else real_access(path, mode))
    with pytest.raises(ExportError, match="not writable"):
        safety.prepare(tmp_path, folder, planned)

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "write_text", refuse)
    with pytest.raises(ExportError, match=r"cannot write .*utils.py \(Permission denied\)"):
        safety.write_files({folder / "utils.py": "x"})


@pytest.mark.e2e
def test_the_command_refuses_then_forces_with_one_line_each(tmp_path: Path) -> None:
    folder = tmp_path / "lmms_eval" / "tasks" / "robovista"
    folder.mkdir(parents=True)
    (folder / "my_notes.md").write_text("mine")
    command = [sys.executable, "-m", "lmms_agentic", "export", "--harness", "lmms-eval", "--benchmark", "robovista",
               "--no-format", str(tmp_path)]
    env = {**os.environ, "LMMS_AGENTIC_DEBUG": "0"}
    refused = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, check=False)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "my_notes.md" in refused.stderr and "--force" in refused.stderr
    assert (folder / "my_notes.md").read_text() == "mine"
    forced = subprocess.run([*command, "--force"], capture_output=True, text=True, cwd=REPO, env=env, check=False)
    assert forced.returncode == 0, forced.stderr[-2000:]
    assert f"removed {folder / 'my_notes.md'} (--force)" in forced.stderr
    assert not (folder / "my_notes.md").exists() and (folder / "utils.py").exists()
