"""Fixtures for the judge tests: the scripted loopback server and clients with tiny backoffs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lmms_agentic.judges import JudgeClient, JudgeConfig, JudgeRequest, PromptTemplate, ScoreParser
from lmms_agentic.judges.testing import Script, ScriptedJudgeServer

API_KEY = "sk-test-Zq8LMMSSECRETkey-0123456789"
MODEL = "judge-snapshot-2024-08-06"

SCORE_TEMPLATE = PromptTemplate(
    id="test/score", version="1",
    system="You grade answers on a 1-5 scale.",
    user="Question: {{question}}\nAnswer to grade:\n{{response}}\nReply with the word Score, a colon and 1-5.",
    parser=ScoreParser(1, 5), trusted=frozenset({"question"}),
)


def score_request(i: int, response: str | None = None) -> JudgeRequest:
    """A distinct request for item ``i`` (the server can read "item-<i>" from the prompt)."""
    return JudgeRequest(SCORE_TEMPLATE, {"question": f"question item-{i}",
                                         "response": response if response is not None else f"answer {i}"}, f"id{i}")


def item_of(prompt: str) -> int:
    """The item number the prompt was built for."""
    return int(prompt.split("item-", 1)[1].split()[0])


@pytest.fixture
def serve() -> Iterator[Callable[..., ScriptedJudgeServer]]:
    servers: list[ScriptedJudgeServer] = []

    def start(script: Script | None = None, **kwargs: Any) -> ScriptedJudgeServer:
        server = ScriptedJudgeServer(script, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., JudgeClient]]:
    clients: list[JudgeClient] = []

    def build(server: ScriptedJudgeServer | None, **overrides: Any) -> JudgeClient:
        settings: dict[str, Any] = {
            "base_url": server.base_url if server is not None else None, "model": MODEL, "api_key": API_KEY,
            "cache_dir": tmp_path / "cache", "timeout": 2.0, "max_retries": 2, "backoff_base": 0.001,
            "backoff_max": 0.01, "concurrency": 4,
        }
        settings.update(overrides)
        sleep = settings.pop("sleep", None)
        client = JudgeClient(JudgeConfig(**settings), **({"sleep": sleep} if sleep else {}))
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.close()
