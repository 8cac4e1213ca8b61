"""`agentic_scripted`: a deterministic offline MCQ responder that shards like a real backend.

lmms-eval's `dummy` model ignores data parallelism (every process evaluates every document) and always gives
the same reply, so it cannot show that metrics survive sharding. This model:
- takes its rank and world size from `accelerate` (gloo on CPU), so `accelerate launch --num_processes 2 --cpu`
  splits the documents between processes exactly as a GPU backend would;
- answers deterministically: `policy=constant` replies `letter`; `policy=hash` (default) replies the letter of
  `letters` picked by a SHA-256 of the prompt text, so the same document gets the same reply on any rank while
  option permutations (which change the prompt) get different ones;
- `policy=replay,replay=/path/replies.json` answers from a JSON object mapping the document's own `id` (the
  project's stable id, not lmms-eval's row index) to a reply — for scripted end-to-end checks of free-form tasks
  such as Agent-X, and for re-scoring saved replies; an id without a reply gets "" (scored as no output);
- `policy=script,script=/path/script.json` plays multi-turn episodes (`generate_until_agentic` tasks such as
  `agentx_tools`): a JSON object mapping the document's `id` to a list of replies, the n-th request for that
  document gets the n-th reply (the last one again once the list is used up, so a list of one tool call never
  finishes); an id without a script gets "";
- calls the task's `doc_to_visual` for every request, so media loading and decoding are exercised.

Use: `lmms-eval --model agentic_scripted --model_args policy=hash,letters=ABCD ...`. It is registered through
lmms-agentic's `lmms_eval.models` entry point. It is a plumbing check, never a score.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from accelerate import Accelerator
from lmms_eval.api.instance import Instance
from lmms_eval.api.model import lmms


class ScriptedChoice(lmms):  # type: ignore[misc]  # lmms-eval is untyped
    is_simple = True

    def __init__(self, policy: str = "hash", letter: str = "A", letters: str = "ABCD", touch_visuals: bool = True,
                 replay: str = "", script: str = "", **kwargs: Any) -> None:
        super().__init__()
        if policy not in ("hash", "constant", "replay", "script"):
            raise ValueError(f"policy must be 'hash', 'constant', 'replay' or 'script', got {policy!r}")
        if policy == "replay" and not replay:
            raise ValueError("policy=replay needs replay=/path/to/replies.json (a JSON object: document id -> reply)")
        if policy == "script" and not script:
            raise ValueError("policy=script needs script=/path/to/script.json (a JSON object: document id -> "
                             "list of replies)")
        self.script: dict[str, list[str]] = json.loads(Path(script).read_text()) if script else {}
        self.turns: dict[tuple[str, str], int] = {}
        self.policy, self.letter, self.letters = policy, str(letter), str(letters)
        self.replies: dict[str, str] = json.loads(Path(replay).read_text()) if replay else {}
        self.touch_visuals = str(touch_visuals).lower() not in ("0", "false", "no")
        self.accelerator = Accelerator()
        self._rank = self.accelerator.process_index
        self._world_size = self.accelerator.num_processes
        self._device = self.accelerator.device

    @property
    def device(self) -> Any:
        return self._device

    def reply(self, context: str, doc: Any = None, task: str = "") -> str:
        if self.policy == "constant":
            return self.letter
        if self.policy == "replay":
            return self.replies.get(str(doc["id"]) if doc is not None else "", "")
        if self.policy == "script":
            key = str(doc["id"]) if doc is not None else ""
            replies = self.script.get(key) or [""]
            turn = self.turns.get((task, key), 0)
            self.turns[(task, key)] = turn + 1
            return str(replies[min(turn, len(replies) - 1)])
        digest = int(hashlib.sha256(context.encode()).hexdigest(), 16)
        return self.letters[digest % len(self.letters)]

    def generate_until(self, requests: list[Instance]) -> list[str]:
        replies = []
        for request in requests:
            context, _gen_kwargs, doc_to_visual, doc_id, task, split = request.args
            doc = self.task_dict[task][split][doc_id]
            if self.touch_visuals:
                doc_to_visual(doc)
            replies.append(self.reply(context, doc, task))
        print(f"agentic_scripted rank {self.rank}/{self.world_size}: answered {len(replies)} requests",
              file=sys.stderr, flush=True)
        return replies

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        raise NotImplementedError("agentic_scripted only answers generate_until requests")

    def generate_until_multi_round(self, requests: list[Instance]) -> list[str]:
        raise NotImplementedError("agentic_scripted only answers generate_until requests")
