"""Agent-X with executed tools (`agentx_tools`): a plugin layer beside the one-shot `agentx` protocol.

Owns the tool runtime (`catalogue` typing from `core/toolmeta.json`, `runtime` with per-tool limits and backends,
`sandbox` for the code-running tools, `local`/`model_tools`/`replay`/`server` backends), the multi-turn protocol on
lmms-eval's `generate_until_agentic` (`protocol`, `hooks`) and the execution metrics (`execution`); the round loop
that runs it is the shared layer's (`adapters/agentic/`).  Nothing here is imported by `tasks/agentx/core`:
subprocesses and sockets stay in the plugin.
"""

from __future__ import annotations

EXECUTION_METRICS = ("valid_call_rate", "tool_error_rate", "tool_unavailable_rate", "steps_used", "finished_rate")
"""The execution metrics of `agentx_tools` (`execution.py` aggregates them), named here so the benchmark package
lists them without importing the plugin machinery."""
