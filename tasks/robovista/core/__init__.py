"""RoboVista's harness-neutral core: release row -> document -> prompt -> reply parsing -> per-item score -> aggregate.

Modules: `records` (the published schema, normalised into `McqDoc`), `prompt` (system prompt and ordered segments,
in-context example choice), `images` (the paper's resize/JPEG policy), `parity` (the runner's two released parsers),
`scoring` (the per-item fields), `metrics` (metric names and calibration aggregations). Standard library, numpy,
Pillow and `adapters.core` only.
"""

from lmms_agentic.tasks.robovista.core import images, metrics, parity, prompt, records, scoring

__all__ = ["images", "metrics", "parity", "prompt", "records", "scoring"]
