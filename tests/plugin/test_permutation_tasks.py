"""Permutation tasks: generated files in sync, prefix-cache-friendly prompts, decode once, records."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import datasets
import pytest

import lmms_agentic
from lmms_agentic.adapters import media
from lmms_agentic.devtools.permutations import load_task, render_all

TASKS = Path(lmms_agentic.tasks_dir())


def test_generated_permutation_tasks_match_the_generator() -> None:
    """Run `python -m lmms_agentic permutations` after adding or changing an MCQ task."""
    rendered = render_all()
    committed = {p.relative_to(TASKS) for p in TASKS.glob("*/permutations/*") if p.is_file()}
    assert committed == set(rendered), "stale or missing files: run `python -m lmms_agentic permutations`"
    for path, text in rendered.items():
        assert (TASKS / path).read_text() == text, f"{path} differs from the generator's output"


def test_generated_task_files_are_short() -> None:
    """The shared metric list lives in one template per benchmark and mode; a task file is a few lines."""
    for path in TASKS.glob("*/permutations/*.yaml"):
        if "group:" not in path.read_text():
            assert len(path.read_text().splitlines()) <= 4, path


def test_every_mcq_task_and_group_has_both_variants() -> None:
    names = {p.stem for p in TASKS.glob("*/permutations/*.yaml")}
    for base in ("robovista", "robovista_cot", "robovista_icl", "agentvqa", "agentvqa_web_agents_nohistory",
                 "agentvqa_coords_norm1000_yx"):
        assert {f"{base}_circular", f"{base}_perm5"} <= names


def _load(task: str) -> tuple[dict[str, Any], datasets.Dataset]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LMMS_AGENTIC_DATA", "mini")
        return load_task(task)


def _prefix(messages: list[dict[str, Any]]) -> list[Any]:
    """Everything before the option lines, with images as raw pixel bytes."""
    parts: list[Any] = []
    for message in messages:
        parts.append(message["role"])
        for content in message["content"]:
            if content["type"] == "text":
                text = content["text"]
                parts.append(text.split("Options:")[0] if "Options:" in text else text)
                if "Options:" in text:
                    return parts
            elif isinstance(content["url"], str):
                parts.append(content["url"])
            else:
                parts.append(content["url"].tobytes())
    return parts


@pytest.mark.parametrize("task", ["robovista_cot_circular", "robovista_icl_seed0_perm5",
                                  "agentvqa_web_agents_perm5", "agentvqa_egocentric_videos_circular"])
def test_everything_before_the_options_is_identical_across_permutations(task: str) -> None:
    """Servers with prefix caching (vLLM, SGLang) then reuse the system prompt, media and question."""
    config, docs = _load(task)
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    prefixes: dict[str, list[list[Any]]] = defaultdict(list)
    texts: dict[str, set[str]] = defaultdict(set)
    for doc in docs:
        messages = config["doc_to_messages"](doc, kwargs)
        prefixes[doc["group_id"]].append(_prefix(messages))
        texts[doc["group_id"]].add(messages[-1]["content"][-1]["text"])
    for group, seen in prefixes.items():
        assert all(p == seen[0] for p in seen), group
    assert any(len(t) > 1 for t in texts.values()), "the option order must actually change"


def test_shared_media_of_a_group_are_decoded_once() -> None:
    config, docs = _load("robovista_cot_circular")
    kwargs = config["lmms_eval_specific_kwargs"]["default"]
    media.configure_image_cache(enabled=True)
    for doc in docs:
        config["doc_to_visual"](doc, kwargs)
    stats = media.image_cache_stats()
    assert stats["misses"] == len(set(docs["group_id"])) == 21
    assert stats["hits"] == len(docs) - 21


def test_permuted_record_maps_the_choice_back_to_the_original_option() -> None:
    config, docs = _load("agentvqa_games_circular")
    doc = next(d for d in docs if d["group_id"] == "gameqa_0001" and d["perm_index"] == 1)
    record = config["process_results"](doc, ["A"])["perm_mean_acc"]  # the first metric carries the record
    assert record["permutation"] == [1, 2, 3, 0] and record["chosen"] == 1  # "A" now shows original option B
    assert record["gold_original"] == 1 and record["correct"] is True and record["group_id"] == "gameqa_0001"
    names = {m["metric"] for m in config["metric_list"]}
    assert set(config["process_results"](doc, ["A"])) == names - {"orig_acc"}  # order 1: no orig_acc value
    original = next(d for d in docs if d["group_id"] == "gameqa_0001" and d["perm_index"] == 0)
    assert set(config["process_results"](original, ["A"])) == names
