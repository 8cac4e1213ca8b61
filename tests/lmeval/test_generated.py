"""The generated lm-eval task folder: up to date, outside lmms-eval's tree, indexed and loadable by lm-eval."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import lmms_agentic
from lmms_agentic.lmeval import TASKS, cli, generate, tasks_dir
from lmms_agentic.lmeval.hooks import resolve
from lmms_agentic.lmeval.sources import all_sources

SOURCES = all_sources()
NAMES = sorted(s.name for sources in SOURCES.values() for s in sources)


def test_the_generated_folder_is_up_to_date() -> None:
    problems = generate.stale()
    assert not problems, "stale lm-eval tasks; run `python -m lmms_agentic.lmeval write`:\n" + "\n".join(problems)


def test_the_folder_is_outside_lmms_evals_task_tree() -> None:
    folder, theirs = Path(tasks_dir()).resolve(), Path(lmms_agentic.tasks_dir()).resolve()
    assert folder.is_dir() and not folder.is_relative_to(theirs)
    assert not list(theirs.rglob(generate.TEMPLATE)), "no lm-eval file inside tasks/"


def test_every_task_and_group_has_a_translation_with_importable_hooks() -> None:
    assert len(NAMES) > 100 and {"robovista", "agentvqa", "agentx", "robovista_circular"} <= set(NAMES)
    for sources in SOURCES.values():
        for source in sources:
            if source.is_group:
                continue
            for key in ("process_docs", "doc_to_messages", "doc_to_target", "process_results"):
                assert callable(resolve(source.hook(key)))
            kwargs = source.kwargs()
            assert kwargs.get("video_mode", "frames") == "frames", source.name
            assert "max_gen_toks" in source.generation_kwargs() and "until" in source.generation_kwargs()


def test_lm_eval_indexes_every_task_and_group() -> None:
    TaskManager = pytest.importorskip("lm_eval.tasks", reason="pip install lmms-agentic[lmeval]").TaskManager

    manager = TaskManager(include_path=tasks_dir(), include_defaults=False)
    assert not set(NAMES) - set(manager.all_tasks)


@pytest.mark.parametrize("task", ["robovista_icl_seed0", "agentvqa_egocentric_videos", "agentx_text_answer",
                                  "robovista_cot_circular"])
def test_a_task_builds_under_lm_eval_with_one_placeholder_per_image(task: str, mini_env: None) -> None:
    TaskManager = pytest.importorskip("lm_eval.tasks", reason="pip install lmms-agentic[lmeval]").TaskManager

    loaded: Any = TaskManager(include_path=tasks_dir(), include_defaults=False).load([task])
    built = loaded["tasks"][task]
    assert built.MULTIMODAL and built.OUTPUT_TYPE == "generate_until"
    for doc in list(built.eval_docs)[:2]:
        text, images = built.doc_to_text(doc), built.doc_to_image(doc)
        assert images and text.count("<image>") == len(images)
        assert built.resolve_field(doc, built.config.description) == doc["lmms_agentic_system_prompt"]
    assert built.config.generation_kwargs["until"] == []


def test_the_entry_point_object_is_a_path_a_callable_and_a_package(tmp_path: Path) -> None:
    assert tasks_dir() == TASKS and TASKS() == tasks_dir() and os.fspath(TASKS) == tasks_dir()
    assert Path(TASKS).is_dir() and TASKS.__path__ == [tasks_dir()]
    assert Path(TASKS.__file__).parent == Path(tasks_dir())


def test_cli_prints_the_folder_and_checks_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["tasks-dir"]) == 0 and capsys.readouterr().out.strip() == tasks_dir()
    assert cli.main(["check"]) == 0


def test_the_project_cli_prints_the_same_folder(capsys: pytest.CaptureFixture[str]) -> None:
    from lmms_agentic import cli as project_cli

    try:
        code = project_cli.main(["lmeval-tasks-dir"])
    except SystemExit:
        pytest.skip("`python -m lmms_agentic lmeval-tasks-dir` is not wired into lmms_agentic/cli.py yet")
    assert code == 0 and capsys.readouterr().out.strip() == tasks_dir()
