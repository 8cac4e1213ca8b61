"""The lm-eval task folder: generated on demand, never stale, outside lmms-eval's tree, indexed and loadable."""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import lmms_agentic
from lmms_agentic.lmeval import generate, tasks_dir
from lmms_agentic.lmeval.bridge import ImageLimitError
from lmms_agentic.lmeval.sources import all_sources
from lmms_agentic.lmeval.task_functions import resolve

SOURCES = all_sources()
SKIPPED = {name: why for sources in SOURCES.values() for name, why in generate.unsupported(sources).items()}
NAMES = sorted(s.name for sources in SOURCES.values() for s in sources if s.name not in SKIPPED)


def test_the_folder_holds_exactly_what_the_sources_render() -> None:
    folder = Path(tasks_dir())
    expected = generate.expected_files()
    written = {p.relative_to(folder): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}
    assert written == expected and folder.name == generate.fingerprint(expected)


def test_a_changed_source_gets_a_new_folder_and_the_old_one_is_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = generate.ensure(cache=cache)
    assert generate.ensure(cache=cache) == first, "an unchanged source reuses its folder"
    root = tmp_path / "tasks"
    root.mkdir()
    shutil.copytree(Path(lmms_agentic.tasks_dir()) / "robovista", root / "robovista")
    (root / "robovista" / "robovista_cot.yaml").write_text(
        (root / "robovista" / "robovista_cot.yaml").read_text().replace("robovista_cot", "robovista_cot2"))
    second = generate.ensure(root=root, cache=cache)
    assert second != first and (second / "robovista" / "robovista_cot.yaml").is_file() and first.is_dir()
    assert not [p for p in cache.iterdir() if p.name.startswith(".")], "no half-built folder left behind"


def test_the_folder_is_outside_lmms_evals_task_tree() -> None:
    folder, theirs = Path(tasks_dir()).resolve(), Path(lmms_agentic.tasks_dir()).resolve()
    assert folder.is_dir() and not folder.is_relative_to(theirs)
    assert not list(theirs.rglob(generate.TEMPLATE)), "no lm-eval file inside tasks/"


def test_every_task_and_group_has_a_translation_with_importable_hooks() -> None:
    assert len(NAMES) > 100 and {"robovista", "agentvqa", "agentx", "robovista_circular"} <= set(NAMES)
    for sources in SOURCES.values():
        for source in sources:
            if source.is_group or source.name in SKIPPED:
                continue
            for key in ("process_docs", "doc_to_messages", "doc_to_target", "process_results"):
                assert callable(resolve(source.hook(key)))
            kwargs = source.kwargs()
            assert kwargs.get("video_mode", "frames") == "frames", source.name
            assert "max_gen_toks" in source.generation_kwargs() and "until" in source.generation_kwargs()


def test_lm_eval_indexes_every_task_and_group() -> None:
    TaskManager = pytest.importorskip("lm_eval.tasks", reason="pip install -e '.[lmeval]'").TaskManager

    manager = TaskManager(include_path=tasks_dir(), include_defaults=False)
    assert not set(NAMES) - set(manager.all_tasks)
    assert not set(SKIPPED) & set(manager.all_tasks)


def test_what_lm_eval_cannot_run_is_listed_with_its_reason_not_generated() -> None:
    lines = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for path in Path(tasks_dir()).rglob(generate.NOT_GENERATED)
             for line in path.read_text().splitlines() if not line.startswith("#")}
    assert lines == SKIPPED
    for name, why in SKIPPED.items():
        source = next(s for sources in SOURCES.values() for s in sources if s.name == name)
        kind = source.config.get("output_type", "generate_until")
        assert (source.is_group and why.startswith("group of ")) or kind != "generate_until" or "video_mode" in why


@pytest.mark.parametrize("task", ["robovista_icl_seed0", "agentvqa_egocentric_videos", "agentx_text_answer",
                                  "robovista_cot_circular"])
def test_a_task_builds_under_lm_eval_with_one_placeholder_per_image(task: str, mini_env: None) -> None:
    TaskManager = pytest.importorskip("lm_eval.tasks", reason="pip install -e '.[lmeval]'").TaskManager

    manager = TaskManager(include_path=tasks_dir(), include_defaults=False, metadata={"max_images": 64})
    loaded: Any = manager.load([task])
    built = loaded["tasks"][task]
    assert built.MULTIMODAL and built.OUTPUT_TYPE == "generate_until"
    for doc in list(built.eval_docs)[:2]:
        text, images = built.doc_to_text(doc), built.doc_to_image(doc)
        assert images and text.count("<image>") == len(images)
        assert built.resolve_field(doc, built.config.description) == doc["lmms_agentic_system_prompt"]
    assert built.config.generation_kwargs["until"] == []
    if task in ("robovista_icl_seed0", "agentvqa_egocentric_videos"):  # several images: without max_images, stop
        bare: Any = TaskManager(include_path=tasks_dir(), include_defaults=False).load([task])
        with pytest.raises(ImageLimitError, match="pass max_images=64"):
            bare["tasks"][task].doc_to_image(next(iter(bare["tasks"][task].eval_docs)))


def test_the_lm_eval_tasks_entry_point_returns_the_folder() -> None:
    found = [ep for ep in metadata.entry_points(group="lm_eval.tasks") if ep.value.startswith("lmms_agentic")]
    assert found, "the `lm_eval.tasks` entry point is not installed (reinstall: pip install -e .)"
    assert found[0].load()() == tasks_dir()


def test_the_project_cli_prints_the_folder(capsys: pytest.CaptureFixture[str]) -> None:
    from lmms_agentic import cli

    assert cli.main(["lmeval-tasks-dir"]) == 0 and capsys.readouterr().out.strip() == tasks_dir()
