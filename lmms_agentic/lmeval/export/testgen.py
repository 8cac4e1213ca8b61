"""The test file of a core-based export (`test/eval/test_<b>.py`, `tests/test_<b>.py`), in the harness's style
(lmms-eval: unittest classes; lm-eval: pytest functions).

It checks that every exported task and group is registered, and that `process_results` gives, for a few known
replies on one real document of the bundled mini split, the metric values the plugin gives (computed here, when
exporting, with the plugin's judge fallback off). Values are compared metric by metric: a percentage view by its
`score`, the record the first metric carries by its `score`, any other view as it is; a metric lm-eval's hooks leave
out (the row does not count for it) compares as None, which is what the plugin gives. The golden data is a readable
Python literal (the document's text fields only: scoring needs no image).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pprint
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from lmms_agentic.adapters.benchmarks import Benchmark
from lmms_agentic.lmeval.export.layout import ExportedTask
from lmms_agentic.lmeval.export.upstream import PLUGIN_ONLY_METRICS
from lmms_agentic.lmeval.task_functions import placeholder, resolve

PLUGIN_ONLY_COLUMNS = ("media_root",)
"""Document fields only the plugin's documents carry (where it found the media): left out of the golden document."""


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
def plugin_environment(benchmark: Benchmark) -> Iterator[None]:
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


def comparable(values: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, Any]:
    """The values of `metrics` as the test compares them (a dict carrying `score` -> the score)."""
    out: dict[str, Any] = {}
    for name in metrics:
        value = values.get(name)
        out[name] = value["score"] if isinstance(value, Mapping) and "score" in value else value
    return out


def _unbranded(value: Any) -> Any:
    """The mini split's strings without the exporting project's name (its rows say where they come from)."""
    if isinstance(value, str):
        return re.sub(r"lmms[-_]agentic\s*", "", value, flags=re.IGNORECASE)
    if isinstance(value, list):
        return [_unbranded(item) for item in value]
    if isinstance(value, dict):
        return {key: _unbranded(item) for key, item in value.items()}
    return value


def _is_record(value: Any) -> bool:
    """A per-sample record without a score of its own (Agent-X's, carrying the plugin's extra fields): compared
    through the other metrics' views of it, not as a whole."""
    return isinstance(value, Mapping) and "score" not in value and "id" in value


def golden(tasks: Sequence[ExportedTask]) -> dict[str, Any]:
    """The leaf task with the most metrics, one of its documents, the benchmark's example replies and the
    plugin's values for each."""
    leaves = sorted((t for t in tasks if not t.source.is_group), key=lambda t: -len(t.source.metric_names()))
    if not leaves:
        raise ValueError("no exported task to build the golden test from")
    task = leaves[0]
    source = task.source
    benchmark = source.benchmark
    metrics = [m for m in source.metric_names() if m not in PLUGIN_ONLY_METRICS]
    with plugin_environment(benchmark):
        docs = resolve(source.hook("process_docs"))(placeholder(source.placeholder(benchmark.folder.parent)))
        row = dict(docs.remove_columns(_media_columns(docs))[0])
        replies = benchmark.package().example_replies(row)
        scorer = resolve(source.hook("process_results"))
        expected = [comparable(_plain(scorer(row, [reply])), metrics) for reply in replies]
    records = {name for values in expected for name, value in values.items() if _is_record(value)}
    expected = [{name: value for name, value in values.items() if name not in records} for values in expected]
    return {"task": source.name, "process_results": source.hook("process_results").rpartition(".")[2],
            "doc": _unbranded(_plain({k: v for k, v in row.items() if k not in PLUGIN_ONLY_COLUMNS})),
            "replies": replies, "expected": expected}


LMMS_EVAL = '''"""Tests of the {title} tasks: registration, and the scores of known replies."""

import unittest
from pathlib import Path

from lmms_eval.tasks import TaskManager
from lmms_eval.tasks.{benchmark} import utils

GOLDEN = {golden}
TASKS = {names}


def comparable(values):
    """A percentage view (or the record) by its score, any other value as it is."""
    return {{name: v["score"] if isinstance(v, dict) and "score" in v else v for name, v in values.items()}}


class Test{camel}(unittest.TestCase):
    def test_every_task_and_group_is_found(self):
        manager = TaskManager(include_path=str(Path(utils.__file__).parent), include_defaults=False)
        self.assertFalse(set(TASKS) - set(manager.all_tasks))

    def test_process_results_scores_known_replies(self):
        process_results = getattr(utils, GOLDEN["process_results"])
        for reply, expected in zip(GOLDEN["replies"], GOLDEN["expected"]):
            got = comparable(process_results(GOLDEN["doc"], [reply]))
            self.assertEqual({{name: got.get(name) for name in expected}}, expected, reply)


if __name__ == "__main__":
    unittest.main()
'''


LM_EVAL = '''"""Tests of the {title} tasks: registration, and the scores of known replies."""

from pathlib import Path

import pytest

from lm_eval.tasks import TaskManager
from lm_eval.tasks.{benchmark} import utils


GOLDEN = {golden}
TASKS = {names}


def comparable(values):
    """A percentage view (or the record) by its score, any other value as it is."""
    return {{name: v["score"] if isinstance(v, dict) and "score" in v else v for name, v in values.items()}}


def test_every_task_and_group_is_found():
    manager = TaskManager(include_path=str(Path(utils.__file__).parent), include_defaults=False)
    assert not set(TASKS) - set(manager.all_tasks)


@pytest.mark.parametrize("index", range(len(GOLDEN["replies"])))
def test_process_results_scores_known_replies(index):
    process_results = getattr(utils, GOLDEN["process_results"])
    got = comparable(process_results(GOLDEN["doc"], [GOLDEN["replies"][index]]))
    expected = GOLDEN["expected"][index]
    assert {{name: got.get(name) for name in expected}} == expected
'''


def test_source(title: str, benchmark: str, tasks: Sequence[ExportedTask], harness: str = "lmms-eval") -> str:
    camel = "".join(part.capitalize() for part in benchmark.split("_"))
    return (LM_EVAL if harness == "lm-eval" else LMMS_EVAL).format(title=title, benchmark=benchmark, camel=camel,
                            golden=pprint.pformat(golden(tasks), width=200, sort_dicts=True),
                            names=pprint.pformat([t.source.name for t in tasks], width=200))
