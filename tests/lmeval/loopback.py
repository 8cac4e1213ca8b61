"""An offline model for both harnesses: a loopback OpenAI-compatible server that answers from the request.

Built on `lmms_agentic.judges.testing.ScriptedJudgeServer`. What a request is made of, as the model sees it, is
reduced to a key that does not depend on the harness: the system text, the user text with lm-eval's `<image>`
placeholders removed (lmms-eval sends text and images as separate parts, lm-eval one text with placeholders and
the images first), and a SHA-256 of every image's decoded pixels, in order. The reply is a function of that key:

- multiple choice (the text has an "Options:" block): the server knows each mini-split question's gold option text
  (`ReplyBook`), finds the letter it has in this prompt (options may be permuted; coordinate variants re-render
  the text, then the canonical letter is used) and answers, by a hash of the key, one of: the gold letter, a wrong
  letter, a sentence whose article "A" only the runner's lenient parser reads as an answer, no answer, or
  a reasoning block followed by "Answer: X" and a confidence - so accuracy, the two RoboVista parsers, no-answer
  rates and calibration are all exercised;
- Agent-X (the text has "Query: "): the ground-truth trace as fenced JSON, the same trace with a wrong final answer,
  or prose that does not parse;
- the judge server answers `{"Score": s, ...}` with s in 0.0-1.0 from a hash of the prompt.

`requests(server)` gives the keys of every call received, to check that every image reached the server;
`turns(server)` gives each call's raw layout, by key (`Turn`: the text pieces and images in the order they were
sent, `<image>` placeholders kept), to compare what two harnesses sent item by item.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from lmms_agentic.judges.fencing import DATA_NOTICE
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply

IMAGE_TOKEN = "<image>"
OPTION = re.compile(r"^([A-J])\. (.*)$")


@dataclass(frozen=True)
class RequestKey:
    system: str
    text: str
    images: tuple[str, ...]


def _pixels(url: str) -> str:
    data = base64.b64decode(url.split(",", 1)[1])
    image = Image.open(io.BytesIO(data)).convert("RGB")
    return hashlib.sha256(f"{image.size}".encode() + image.tobytes()).hexdigest()[:16]


def request_key(body: Mapping[str, Any]) -> RequestKey:
    system: list[str] = []
    text: list[str] = []
    images: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        for part in parts:
            if part.get("type") == "text":
                (system if message.get("role") == "system" else text).append(part["text"])
            elif part.get("type") == "image_url":
                images.append(_pixels(part["image_url"]["url"]))
    return RequestKey("".join(system), "".join(text).replace(IMAGE_TOKEN, ""), tuple(images))


@dataclass(frozen=True)
class Turn:
    """A request as sent: the system text and the user turn's parts in order, ("text", text) with adjacent text
    parts joined and nothing removed, or ("image", pixel hash)."""

    system: str
    parts: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        return "".join(value for kind, value in self.parts if kind == "text")

    @property
    def images(self) -> tuple[str, ...]:
        return tuple(value for kind, value in self.parts if kind == "image")

    def labels(self) -> list[str]:
        """For each image, the last line of text sent right before it ("" when an image or nothing precedes)."""
        found, before = [], ""
        for kind, value in self.parts:
            if kind == "image":
                found.append(before.rstrip("\n").rsplit("\n", 1)[-1])
                before = ""
            else:
                before = value
        return found


def turn(body: Mapping[str, Any]) -> Turn:
    system: list[str] = []
    parts: list[tuple[str, str]] = []
    for message in body.get("messages", []):
        content = message.get("content")
        for part in [{"type": "text", "text": content}] if isinstance(content, str) else list(content or []):
            if message.get("role") == "system":
                system.append(part.get("text", ""))
            elif part.get("type") == "image_url":
                parts.append(("image", _pixels(part["image_url"]["url"])))
            elif parts and parts[-1][0] == "text":
                parts[-1] = ("text", parts[-1][1] + part["text"])
            else:
                parts.append(("text", part["text"]))
    return Turn("".join(system), tuple(parts))


def turns(server: ScriptedJudgeServer) -> dict[RequestKey, Counter[Turn]]:
    """Every request's raw layout, grouped by its harness-independent key."""
    found: dict[RequestKey, Counter[Turn]] = {}
    for call in server.calls:
        found.setdefault(request_key(call.body), Counter())[turn(call.body)] += 1
    return found


