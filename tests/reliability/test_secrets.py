"""Secrets: keys set in the environment never appear in logs, sample records, cache files, reports or exception
texts -- also when the judge answers 401 and echoes the key, when the URL is wrong, or when the key was pasted into
the URL.  Fast tests drive the judge layer the way Agent-X's process_results does (the per-process client built from
the environment); the slow one (marker ``reliability_slow``) runs the real CLI and the report and greps every file."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import lmms_agentic
from lmms_agentic.judges import JudgeCoverageError, coverage_summary
from lmms_agentic.judges.client import default_client, reset_default_client
from lmms_agentic.judges.config import ENV
from lmms_agentic.judges.coverage import CoveragePolicy
from lmms_agentic.judges.testing import ScriptedCall, ScriptedJudgeServer, ScriptedReply
from lmms_agentic.tasks.agentx.judge import judge_item

from ..conftest import run_lmms_eval

KEY = "sk-live-Q7yTreliabilitySECRET-9f8e7d6c5b4a3210"
OTHER_SECRETS = {"OPENAI_API_KEY": "sk-openai-RELIABILITYsentinel-0123456789",
                 "AZURE_OPENAI_API_KEY": "azRELIABILITYsentinel0987654321"}
HF_TOKEN = "hf_RELIABILITYsentinel42"
MINI = Path(lmms_agentic.tasks_dir()) / "agentx" / "data" / "mini"
DATA: dict[str, Any] = json.loads((MINI / "data.json").read_text())


def leaks(text: str) -> list[str]:
    """Which secrets (or recognisable pieces of them) occur in ``text``."""
    found = [name for name, value in OTHER_SECRETS.items() if value in text]
    found += ["judge key"] if KEY in text or KEY[8:30] in text else []
    return found


def _echo(status: int) -> Callable[[ScriptedCall], ScriptedReply]:
    """A server that answers ``status`` and echoes the credentials it received, as some gateways do."""
    def script(call: ScriptedCall) -> ScriptedReply:
        echoed = {"error": {"message": f"invalid credentials: {call.headers.get('Authorization')}",
                            "received_headers": call.headers}}
        return ScriptedReply(status=status, body=json.dumps(echoed).encode(),
                             headers={"WWW-Authenticate": f"Bearer realm=judge, key={KEY}"})
    return script


@pytest.fixture
def server() -> Iterator[Callable[[Callable[[ScriptedCall], ScriptedReply]], ScriptedJudgeServer]]:
    started: list[ScriptedJudgeServer] = []

    def start(script: Callable[[ScriptedCall], ScriptedReply]) -> ScriptedJudgeServer:
        started.append(ScriptedJudgeServer(script).start())
        return started[-1]

    yield start
    for s in started:
        s.stop()


MODES = ["401_echoing_the_key", "500_echoing_the_key", "404_wrong_path", "connection_refused", "invalid_url",
         "key_pasted_into_the_url", "working_judge"]


@pytest.mark.parametrize("mode", MODES)
def test_the_judge_key_never_leaks(mode: str, server: Callable[..., ScriptedJudgeServer], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    scripts = {"401_echoing_the_key": _echo(401), "500_echoing_the_key": _echo(500), "404_wrong_path": _echo(404),
               "working_judge": lambda call: ScriptedReply("{'Score': 0.5}"),
               "key_pasted_into_the_url": lambda call: ScriptedReply("{'Score': 0.5}")}
    url = {"connection_refused": "http://127.0.0.1:9/v1", "invalid_url": "http://127.0.0.1:port/v1"}.get(mode)
    if url is None:
        url = server(scripts[mode]).base_url
    if mode == "key_pasted_into_the_url":
        url = url.replace("http://", f"http://judge:{KEY}@") + f"?api_key={KEY}"
    for name, value in {**OTHER_SECRETS, ENV["api_key"]: KEY, ENV["base_url"]: url, ENV["model"]: "judge-2024",
                        ENV["cache_dir"]: str(tmp_path / "cache"), ENV["backoff_base"]: "0.01",
                        ENV["max_retries"]: "1", ENV["timeout"]: "2"}.items():
        monkeypatch.setenv(name, value)
    reset_default_client()
    texts: list[str] = []
    try:
        with caplog.at_level(logging.DEBUG):
            client = default_client()
            logging.getLogger("test").info("client %r, config %s", client, client.config)
            judged = [judge_item(key, record, {}, query_type=record["query_type"], is_generative=False)
                      for key, (record,) in list(DATA.items())[:3]]
            items = [result for item in judged for result in item.values()]
            summary = coverage_summary("ground_s", items, policy=CoveragePolicy(0.95, strict=False))
            if mode != "working_judge":
                with pytest.raises(JudgeCoverageError) as strict:
                    coverage_summary("ground_s", items, policy=CoveragePolicy(0.95, strict=True))
                texts.append(str(strict.value))
        texts += [caplog.text, json.dumps(judged), json.dumps(client.stats), repr(client), repr(client.config),
                  client.config.describe(), json.dumps({k: str(v) for k, v in summary.items()})]
        texts += [p.read_text(errors="replace") for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    finally:
        reset_default_client()
    assert client.config.key == KEY  # the key was read from the environment and used
    if mode == "working_judge":
        assert all(r["scored"] for r in items) and list((tmp_path / "cache").rglob("*.json"))
    else:
        assert not any(r["scored"] for r in items)
    for text in texts:
        assert leaks(text) == [], text[:2000]


def test_a_key_with_characters_http_cannot_send_is_unscored_not_a_crash(server: Callable[..., ScriptedJudgeServer],
                                                                       tmp_path: Path) -> None:
    from lmms_agentic.judges import JudgeClient, JudgeConfig

    from ..judges.conftest import score_request

    s = server(lambda call: ScriptedReply("Score: 3"))
    for bad in (KEY[:20] + "\u201c" + KEY[20:], KEY[:20] + "\n" + KEY[20:], KEY[:20] + "\x00" + KEY[20:]):
        client = JudgeClient(JudgeConfig(base_url=s.base_url, model="m", api_key=bad, cache_dir=tmp_path / "c",
                                         max_retries=0))
        result = client.judge(score_request(1))
        assert result.unscored_reason == "transport_error" and result.detail
        assert KEY[:20] not in result.detail and KEY[21:] not in result.detail, result.detail
        client.close()


# ------------------------------------------------------------------ slow: the CLI, its files and the report

@pytest.mark.reliability_slow
@pytest.mark.e2e
def test_cli_outputs_reports_and_cache_hold_no_key(tmp_path: Path) -> None:
    env = {**OTHER_SECRETS, "LMMS_AGENTIC_DATA": "mini", ENV["api_key"]: KEY, ENV["model"]: "judge-2024",
           ENV["cache_dir"]: str(tmp_path / "cache"), ENV["max_retries"]: "1"}
    logs = []
    with ScriptedJudgeServer(_echo(401)) as unauthorised, ScriptedJudgeServer(_echo(404)) as wrong:
        for name, url in (("unauthorised", unauthorised.base_url), ("wrong_url", wrong.base_url + "/nope"),
                          ("refused", "http://127.0.0.1:9/v1")):
            run = run_lmms_eval(["--model", "agentic_scripted", "--tasks", "agentx"], tmp_path / name,
                                env={**env, ENV["base_url"]: url})
            run.assert_ok()
            logs.append(run.log)
    assert unauthorised.request_count > 0 and wrong.request_count > 0
    report = subprocess.run([sys.executable, "-m", "lmms_agentic", "report", str(tmp_path / "unauthorised")],
                            env={**os.environ, **env}, capture_output=True, text=True, timeout=600, check=False)
    logs += [report.stdout, report.stderr]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".jsonl") for p in files) and any(p.name.endswith("_results.json") for p in files)
    found = {str(p.relative_to(tmp_path)): leaks(p.read_bytes().decode("utf-8", "replace")) for p in files}
    found.update({f"log {i}": leaks(text) for i, text in enumerate(logs)})
    assert {where: what for where, what in found.items() if what} == {}


@pytest.mark.reliability_slow
@pytest.mark.e2e
def test_cli_log_holds_no_hugging_face_token(tmp_path: Path) -> None:
    run = run_lmms_eval(["--model", "dummy", "--tasks", "agentx", "--limit", "1"], tmp_path,
                        env={"LMMS_AGENTIC_DATA": "mini", "HF_TOKEN": HF_TOKEN})
    run.assert_ok()
    texts = [run.log] + [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    assert not [text for text in texts if HF_TOKEN in text]
