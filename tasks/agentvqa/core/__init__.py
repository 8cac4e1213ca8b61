"""AgentVQA's harness-neutral core: release row -> document (`records`), per-source option rendering (`sources`),
prompt (`prompt`), per-item fields (`scoring`) and metric names and inputs (`metrics`).

Standard library, Pillow and `lmms_agentic.adapters.core` only, so lmms-eval (`tasks/agentvqa/hooks.py`),
lm-evaluation-harness and an upstream copy of the task share it; loading, media decoding, the judge fallback and the
sample-record contract are the plugin's, around it.
"""

from lmms_agentic.tasks.agentvqa.core import metrics, prompt, records, scoring, sources

__all__ = ["metrics", "prompt", "records", "scoring", "sources"]
