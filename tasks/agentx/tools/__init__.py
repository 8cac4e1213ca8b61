"""Agent-X with executed tools (`agentx_tools`): a plugin layer beside the one-shot `agentx` protocol.

Owns the tool runtime (`catalogue` typing from `core/toolmeta.json`, `runtime` with per-tool limits and backends,
`sandbox` for the code-running tools, `local`/`model_tools`/`replay`/`server` backends), the multi-turn protocol on
lmms-eval's `generate_until_agentic` (`protocol`, `hooks`) and the execution metrics (`execution`); the round loop
that runs it is the shared layer's (`adapters/agentic/`).  Nothing here is imported by `tasks/agentx/core`:
subprocesses and sockets stay in the plugin.
"""
