"""The test file an exported task folder ships (`test/eval/test_<b>.py` or `tests/test_<b>.py`).

Offline and fast, in each harness's style (lmms-eval: unittest classes; lm-eval: pytest functions):

- every exported task and group is found by the harness's `TaskManager` in the task folder;
- `process_results` scores a few known replies on one real document exactly as lmms-agentic scored them when the
  folder was exported (golden values computed here from the plugin on the bundled mini split, with no judge and
  no media: the document's images are left out and a document without video is chosen).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.lmeval.export.layout import ExportedTask
from lmms_agentic.lmeval.hooks import placeholder, resolve

NO_JUDGE = ("LMMS_AGENTIC_JUDGE_BASE_URL", "LMMS_AGENTIC_JUDGE_MODEL", "LMMS_AGENTIC_JUDGE_PRESET",
            "LMMS_AGENTIC_MCQ_JUDGE")


def _unset(benchmark: Benchmark) -> tuple[str, ...]:
    """Settings that would change the golden values: the judge, and the benchmark's own data location."""
    return (*NO_JUDGE, f"LMMS_AGENTIC_DATA_{benchmark.name.upper()}")


def _media_columns(docs: Any) -> list[str]:
    """Columns holding decoded images (lists of image cells): left out of the golden document."""
    found = []
    for name, feature in docs.features.items():
        inner = getattr(feature, "feature", None)
        if type(inner).__name__ == "Image" or type(feature).__name__ == "Image":
            found.append(name)
    return found


@contextlib.contextmanager
def _plugin_environment(benchmark: Benchmark) -> Iterator[None]:
    """The plugin on its mini split, with no judge configured (restored afterwards)."""
    unset = _unset(benchmark)
    saved = {key: os.environ.get(key) for key in (*unset, "LMMS_AGENTIC_DATA", "LMMS_AGENTIC_JUDGE_CACHE")}
    quiet = logging.getLogger("lmms_agentic")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "no judge configured" is the point here, not news
    try:
        for key in unset:
            os.environ.pop(key, None)
        os.environ["LMMS_AGENTIC_DATA"] = "mini"
        os.environ["LMMS_AGENTIC_JUDGE_CACHE"] = "off"
        yield
    finally:
        quiet.setLevel(level)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _replies(doc: Mapping[str, Any], benchmark: Benchmark) -> list[str]:
    """Replies that exercise the scorer: for multiple choice the gold letter, a wrong one, no answer and a
    think-then-answer reply; otherwise the benchmark's own `example_replies` (manifest)."""
    if benchmark.mcq:
        letters = [chr(ord("A") + i) for i, text in enumerate(doc["options"]) if text]
        wrong = next(letter for letter in letters if letter != doc["answer"])
        return [doc["answer"], f"A red cup is on the left. The answer is {wrong}.", "A robot arm holds it.",
                f"<think>Option {wrong} looks close.</think> Answer: {doc['answer']}\nConfidence: 70%"]
    if benchmark.example_replies is None:
        raise ValueError(f"{benchmark.manifest_path}: a benchmark that is not multiple choice needs "
                         "'example_replies' (a function doc -> list of replies) for the exported golden test")
    replies: list[str] = resolve(benchmark.example_replies)(doc)
    return replies


def _as_lmeval(values: Mapping[str, Any], metric_names: Sequence[str]) -> dict[str, Any]:
    """What lm-eval gets from the adapter: the task's metrics, without the ones this row does not count for."""
    return {name: values[name] for name in metric_names if values.get(name) is not None}


