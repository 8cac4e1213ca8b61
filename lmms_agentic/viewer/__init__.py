"""The run viewer: ``python -m lmms_agentic view RUN [RUN ...] -o OUT`` writes a static site of every sample of
lmms-eval and lm-eval runs (open ``OUT/index.html`` from disk: no server, no build step, no network).

Modules: ``samples`` (what one logged line shows: list row and page), ``overview`` (headline, interval, n and judge
coverage per task and model, from the reports' readers), ``media`` (each sample's media and prompt rebuilt from the
benchmark's data as the task built them), ``build`` (runs -> samples, permutation siblings, disagreements of two
runs), ``site`` (the files: paged data scripts, media, the page and its script in ``static/``) and ``command``
(the command line; ``write_demo_viewer`` for ``make demo``). ``inspect_export`` and ``inspect_samples`` write runs as
Inspect logs (``python -m lmms_agentic export-inspect RUN OUT``; the ``[inspect]`` extra).
"""

from __future__ import annotations

from lmms_agentic.viewer.site import write_site

__all__ = ["write_site"]
