"""lmms-eval's OpenAI-compatible chat backend, as API presets run it, against a loopback server that checks every
request and answers from it.

`reproduce.run` evaluates an API preset (pointed at the loopback server) on RoboVista's mini split through
lmms-eval's Python API. The server checks each request against what the task must send: every image of the item,
in order, as a PNG data URL with the same pixels as the task's preprocessed image; the system prompt; temperature 0
and the 10,240-token budget (RoboVista's protocol); the model id; the key in the Authorization header. It answers
with a letter derived from the question, and the test checks that answer came back into lmms-eval's samples and
that the key appears in no file of the run. A preset with a reasoning effort sends it with every request.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from lmms_agentic import presets
from lmms_agentic.adapters.samples import read_record
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply

KEY = "sk-loopback-secret-0123456789"
REPO = Path(__file__).resolve().parents[2]


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: None)


def _robovista_expectations() -> dict[str, list[tuple[str, list[Any]]]]:
    """User text -> (system prompt, preprocessed images in order) of every mini RoboVista item with that text
    (the synthetic mini items share question templates, so a text can belong to several items)."""
    from lmms_agentic.tasks.robovista import hooks

    template = yaml.load((REPO / "tasks/robovista/_default_template_yaml").read_text(), Loader=_Loader)
    kwargs = template["lmms_eval_specific_kwargs"]["default"]
    expected = {}
    for doc in hooks.all_docs():
        built = hooks.HOOKS.prompt(doc, kwargs)
        expected.setdefault("".join(built.texts()), []).append((built.system, built.media()))
    return expected


def _letter(text: str) -> str:
    return "ABCDE"[hashlib.sha256(text.encode()).digest()[0] % 5]


class Checker:
    """The server's script: record what is wrong with each request, answer "Answer: <letter>"."""

    def __init__(self, expected: dict[str, list[tuple[str, list[Any]]]] | None, model: str, checks: dict[str, Any]):
        self.expected, self.model, self.checks, self.problems = expected, model, checks, []  # type: list[str]
        self.replies: dict[str, str] = {}

    @staticmethod
    def _mismatch(system: Any, urls: list[str], want_system: str, want_images: list[Any]) -> str:
        """What differs between a request and one item's expected turn ("" when nothing does)."""
        from PIL import Image

        if system != {"role": "system", "content": [{"type": "text", "text": want_system}]}:
            return f"system turn {system!r}"
        if len(urls) != len(want_images) or not urls:
            return f"{len(urls)} images, expected {len(want_images)}"
        for url, want in zip(urls, want_images, strict=True):
            if not url.startswith("data:image/png;base64,"):
                return f"image url {url[:40]!r}"
            got = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
            if (got.size, got.convert("RGB").tobytes()) != (want.size, want.convert("RGB").tobytes()):
                return f"image pixels or order differ from the task's ({got.size} vs {want.size})"
        return ""

    def __call__(self, call: ScriptedCall) -> ScriptedReply:
        body, problems = call.body, self.problems
        headers = {name.lower(): value for name, value in call.headers.items()}
        if headers.get("authorization") != f"Bearer {KEY}":
            problems.append(f"authorization header {headers.get('authorization')!r}")
        if body.get("model") != self.model:
            problems.append(f"model {body.get('model')!r}")
        for key, value in self.checks.items():
            if body.get(key, "absent") != value:
                problems.append(f"{key} = {body.get(key, 'absent')!r}, expected {value!r}")
        system, user = body["messages"][0], body["messages"][-1]
        texts = "".join(part["text"] for part in user["content"] if part["type"] == "text")
        images = [part["image_url"]["url"] for part in user["content"] if part["type"] == "image_url"]
        if self.expected is not None:
            candidates = [self._mismatch(system, images, *want) for want in self.expected.get(texts, [])]
            if not candidates:
                problems.append(f"no item has the user text {texts[:60]!r}")
            elif all(candidates):
                problems.append(f"{texts[:40]!r}: {candidates[0]}")
        reply = f"Answer: {_letter(texts)}"
        self.replies[texts] = reply
        return ScriptedReply(reply)


def _preset(name: str, base_url: str) -> presets.Preset:
    preset = presets.get(name)
    api = preset.backends["api"]
    loopback = dataclasses.replace(api, args={**api.args, "base_url": base_url, "max_retries": 1})
    return dataclasses.replace(preset, backends={"api": loopback})


@pytest.fixture
def api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMS_AGENTIC_DATA", "mini")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)


def test_images_prompt_and_decoding_reach_the_api(api_env: None, tmp_path: Path) -> None:
    from lmms_agentic.reproduce import command as reproduce

    checker = Checker(_robovista_expectations(), "gpt-4o-2024-08-06", {"temperature": 0, "max_tokens": 10240})
    with ScriptedJudgeServer(checker) as server:
        run = reproduce.run(_preset("gpt_4o", server.base_url), "robovista", limit=2, output=tmp_path)
        calls = server.request_count
    assert run is not None and not checker.problems, checker.problems[:5]
    lines = [line for task in run.results["results"] for line in run.lines(task)]
    assert calls == len(lines) >= 7  # one request per logged sample
    for line in lines:
        record = read_record(line)
        assert record is not None and line["filtered_resps"] in (f"Answer: {record['pred']}", [
            f"Answer: {record['pred']}"])
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(encoding="utf-8", errors="replace"), path
    manifest = (run.path / "reproduce.json").read_text()
    assert '"key_env": "OPENAI_API_KEY"' in manifest and '"model": "openai"' in manifest
    assert reproduce.comparisons(run)  # GPT-4o's Table I row is compared


def test_reasoning_effort_is_sent(api_env: None, tmp_path: Path) -> None:
    from lmms_agentic.reproduce import command as reproduce

    # gpt-5 ids: lmms-eval sends max_completion_tokens and no temperature (the provider default)
    checker = Checker(None, "gpt-5.6-sol", {"reasoning_effort": "high", "max_completion_tokens": 8192,
                                            "temperature": "absent", "max_tokens": "absent"})
    with ScriptedJudgeServer(checker) as server:
        run = reproduce.run(_preset("gpt_5_6_sol_high", server.base_url), "agentvqa", limit=1, output=tmp_path)
        assert server.request_count >= 5
    assert run is not None and not checker.problems, checker.problems[:5]
    assert run.config["model"] == "agentic_openai" and "reasoning_effort=high" in run.config["model_args"]
