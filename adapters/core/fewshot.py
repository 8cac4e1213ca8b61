"""Deterministic in-context example selection.

For each item, one example is drawn from the other items that share its key (e.g. RoboVista's
(task, domain)), never the item itself. The draw depends only on (seed, item id) and on the set of
candidate ids, so it is identical on every machine, rank and process order. Items whose key has no
other member get `None` (the caller falls back to zero-shot and counts them).
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence


def choose_examples(ids: Sequence[str], keys: Sequence[Hashable], seed: int) -> list[int | None]:
    """Index of the in-context example for every item, or None when its key has no other member."""
    if len(ids) != len(keys):
        raise ValueError(f"{len(ids)} ids but {len(keys)} keys")
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be unique for a reproducible example choice")
    members: dict[Hashable, list[int]] = {}
    for index, key in enumerate(keys):
        members.setdefault(key, []).append(index)
    chosen: list[int | None] = []
    for index, key in enumerate(keys):
        candidates = sorted((i for i in members[key] if i != index), key=lambda i: ids[i])
        if not candidates:
            chosen.append(None)
            continue
        rng = random.Random(f"{seed}|{ids[index]}")
        chosen.append(candidates[rng.randrange(len(candidates))])
    return chosen
