"""Task discovery: --include_path, the Python API, the entry-point hook, its guard, and name collisions."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

import lmms_agentic
from lmms_agentic.harness import host

OUR_TASKS = Path(lmms_agentic.tasks_dir())


def _python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})}, timeout=300)


def test_tasks_dir_command_prints_the_installed_task_folder() -> None:
    done = subprocess.run([sys.executable, "-m", "lmms_agentic", "tasks-dir"], capture_output=True, text=True,
                          check=True)
    path = Path(done.stdout.strip())
    assert path == OUR_TASKS and (path / "robovista" / "robovista.yaml").is_file()


@pytest.fixture(scope="module")
def hook_disabled() -> dict[str, list[str]]:
    """Task indexes seen by a fresh interpreter with the hook switched off (one import, ~15 s)."""
    done = _python(
        "import json, lmms_agentic\n"
        "import lmms_eval.models  # loads entry points, as the CLI does before indexing tasks\n"
        "from lmms_eval.tasks import TaskManager\n"
        "print(json.dumps({'plain': TaskManager().all_tasks,\n"
        "                  'include_path': TaskManager(include_path=lmms_agentic.tasks_dir()).all_tasks}))",
        env={"LMMS_AGENTIC_AUTO_REGISTER": "0"},
    )
    indexes: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return indexes


@pytest.fixture(scope="module")
def hook_enabled() -> list[str]:
    """The task index of a fresh interpreter that imported lmms_eval.models, with LMMS_EVAL_PLUGINS set."""
    done = _python(
        "import json\nimport lmms_eval.models\nfrom lmms_eval.tasks import TaskManager\n"
        "print(json.dumps(TaskManager().all_tasks))",
        env={"LMMS_EVAL_PLUGINS": "lmms_agentic"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return names


def test_python_api_with_include_path_finds_our_tasks(hook_disabled: dict[str, list[str]]) -> None:
    expected = {"robovista", "robovista_cot", "robovista_icl", "robovista_agriculture"}
    assert expected <= set(hook_disabled["include_path"])


def test_opt_out_disables_the_hook(hook_disabled: dict[str, list[str]]) -> None:
    assert "robovista" not in hook_disabled["plain"]


def test_entry_point_adds_our_tasks_without_flags_and_plugins_variable_is_harmless(
        hook_enabled: list[str]) -> None:
    assert "robovista" in hook_enabled and "robovista_icl_seed4" in hook_enabled


def test_include_path_and_hook_do_not_duplicate_the_folder() -> None:
    assert host._with_our_tasks([str(OUR_TASKS)]) == [str(OUR_TASKS)]
    assert host._with_our_tasks("/elsewhere") == ["/elsewhere", str(OUR_TASKS)]
    assert host._with_our_tasks(None) == [str(OUR_TASKS)]


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "pure-python-yaml"])
@pytest.mark.parametrize("mode", ["simple", "full"])
def test_yaml_parsed_once_gives_what_lmms_eval_gives_as_independent_copies(
        mode: str, libyaml: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    from lmms_eval import utils

    assert (host._libyaml_loader(mode) is not None) == yaml_has_libyaml()
    if not libyaml:  # PyYAML built without libyaml: lmms-eval's own reading
        monkeypatch.setattr(host, "_libyaml_loader", lambda mode: None)
    original = utils.load_yaml_config
    paths = sorted(OUR_TASKS.rglob("*.yaml"))
    expected = {path: _plain(original(yaml_path=str(path), mode=mode)) for path in paths}
    with host._yaml_parsed_once(str(OUR_TASKS)):
        assert utils.load_yaml_config is not original
        for path in paths:  # each path twice: parsed, then served from the cache; a caller mutating its copy
            for _ in range(2):
                config = utils.load_yaml_config(yaml_path=str(path), mode=mode)
                assert _plain(config) == expected[path], path
                config.pop("include", None)
                config.setdefault("metric_list", []).append({"metric": "mutated"})
                for item in config.values():
                    if isinstance(item, dict):
                        item.clear()
    assert utils.load_yaml_config is original


def yaml_has_libyaml() -> bool:
    import yaml

    return bool(yaml.__with_libyaml__)


def _plain(value: object) -> object:
    """A YAML config with its !function nodes (mode "simple") as their tag and value, functions by name."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if hasattr(value, "tag") and hasattr(value, "value"):
        return (value.tag, value.value)
    if callable(value):
        return getattr(value, "__qualname__", repr(value))
    return value


def test_unexpected_host_version_warns_once_with_the_fallback(monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    import importlib.metadata

    import lmms_eval.models  # noqa: F401  (imported first, as the CLI does, so register() runs only once here)

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "9.9.9")
    with caplog.at_level(logging.WARNING, logger="lmms_agentic"):
        assert [m.model_id for m in host.register()] == ["agentic_scripted", "agentic_vllm"]  # still offered
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1
    assert "9.9.9" in warnings[0] and "--include_path" in warnings[0] and "tasks-dir" in warnings[0]


def test_missing_host_internals_warn_instead_of_crashing(monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    from lmms_eval.tasks import TaskManager

    monkeypatch.delattr(TaskManager, "initialize_tasks")
    with caplog.at_level(logging.WARNING, logger="lmms_agentic"):
        assert host.install_task_path() is False
    assert "initialize_tasks" in caplog.text and "--include_path" in caplog.text


def test_no_task_or_group_name_collides_with_a_builtin(hook_disabled: dict[str, list[str]]) -> None:
    import yaml

    builtins = set(hook_disabled["plain"])
    assert len(builtins) > 500, "the built-in task index looks wrong"
    ours = {path.stem for path in OUR_TASKS.rglob("*.yaml")}
    for path in OUR_TASKS.rglob("*.yaml"):
        text = yaml.safe_load(path.read_text().replace("!function", ""))
        ours.add(text["group"] if "group" in text else text["task"])
    assert not ours & builtins, f"collides with built-in lmms-eval tasks: {sorted(ours & builtins)}"


@pytest.mark.parametrize("text, environ, expected", [
    ("args: {'token': 'hf_abcdefghijklmnopqrstuvwxyz'}", {}, "args: {'token': '***'}"),
    ("key sk-local-secret-123 used", {"OPENAI_API_KEY": "sk-local-secret-123"}, "key *** used"),
    ("judge key jk-0123456789", {"LMMS_AGENTIC_JUDGE_API_KEY": "jk-0123456789"}, "judge key ***"),
    ("short value abc stays", {"HF_TOKEN": "abc"}, "short value abc stays"),
    ("hf_short is not a token", {}, "hf_short is not a token"),
])
def test_redact_secrets(text: str, environ: dict[str, str], expected: str) -> None:
    assert host.redact_secrets(text, environ) == expected


def test_host_log_redacts_hugging_face_token(monkeypatch: pytest.MonkeyPatch) -> None:
    from loguru import logger

    monkeypatch.setenv("HF_TOKEN", "hf_TESTsentinelTokenValue")
    host._redact_secrets_in_host_log()
    lines: list[str] = []
    sink = logger.add(lines.append, format="{message}")
    try:
        logger.info("Evaluation tracker args: {}", {"token": "hf_TESTsentinelTokenValue"})
    finally:
        logger.remove(sink)
    assert lines == ["Evaluation tracker args: {'token': '***'}\n"]
