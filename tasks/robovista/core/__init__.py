"""RoboVista's harness-neutral core: release row -> document -> prompt -> reply parsing -> record -> aggregate.

`task` is what harness glue reads (`adapters.core.task.CoreTask`). Modules: `records` (the published schema,
normalised into `McqDoc`), `documents` (canonical documents and the variants behind each task), `prompt` (system
prompt and ordered segments, in-context example choice), `images` (the paper's resize/JPEG policy), `parity` (the
runner's two released parsers), `scoring` (the item's record), `metrics` (the metric table, each task kind's
metrics, the calibration aggregations). Standard library, numpy, Pillow and `adapters.core` only.
"""

from lmms_agentic.tasks.robovista.core import documents, images, metrics, parity, prompt, records, scoring, task

__all__ = ["documents", "images", "metrics", "parity", "prompt", "records", "scoring", "task"]