def golden(tasks: Sequence[ExportedTask], lmeval: bool) -> dict[str, Any]:
    """One document of an exported task (the first with a document that needs no video), replies, and the
    plugin's process_results for each (as the harness receives it)."""
    leaves = [t for t in tasks if not t.source.is_group]
    if not leaves:
        raise ValueError("no exported task to build the golden test from")
    benchmark = leaves[0].source.benchmark
    with _plugin_environment(benchmark):
        for task in leaves:
            source = task.source
            root = benchmark.folder.parent
            docs = resolve(source.hook("process_docs"))(placeholder(source.placeholder(root)))
            media = _media_columns(docs)
            text = docs.remove_columns(media)
            row = next((dict(r) for r in text if not r.get("video") and r.get("media_type") != "video"), None)
            if row is None:
                continue
            row.update({column: [] for column in media})
            replies = _replies(row, benchmark)
            scorer = resolve(source.hook("process_results"))
            outputs = [scorer(row, [reply]) for reply in replies]
            if lmeval:
                outputs = [_as_lmeval(out, source.metric_names()) for out in outputs]
            expected = [_plain(out) for out in outputs]
            return {"task": source.name, "doc": _plain(row), "replies": replies, "expected": expected}
    raise ValueError("no exported task has a document without video to build the golden test from")


LMMS_EVAL = '''"""Tests of the {title} tasks ({benchmark}); generated by `python -m lmms_agentic export`."""

import json
import logging
import os
import unittest
from pathlib import Path
from unittest import mock

from lmms_eval.tasks import TaskManager
from lmms_eval.tasks.{benchmark} import utils

GOLDEN = json.loads({golden!r})
TASKS = {names!r}


class Test{camel}Registration(unittest.TestCase):
    def test_every_task_and_group_is_found(self):
        manager = TaskManager(include_path=str(Path(utils.__file__).parent), include_defaults=False)
        self.assertFalse(set(TASKS) - set(manager.all_tasks))


class Test{camel}Scoring(unittest.TestCase):
    @mock.patch.dict(os.environ, {{"LMMS_AGENTIC_JUDGE_CACHE": "off"}})
    def test_process_results_scores_known_replies_as_the_reference_implementation(self):
        for key in {no_judge!r}:
            os.environ.pop(key, None)
        for reply, expected in zip(GOLDEN["replies"], GOLDEN["expected"]):
            got = json.loads(json.dumps(utils.process_results(GOLDEN["doc"], [reply]), default=str))
            self.assertEqual(got, expected, reply)


if __name__ == "__main__":
    unittest.main()
'''

LM_EVAL = '''"""Tests of the {title} tasks ({benchmark}); generated by `python -m lmms_agentic export`."""

import json
from pathlib import Path

import pytest

from lm_eval.tasks import TaskManager
from lm_eval.tasks.{benchmark} import utils


GOLDEN = json.loads({golden!r})
TASKS = {names!r}


def test_every_task_and_group_is_found():
    manager = TaskManager(include_path=str(Path(utils.__file__).parent), include_defaults=False)
    assert not set(TASKS) - set(manager.all_tasks)


@pytest.mark.parametrize("index", range(len(GOLDEN["replies"])))
def test_process_results_scores_known_replies_as_the_reference_implementation(index, monkeypatch):
    for key in {no_judge!r}:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LMMS_AGENTIC_JUDGE_CACHE", "off")
    doc = utils.Doc(GOLDEN["doc"], utils.TASKS[GOLDEN["task"]])
    got = utils.process_results(doc, [GOLDEN["replies"][index]])
    assert json.loads(json.dumps(got, default=str)) == GOLDEN["expected"][index]
'''


def test_source(benchmark: Benchmark, harness: str, tasks: Sequence[ExportedTask]) -> str:
    """The test file's text (formatted afterwards with the harness's formatter)."""
    template = LMMS_EVAL if harness == "lmms-eval" else LM_EVAL
    camel = "".join(part.capitalize() for part in benchmark.name.split("_"))
    return template.format(title=benchmark.title, benchmark=benchmark.name, camel=camel,
                           golden=json.dumps(golden(tasks, harness == "lm-eval"), sort_keys=True),
                           names=[t.source.name for t in tasks], no_judge=list(NO_JUDGE))
