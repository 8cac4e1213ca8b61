"""Option permutations at document-load time: each question becomes k rows sharing a group id.

A permutation task is a base MCQ task whose lmms-eval placeholder dataset is a settings row
(`{"permutation": "circular", "permutation_seed": 0}`, generated next to the task YAMLs by
`python -m lmms_agentic permutations`). Every MCQ benchmark decorates its `process_docs` hooks with `permutable`,
which expands the benchmark's documents when that row asks for it; prompts, visuals and extraction stay the base
task's, and `adapters.samples.core_results_function` adds the permutation fields to each row's record.

Modes (`parse_mode`):
- `circular` — every rotation of the shown options (MMBench CircularEval); rotation 0 is the original order.
- `perm<k>`  — k seeded random permutations; the identity is always permutation 0, the other k-1 are distinct
  non-identity orders drawn with `random.Random(f"{seed}|{group_id}")` (the same on every machine and process).
  When fewer than k orders exist, all of them are used.
- `random<k>` — k distinct seeded random permutations with no order assumed: the identity is neither forced nor
  excluded (AgentVQA's App. F study: "5 distinct seeded random permutations"; the unpermuted order is the base
  task's own run). Drawn with `random.Random(f"{seed}|random|{group_id}")`. Order 0 is then the first random order,
  so there `orig_acc` is the accuracy under that order and `flip_rate` compares with it (see permutation_metrics).

A permutation is a tuple `perm` over the *shown* option slots: the option shown at slot i is the one that was at
slot `perm[i]` originally. Empty option slots (RoboVista's missing choices) stay where they are and are never
shown. The gold index and letter are remapped, per-option metadata (the keys listed in the document's
`option_fields` metadata, e.g. AgentVQA's `option_coordinates`) is permuted alongside, and every row records
`group_id`, `perm_mode`, `perm_seed`, `perm_index` and `permutation`.

`expand` never copies media: each permutation block is the original table with its text columns replaced, and the
blocks are concatenated without touching the image column, so k variants cost no extra image storage.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import datasets

from lmms_agentic.adapters.core.schema import LETTERS

Permutation = tuple[int, ...]
DEFAULT_SEED = 0
CHANGED = ("id", "options", "gold_index", "answer", "metadata_json")


def parse_mode(mode: str) -> tuple[str, int | None]:
    """`circular` -> ("circular", None); `perm5` -> ("perm", 5); `random5` -> ("random", 5)."""
    if mode == "circular":
        return "circular", None
    match = re.fullmatch(r"(perm|random)(\d+)", mode)
    if match and int(match.group(2)) >= 2:
        return match.group(1), int(match.group(2))
    raise ValueError(f"unknown permutation mode {mode!r}: use 'circular', 'perm<k>' or 'random<k>' with k >= 2")


def slot_permutations(n_shown: int, mode: str, group_id: str, seed: int = DEFAULT_SEED) -> list[Permutation]:
    """The orders of `n_shown` options for one question; the identity comes first (not in `random<k>`)."""
    kind, k = parse_mode(mode)
    identity = tuple(range(n_shown))
    if kind == "circular":
        return [tuple((i + r) % n_shown for i in range(n_shown)) for r in range(n_shown)]
    assert k is not None
    if kind == "random":
        draw = random.Random(f"{seed}|random|{group_id}")
        if math.factorial(n_shown) <= k:
            every = list(itertools.permutations(range(n_shown)))
            draw.shuffle(every)
            return every
        return _distinct_orders(draw, n_shown, k, [])
    if math.factorial(n_shown) <= k:
        return [identity, *(p for p in itertools.permutations(range(n_shown)) if p != identity)]
    return _distinct_orders(random.Random(f"{seed}|{group_id}"), n_shown, k, [identity])


def _distinct_orders(rng: random.Random, n_shown: int, k: int, chosen: list[Permutation]) -> list[Permutation]:
    """`chosen` extended with shuffles of `range(n_shown)` drawn from `rng` (repeats redrawn) up to `k` orders."""
    while len(chosen) < k:
        order = list(range(n_shown))
        rng.shuffle(order)
        if tuple(order) not in chosen:
            chosen.append(tuple(order))
    return chosen


def full_permutation(options: Sequence[str], slot_perm: Permutation) -> Permutation:
    """Lift a permutation of the shown slots to all slots (empty slots map to themselves)."""
    shown = [i for i, text in enumerate(options) if text]
    mapping = list(range(len(options)))
    for new_slot, old_slot in zip(shown, (shown[j] for j in slot_perm), strict=True):
        mapping[new_slot] = old_slot
    return tuple(mapping)


def apply(row: dict[str, Any], perm: Permutation) -> dict[str, Any]:
    """The changed canonical columns of `row` under the full permutation `perm`."""
    options = [row["options"][perm[i]] for i in range(len(perm))]
    gold_index = perm.index(row["gold_index"])
    metadata = json.loads(row["metadata_json"])
    for key in metadata.get("option_fields", []):
        values = metadata.get(key)
        if isinstance(values, list) and len(values) == len(perm):
            metadata[key] = [values[perm[i]] for i in range(len(perm))]
    return {"options": options, "gold_index": gold_index, "answer": LETTERS[gold_index],
            "metadata_json": json.dumps(metadata, sort_keys=True, ensure_ascii=False)}


def expand(docs: datasets.Dataset, mode: str, seed: int = DEFAULT_SEED) -> datasets.Dataset:
    """Every row of canonical `docs` under every permutation of `mode`, question by question: a question's rows
    (its order 0, 1, ...) are adjacent, so that the decode-once media caches, which hold a few questions, serve the
    other orders from the first one's decode whatever the cache size (lmms-eval runs simple models in document
    order; `--limit N` then runs whole questions)."""
    base = docs.flatten_indices() if docs._indices is not None else docs
    rows = base.select_columns(list(CHANGED)).to_list()
    plans = [[full_permutation(r["options"], p)
              for p in slot_permutations(sum(bool(o) for o in r["options"]), mode, r["id"], seed)] for r in rows]
    blocks = []
    positions: list[tuple[int, int, int]] = []  # (question, order, row in the concatenated blocks)
    for j in range(max(len(plan) for plan in plans)):
        # a question with fewer orders than j + 1 (e.g. 2 options under perm5) has no row in block j
        picked = [plan[min(j, len(plan) - 1)] for plan in plans]
        changed = [apply(row, perm) for row, perm in zip(rows, picked, strict=True)]
        block = base.remove_columns(list(CHANGED))
        columns: dict[str, list[Any]] = {
            "id": [f"{row['id']}~{mode}{j}" for row in rows],
            "group_id": [row["id"] for row in rows],
            "perm_mode": [mode] * len(rows),
            "perm_seed": [seed] * len(rows),
            "perm_index": [j] * len(rows),
            "permutation": [list(p) for p in picked],
            **{key: [c[key] for c in changed] for key in ("options", "gold_index", "answer", "metadata_json")},
        }
        for name, values in columns.items():
            block = block.add_column(name, values)
        members = [i for i, plan in enumerate(plans) if len(plan) > j]
        positions += [(question, j, len(positions) + k) for k, question in enumerate(members)]
        blocks.append(block if len(members) == len(rows) else block.select(members))
    return datasets.concatenate_datasets(blocks).select([row for _, _, row in sorted(positions)]).flatten_indices()


def permutable(process_docs: Callable[[datasets.Dataset], datasets.Dataset]
               ) -> Callable[[datasets.Dataset], datasets.Dataset]:
    """Decorate a benchmark's `process_docs`: when the task's placeholder row names a permutation mode (a
    permutation task), expand the documents under it; otherwise return them unchanged."""
    @functools.wraps(process_docs)
    def wrapper(placeholder: datasets.Dataset) -> datasets.Dataset:
        docs = process_docs(placeholder)
        if placeholder is None or "permutation" not in placeholder.column_names or not placeholder[0]["permutation"]:
            return docs
        settings = placeholder[0]
        return expand(docs, str(settings["permutation"]), int(settings.get("permutation_seed") or DEFAULT_SEED))

    return wrapper


def row_fields(doc: Mapping[str, Any], pred: str | None) -> dict[str, Any]:
    """The permutation fields of one expanded row's sample record (`chosen`: the original option `pred` names)."""
    order = list(doc["permutation"])
    return {"group_id": doc["group_id"], "perm_mode": doc["perm_mode"], "perm_seed": doc["perm_seed"],
            "perm_index": doc["perm_index"], "permutation": order, "chosen": original_choice(pred, order),
            "gold_original": order[doc["gold_index"]]}


def original_choice(letter: str | None, permutation: Sequence[int]) -> int | None:
    """The original option index a predicted letter refers to under `permutation` (None stays None)."""
    if letter is None:
        return None
    index = LETTERS.index(letter)
    return permutation[index] if index < len(permutation) else None
