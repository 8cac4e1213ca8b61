"""The agent loop, as harness machinery shared by every benchmark that runs on lmms-eval's `generate_until_agentic`.

- `steps`: how a task asks for the batched loop (`batched_rounds` on its episode hook, `doc_to_text`), the step-limit
  lowering both loops apply to such a task's requests, and what ran (for the results file).
- `loop`: the batched round loop (`run_generate_until_agentic`, a drop-in for lmms-eval's
  `_run_generate_until_agentic`) and lmms-eval's own sequential loop on the step-limited requests (`run_sequential`).
- `cohorts`: which unfinished episodes go in each model call, and how tool steps overlap model calls.
- `switch`: which of the two loops runs (`LMMS_AGENTIC_AGENTIC_BATCH`), installed once by the plugin at start-up
  (`lmms_agentic.harness.host`), and what the results file records about it.
- the tool runtime: `tool_runtime` (one call -> one observation: limits, pool, memo (`tool_memo`), secret scrubbing,
  infrastructure failures; a benchmark registers its `Toolset`), `tool_config` (backends per tool from the
  benchmark's variables), `tool_availability` (the tool server's start-up check, failure counts), `tool_client` (the
  `remote` backend: tool-server client and wire format), `tool_server_http` (a tool server's request limits and
  token checks), `tool_io` (calls, outputs, limits, tool errors).
A benchmark brings only its episode hook (tool definitions, protocol) and its scoring; nothing here knows one.
"""
