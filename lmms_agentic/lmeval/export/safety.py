"""Where an export may write: the output checks that keep a user's files (and an upstream checkout) intact.

An export writes a known set of files (the task folder's files, the test file, the pull-request notes). Before it
writes anything, `prepare` checks the output:

- a task folder that exists and holds any file the export would not write (a user's notes, another task's YAML,
  an upstream file) is refused, naming up to five of those files; `force=True` removes them, and `prepare` returns
  their paths so the caller can name each one;
- files the export writes itself are replaced in place (exporting twice gives the same tree);
- a symbolic link anywhere on the way to a written file (the output folder, the task folder, a file) and an output
  that cannot be written (read-only folder, a file where a folder should be) end in one `ExportError` line naming
  the path and the fix, before any file is touched.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


class ExportError(ValueError):
    """The export cannot write its output; the message names the path and the fix (one line)."""


def _linked(path: Path, root: Path) -> Path | None:
    """The first symbolic link among `path` and its parents up to (and including) `root`."""
    for candidate in [path, *path.parents]:
        if candidate.is_symlink():
            return candidate
        if candidate == root:
            break
    return None


def _writable_parent(path: Path) -> None:
    """Refuse a folder to write into whose nearest existing ancestor (or itself) is not a writable folder."""
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ExportError(f"{existing} is a file, not a folder; choose an output folder (export OUT_DIR)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ExportError(f"{existing} is not writable; choose a writable output folder or fix its permissions")


def _stray_files(folder: Path, planned: set[Path]) -> list[Path]:
    """Files under `folder` that the export would not write (links count as files)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if (p.is_file() or p.is_symlink()) and p not in planned)


def prepare(out_dir: Path, task_folder: Path, planned: Iterable[Path], force: bool = False) -> list[Path]:
    """Check (and with `force`, clear) the output for an export that writes `planned`; returns the removed files."""
    root = Path(os.path.abspath(out_dir))
    folder = Path(os.path.abspath(task_folder))
    files = {Path(os.path.abspath(p)) for p in planned}
    for path in sorted({root, folder, *files}):
        link = _linked(path, root)
        if link is not None:
            raise ExportError(f"{link} is a symbolic link; export writes only into real folders: pass the link's "
                              f"target ({os.path.realpath(link)}) or another folder as OUT_DIR")
        if path.exists() and path != root and path in files and not path.is_file():
            raise ExportError(f"{path} exists and is not a file; move it away or choose another output folder")
    if folder.exists() and not folder.is_dir():
        raise ExportError(f"{folder} is a file, not a task folder; move it away or choose another output folder")
    stray = _stray_files(folder, files)
    if stray and not force:
        shown = ", ".join(str(p.relative_to(folder)) for p in stray[:5])
        more = f" and {len(stray) - 5} more" if len(stray) > 5 else ""
        raise ExportError(f"{folder} holds {len(stray)} file(s) this export did not write ({shown}{more}); move "
                          "them away, export to an empty folder, or pass --force to delete them")
    for path in sorted({folder, *(p.parent for p in files)}):
        _writable_parent(path)
    for path in sorted(files):
        if path.exists() and not os.access(path, os.W_OK):
            raise ExportError(f"{path} is read-only; fix its permissions or choose another output folder")
    for path in stray:
        try:
            path.unlink()
        except OSError as exc:
            raise ExportError(f"cannot delete {path} ({exc.strerror}); fix its permissions or remove it") from None
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True) if stray else ():
        if not any(sub.iterdir()):
            sub.rmdir()
    return stray


def write_files(files: dict[Path, str]) -> None:
    """Write every file (folders created); an OS error ends in one line naming the file."""
    for path, text in files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise ExportError(f"cannot write {path} ({exc.strerror}); choose a writable output folder") from None

