"""End-to-end: `lmms-eval --model agentic_scripted --tasks agentx_tools` where the scripted model's Solver,
CodePlotter and Calculator calls try to escape the sandbox (disable the audit hook, read a secret file planted
outside, print the environment, run shell commands, exhaust the calculator); the run finishes and no secret
reaches a logged sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmms_agentic.tasks.agentx.tools import isolation

from ...conftest import run_lmms_eval
from .scripts import call, final, mini_records, write

pytestmark = pytest.mark.e2e
SECRET = "planted-secret-5b81e2"
API_KEY = "sk-test-secret-123"


TAMPER = """import gc, sys
sys.modules['__main__']._BLOCKED_PREFIXES = ('nothing.',)
for f in gc.get_objects():
    if type(f).__name__ == 'function' and f.__name__ == 'hook' and f.__closure__:
        for cell in f.__closure__:
            if isinstance(cell.cell_contents, (list, str)):
                cell.cell_contents = ['/'] if isinstance(cell.cell_contents, list) else '/'
"""


def _hostile_script(secret: Path) -> dict[str, list[str]]:
    solver = (f"{TAMPER}import os\nprint(dict(os.environ))\nos.system('id; cat {secret}; cat /proc/*/environ')\n"
              f"try:\n    print(open({str(secret)!r}).read())\nexcept OSError as err:\n    print('refused', err)")
    plotter = (f"{TAMPER}import os\nos.system('cat {secret}')\nplt.plot([0, 1])\n"
               f"plt.title(open({str(secret)!r}).read())")
    replies = [call("Solver", {"command": solver}), call("CodePlotter", {"command": plotter}),
               call("Calculator", {"expression": "(10**10000)**10000"}), final("unknown")]
    return {key: replies for key in mini_records()}


def test_hostile_code_tool_calls_leak_nothing(tmp_path: Path) -> None:
    if isolation.probe() is not None:
        pytest.skip(f"bubblewrap sandbox unavailable here: {isolation.probe()}")
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    tmp_path.chmod(0o755)
    script = write(tmp_path, _hostile_script(secret))
    env = {"LMMS_AGENTIC_DATA": "mini", "LMMS_AGENTIC_JUDGE_BASE_URL": None, "LMMS_AGENTIC_JUDGE_PRESET": None,
           "OPENAI_API_KEY": API_KEY}
    run = run_lmms_eval(["--model", "agentic_scripted", "--model_args", f"policy=script,script={script}",
                         "--tasks", "agentx_tools", "--agentic_trace_mode", "full"], tmp_path / "run", env=env)
    run.assert_ok()
    assert secret.read_text() == SECRET and sorted(p.name for p in tmp_path.iterdir()) == ["run", "script.json",
                                                                                         "secret.txt"]
    rounds = []
    for task in ("agentx_tools_text_answer", "agentx_tools_generative"):
        records = run.records(task)
        logged = json.dumps(records)
        assert SECRET not in logged and API_KEY not in logged, task
        rounds += [r for record in records for r in record["rounds"]]
    observations = {r["tool"]: str(r["observation"]) for r in rounds if r.get("tool")}
    assert "uid=65534" in observations["Solver"] and "No such file" in observations["Solver"]
    assert "uid=0(" not in json.dumps(rounds)
    assert observations["Calculator"].startswith("Error: Calculator:")
    assert run.results["lmms_agentic"]["data"]["agentx_tools"]["tools"]["sandbox"]["mechanism"] == "bubblewrap"
