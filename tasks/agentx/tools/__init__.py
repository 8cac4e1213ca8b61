"""Agent-X with executed tools (`agentx_tools`): a plugin layer beside the one-shot `agentx` protocol.

Owns the Agent-X tools (`catalogue` typing from `core/toolmeta.json`; `toolset` registers them with the shared tool
runtime, with their per-tool limits and backends: `sandbox` for the code-running tools, `local`/`model_tools`/
`replay` backends, the tool `server` and `remote`'s token), the multi-turn protocol on lmms-eval's
`generate_until_agentic` (`protocol`, `hooks`) and the execution metrics (`execution`); the round loop and the tool
runtime (limits, memo, scrubbing, the tool-server client) are the shared layer's (`adapters/agentic/`).  Nothing
here is imported by `tasks/agentx/core`: subprocesses and sockets stay in the plugin.
"""

from __future__ import annotations

EXECUTION_METRICS = ("valid_call_rate", "tool_error_rate", "tool_unavailable_rate", "steps_used", "finished_rate")
"""The execution metrics of `agentx_tools` (`execution.py` aggregates them), named here so the benchmark package
lists them without importing the plugin machinery."""
