"""AgentVQA's harness-neutral core: release row -> document (`records`, `documents`), per-source option rendering
(`sources`), prompt (`prompt`), the scored record (`scoring`) and the metric table (`metrics`), presented to harness
glue as one `adapters.core.task.CoreTask` (`task`).

Standard library, Pillow and `lmms_agentic.adapters.core` only, so lmms-eval (`tasks/agentvqa/hooks.py`),
lm-evaluation-harness and an upstream copy of the task share it; data location, schema overrides, media decoding and
integrity, the judge the MCQ fallback calls, loop detection and option permutations are the plugin's, around it.
"""

from lmms_agentic.tasks.agentvqa.core import documents, metrics, prompt, records, scoring, sources, task

__all__ = ["documents", "metrics", "prompt", "records", "scoring", "sources", "task"]