def requests(server: ScriptedJudgeServer) -> Counter[RequestKey]:
    """Every request the server received, by key (a multiset)."""
    return Counter(request_key(call.body) for call in server.calls)


def _hash(key: RequestKey) -> int:
    return int(hashlib.sha256(json.dumps([key.system, key.text, key.images]).encode()).hexdigest(), 16)


@dataclass
class ReplyBook:
    """What the server knows about the mini splits: gold option texts and letters, Agent-X ground-truth traces."""

    gold: dict[str, tuple[str, str]] = field(default_factory=dict)
    """question text -> (gold option text, gold letter in the canonical order)."""
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Agent-X query -> ground-truth trace (the model-output format)."""

    def add_mcq(self, question: str, options: list[str], answer: str) -> None:
        self.gold[question] = (options[ord(answer) - ord("A")], answer)

    def add_agentx(self, query: str, steps: list[Any], final_answer: Any) -> None:
        self.traces[query] = {"query": query, "final_answer": final_answer, "reasoning_steps": [
            {"step": s.get("step"), "task": s.get("task"), "tool_used": s.get("tool"), "tool_output": s.get("output"),
             "thought": s.get("thought")} for s in steps if isinstance(s, dict)]}

    def _mcq(self, key: RequestKey, h: int) -> str:
        block = key.text.rsplit("Options:", 1)[1]
        options = {m.group(1): m.group(2).strip() for line in block.splitlines() if (m := OPTION.match(line.strip()))}
        letters = sorted(options)
        found = [(key.text.rfind(question), question) for question in self.gold if question in key.text]
        gold = None
        if found:
            text, canonical = self.gold[max(found)[1]]
            gold = next((letter for letter, shown in options.items() if shown == text), canonical)
        gold = gold if gold in options else letters[h % len(letters)]
        wrong = next(letter for letter in letters[(h >> 8) % len(letters):] + letters if letter != gold)
        # the runner's parser reads the article "A" as the answer, the strict extractor does not
        trap = "A robot arm holds the object; the scene is ambiguous." if gold == "A" else \
            f"I choose option {gold}. A is a distractor."
        replies = [gold, wrong, f"The answer is {gold}.\nConfidence: {60 + h % 40}%", trap,
                   "I cannot tell from these images.",
                   f"<think>Option {wrong} is tempting.</think>\nAnswer: {gold}\nConfidence: {h % 100}%"]
        return replies[h % len(replies)]

    def _agentx(self, key: RequestKey, h: int) -> str:
        query = key.text.rsplit("Query: ", 1)[1].strip()
        trace = self.traces.get(query)
        if trace is None or h % 3 == 2:
            return "I would read the image with OCR and then answer: a cat."
        if h % 3 == 1:
            trace = {**trace, "final_answer": {"value": "something else", "justification": "a guess"}}
        return "Here is my plan.\n```json\n" + json.dumps(trace) + "\n```"

    def reply(self, call: ScriptedCall) -> ScriptedReply:
        key = request_key(call.body)
        h = _hash(key)
        if "Options:" in key.text:
            return ScriptedReply(self._mcq(key, h))
        if "Query: " in key.text:
            return ScriptedReply(self._agentx(key, h))
        return ScriptedReply(f"I cannot answer this ({len(key.images)} images).")


_FENCE_LINE = re.compile(r"<<<DATA [A-Za-z0-9_]+ [0-9a-f]{16} (?:BEGIN|END)>>>")


def judged_content(prompt: str) -> str:
    """What a judge prompt asks about, without the plugin's data fences and their notice (an exported task sends
    the same judge prompt unfenced), whitespace collapsed."""
    return " ".join(_FENCE_LINE.sub(" ", prompt.replace(DATA_NOTICE, " ")).split())


def judge_reply(call: ScriptedCall) -> ScriptedReply:
    h = int(hashlib.sha256(judged_content(call.prompt).encode()).hexdigest(), 16)
    return ScriptedReply(json.dumps({"Score": f"{h % 11 / 10:.1f}", "Justification": "scripted"}))


def model_server(book: ReplyBook) -> ScriptedJudgeServer:
    return ScriptedJudgeServer(book.reply, model="loopback-vlm")


def judge_server() -> ScriptedJudgeServer:
    return ScriptedJudgeServer(judge_reply, model="loopback-judge-2025-01-01")
