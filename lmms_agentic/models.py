"""Placeholder model table for the deprecated `LMMS_EVAL_PLUGINS=lmms_agentic` mechanism.

lmms-eval imports `<plugin>.models` and reads `AVAILABLE_MODELS` for every plugin named in
`LMMS_EVAL_PLUGINS`, outside any try block; without this module that import crashes the run.
lmms-agentic registers no models of its own, so the table is empty. Tasks are found through the
entry point in `lmms_agentic.harness.host` (or `--include_path`), not through this variable.
"""

AVAILABLE_MODELS: dict[str, str] = {}
