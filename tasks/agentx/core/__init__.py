"""Agent-X's harness-neutral core: release row -> document -> prompt -> reply parsing -> per-item score -> aggregate.

Standard library, Pillow and `adapters.core` only, so lmms-eval, lm-evaluation-harness and an upstream copy of the
task share it: `records` (normalising a `data.json` entry), `release_data` (the released instruction, tool catalogue
and generative ids), `prompt` (the user turn), `trace_search` and `trace` (reply parsing), `failure_rules` (the
deterministic failure taxonomy), `scoring` (one item's deterministic fields), `judge_prompts` and `judging` (what
each judge call asks; the judge is passed in), `metrics` (names, views, aggregation), `task` (the one-shot tasks
under the paper's prompt as an `adapters.core.task.CoreTask`), `script_task` (that core with the authors' per-model
script protocols, `script_protocols` and `script_texts`: this project's one-shot tasks; not exported).
"""

from lmms_agentic.tasks.agentx.core import (
    failure_rules,
    judge_prompts,
    judging,
    metrics,
    prompt,
    records,
    release_data,
    scoring,
    trace,
    trace_search,
)

__all__ = ["failure_rules", "judge_prompts", "judging", "metrics", "prompt", "records", "release_data", "scoring",
           "trace", "trace_search"]
