"""LLM-judge metrics (cached, retried, auditable). Installed as `lmms_agentic.judges`.

The judge client, cache and parsers are specified in the judges issue; RoboVista needs no judge."""
