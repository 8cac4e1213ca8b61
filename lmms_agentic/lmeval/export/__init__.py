"""Upstream export: a task folder of one benchmark in lmms-eval's or lm-eval's repository layout.

`python -m lmms_agentic export --harness lmms-eval|lm-eval --benchmark B OUT_DIR [--force]` writes, under OUT_DIR,
the files an upstream pull request adds, at the paths they take in that repository:

- lmms-eval: `lmms_eval/tasks/<b>/` (`_default_template_yaml`, the task and group YAMLs, `utils.py`, `README.md`,
  the benchmark core's modules and the data files they read) and `test/eval/test_<b>.py`;
- lm-eval: `lm_eval/tasks/<b>/` (the same) and `tests/test_<b>.py`;
- `UPSTREAM_PR.md`: where the remaining lines go, the dependencies, the validation commands, and what the pull
  request still needs.

The folder is built from the benchmark core (`upstream`): the core copied as sibling modules plus the thin
`utils.py` the benchmark writes in its own `tasks/<b>/upstream.py` (with its citation and notes), a README in the
harness's template (`readme`) and a test file (`testgen`); nothing in it names this package. Finally the harness's
own formatters run (`formatting`) and `UPSTREAM_PR.md` is written (`docs`). Before anything is written,
`safety.prepare` checks the output: an existing task folder holding files the export would not write is refused
unless `force` (which deletes them and returns their paths), and links or unwritable outputs end in one
`ExportError` line. Several benchmarks can be exported into the same OUT_DIR.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lmms_agentic.adapters import benchmarks
from lmms_agentic.lmeval.export import docs, formatting, readme, safety, selfcases, shared, testgen, upstream

HARNESS_DIRS = {"lmms-eval": ("lmms_eval/tasks", "test/eval"), "lm-eval": ("lm_eval/tasks", "tests")}

__all__ = ["HARNESS_DIRS", "ExportError", "Exported", "export", "task_folder"]
ExportError = safety.ExportError


def task_folder(out_dir: Path, harness: str, benchmark: str) -> Path:
    """Where an export puts the benchmark's task folder."""
    return Path(out_dir) / HARNESS_DIRS[harness][0] / benchmark


class Exported(list[Path]):
    """The files an export wrote, in order; `removed`: the files `force` deleted from the task folder."""

    def __init__(self, files: Iterable[Path], removed: Iterable[Path] = ()) -> None:
        super().__init__(files)
        self.removed = list(removed)


def _thin_files(bench: benchmarks.Benchmark, harness: str, folder: Path, test_path: Path) -> dict[Path, str]:
    made = upstream.Generated()
    tasks, texts = upstream.folder_files(bench, harness, readme.readme, made)
    files = {folder / name: text for name, text in texts.items()}
    if made.core is not None:
        root = folder.parents[len(Path(HARNESS_DIRS[harness][0]).parts)]
        files.update({root / shared.SHARED_DIRS[harness] / name: text
                      for name, text in shared.shared_files(harness).items()})
        test, data = selfcases.test_files(bench, harness, made.core, made.chosen, upstream.PACKAGES[harness])
        files[test_path] = test
        files[test_path.parent / "testdata" / f"{bench.name}_cases.json"] = data
        return files
    files[test_path] = testgen.test_source(bench.title, bench.name, tasks, harness)
    return files


def export(harness: str, benchmark: str, out_dir: Path, format_code: bool = True, force: bool = False) -> Exported:
    """Write the upstream files of `benchmark` for `harness` under `out_dir`; returns the files written (and, in
    `removed`, the files `force` deleted). Raises `ExportError` (one line) when the output cannot be used."""
    if harness not in HARNESS_DIRS:
        raise ValueError(f"harness must be one of {', '.join(HARNESS_DIRS)}, got {harness!r}")
    bench = benchmarks.get(benchmark)
    folder = task_folder(out_dir, harness, benchmark)
    test_path = Path(out_dir) / HARNESS_DIRS[harness][1] / f"test_{benchmark}.py"
    files = _thin_files(bench, harness, folder, test_path)
    notes = Path(out_dir) / "UPSTREAM_PR.md"
    removed = safety.prepare(Path(out_dir), folder, [*files, notes], force=force)
    safety.write_files(files)
    if format_code:
        python = [p for p in files if p.suffix == ".py"]
        formatting.format_files(harness, python)
    safety.write_files({notes: docs.pr_notes(Path(out_dir), harness)})
    return Exported([*files, notes], removed=removed)
