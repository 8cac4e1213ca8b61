"""The Slurm sweep's serve-then-evaluate job, end to end on the CPU: stand-in `sbatch`, `srun` and `vllm` commands
on PATH (the `vllm serve` stand-in is a loopback OpenAI-compatible server answering "B"), the sweep script submits
the array, the job starts the server on a free port, waits for it, runs RoboVista's mini split as an API client run
against it (lmms-eval's OpenAI client, the response cache sharded per run) and stops it; resubmitting skips the
finished job."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_agentic import cli

SERVER = r'''
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port = int(sys.argv[sys.argv.index("--port") + 1])
model = sys.argv[2]
log = open(sys.argv[1], "a", buffering=1)

class Handler(BaseHTTPRequestHandler):
    def _send(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log.write(f"GET {self.path}\n")
        self._send({"object": "list", "data": [{"id": model, "object": "model"}]})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        log.write(f"POST {self.path} {request['model']}\n")
        self._send({"id": "x", "object": "chat.completion", "created": 0, "model": request["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "B"},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''

VLLM = """#!/bin/bash
# stand-in vllm: `vllm serve MODEL ... --port P` runs the loopback server
[ "$1" = serve ] || exit 64
exec "$STAND_IN_PYTHON" "$STAND_IN_DIR/server.py" "$STAND_IN_DIR/requests.log" "$2" "$@"
"""
SRUN = """#!/bin/bash
# stand-in srun: drop srun's own options, run the command
while [ "${1#--}" != "$1" ]; do shift; done
exec "$@"
"""
SBATCH = """#!/bin/bash
echo "$*" >> "$STAND_IN_DIR/sbatch.log"
ids=""
for arg in "$@"; do case "$arg" in --array=*) ids="${arg#--array=}" ;; esac; done
for id in ${ids//,/ }; do SLURM_JOB_ID=7 SLURM_ARRAY_JOB_ID=7 SLURM_ARRAY_TASK_ID="$id" bash "${@: -1}"; done
"""


def _stand_ins(folder: Path) -> dict[str, str]:
    folder.mkdir()
    (folder / "server.py").write_text(SERVER)
    for name, text in (("vllm", VLLM), ("srun", SRUN), ("sbatch", SBATCH)):
        (folder / name).write_text(text)
        (folder / name).chmod((folder / name).stat().st_mode | stat.S_IEXEC)
    return {"STAND_IN_DIR": str(folder), "STAND_IN_PYTHON": sys.executable}


@pytest.mark.e2e
def test_served_job_runs_the_benchmark_against_its_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    venv = str(Path(sys.executable).parent.parent)
    target = tmp_path / "sweep.sbatch"
    assert cli.main(["reproduce", "--emit-slurm", str(target), "--preset", "qwen2_5_vl_7b", "--benchmark",
                     "robovista", "--output", "runs", "--limit", "2", "--venv", venv]) == 0
    stand_in = _stand_ins(tmp_path / "bin")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "LMMS_AGENTIC_", "OPENAI_"))},
           **stand_in, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "LMMS_AGENTIC_DATA": "mini",
           "LMMS_AGENTIC_SERVE_TIMEOUT": "120",
           "LMMS_AGENTIC_SKIP_PREFLIGHT": "1"}  # stand-in vllm (no module) and uncached weights: pre-flight would stop
    done = subprocess.run(["bash", str(target)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    folder = tmp_path / "runs" / "qwen2_5_vl_7b" / "robovista"
    manifest = json.loads((folder / "reproduce.json").read_text())
    assert manifest["backend"]["model"] == "openai" and manifest["backend"]["served"] is True
    assert "model=Qwen/Qwen2.5-VL-7B-Instruct" in manifest["backend"]["model_args"]
    assert "base_url=http://127.0.0.1:" in manifest["backend"]["model_args"]
    requests = (tmp_path / "bin" / "requests.log").read_text().splitlines()
    assert "GET /v1/models" in requests
    samples = sum(len(path.read_text().splitlines()) for path in folder.rglob("*_samples_*.jsonl"))
    asked = requests.count("POST /v1/chat/completions Qwen/Qwen2.5-VL-7B-Instruct")
    assert asked == samples > 0  # every item asked once, of the served model by its weights id
    assert (tmp_path / "runs" / "cache" / "responses" / "qwen2_5_vl_7b" / "robovista").is_dir()
    assert "## Reproduction: qwen2_5_vl_7b" in (folder / "comparison.md").read_text()
    assert "--array=0 " in (tmp_path / "bin" / "sbatch.log").read_text()
    again = subprocess.run(["bash", str(target)], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300, check=False)
    assert again.returncode == 0 and "job 0: qwen2_5_vl_7b x robovista already finished" in again.stdout
    assert len((tmp_path / "bin" / "sbatch.log").read_text().splitlines()) == 1  # nothing left to submit
