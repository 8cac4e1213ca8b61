"""Agent-X's lmms-eval aggregation functions (plugin): one per name of `core.metrics.METRICS`, named as the metric.

Each is the core's `aggregate` of that metric (`core/metrics.py`) with the judge layer's judged mean
(`judges.coverage.judged_mean`): a judged metric whose coverage is below 95% (`LMMS_AGENTIC_JUDGE_MIN_COVERAGE`)
warns, or raises with `LMMS_AGENTIC_JUDGE_STRICT_COVERAGE=1`.  The task YAMLs name these functions.
"""

from __future__ import annotations

from lmms_agentic.judges.coverage import judged_mean
from lmms_agentic.tasks.agentx.core.metrics import Items, aggregate


def ground_s(items: Items) -> float:
    return aggregate('ground_s', items, judged_mean)


def tool_p(items: Items) -> float:
    return aggregate('tool_p', items, judged_mean)


def tool_acc(items: Items) -> float:
    return aggregate('tool_acc', items, judged_mean)


def fact_acc(items: Items) -> float:
    return aggregate('fact_acc', items, judged_mean)


def context_s(items: Items) -> float:
    return aggregate('context_s', items, judged_mean)


def fact_p(items: Items) -> float:
    return aggregate('fact_p', items, judged_mean)


def sem_acc(items: Items) -> float:
    return aggregate('sem_acc', items, judged_mean)


def toolset_acc(items: Items) -> float:
    return aggregate('toolset_acc', items, judged_mean)


def goal_acc(items: Items) -> float:
    """Goal accuracy over the scored non-generative items (generative ones are masked by key); NaN if none."""
    return aggregate('goal_acc', items, judged_mean)


def goal_imggen(items: Items) -> float:
    """Goal_acc*: mean of the generative-only means of tool_p, tool_acc and toolset_acc (NaN if one is NaN)."""
    return aggregate('goal_imggen', items, judged_mean)


def cov_ground(items: Items) -> float:
    return aggregate('cov_ground', items, judged_mean)


def cov_toolprec(items: Items) -> float:
    return aggregate('cov_toolprec', items, judged_mean)


def cov_toolacc(items: Items) -> float:
    return aggregate('cov_toolacc', items, judged_mean)


def cov_faith(items: Items) -> float:
    return aggregate('cov_faith', items, judged_mean)


def cov_context(items: Items) -> float:
    return aggregate('cov_context', items, judged_mean)


def cov_factprec(items: Items) -> float:
    return aggregate('cov_factprec', items, judged_mean)


def cov_semantic(items: Items) -> float:
    return aggregate('cov_semantic', items, judged_mean)


def cov_goal(items: Items) -> float:
    return aggregate('cov_goal', items, judged_mean)


def cov_toolset(items: Items) -> float:
    return aggregate('cov_toolset', items, judged_mean)


def cov_imggen(items: Items) -> float:
    """Mean over the three Goal_acc* parts of their scored share among the generative items."""
    return aggregate('cov_imggen', items, judged_mean)


def toolset_f1_prog(items: Items) -> float:
    """Mean programmatic toolset F1 over items that carry one."""
    return aggregate('toolset_f1_prog', items, judged_mean)


def format_error_rate(items: Items) -> float:
    """Share of items whose output failed the format checks (`format_ok` false)."""
    return aggregate('format_error_rate', items, judged_mean)


def exact_match_acc(items: Items) -> float:
    """Mean exact match over the items where it is defined (`exact_match` not None)."""
    return aggregate('exact_match_acc', items, judged_mean)


def parse_failure_rate(items: Items) -> float:
    """Share of items from whose reply nothing could be read: no output, or no JSON / Python-literal
    object (`parse_failure` is "no_output" or "invalid_json"); a parsed reply without a final answer is not one."""
    return aggregate('parse_failure_rate', items, judged_mean)


def err_no_action_no_response(items: Items) -> float:
    return aggregate('err_no_action_no_response', items, judged_mean)


def err_whole_response_is_thought(items: Items) -> float:
    return aggregate('err_whole_response_is_thought', items, judged_mean)


def err_tool_conflict_or_repetition(items: Items) -> float:
    return aggregate('err_tool_conflict_or_repetition', items, judged_mean)


def err_invalid_json_format(items: Items) -> float:
    return aggregate('err_invalid_json_format', items, judged_mean)


def err_answer_without_format(items: Items) -> float:
    return aggregate('err_answer_without_format', items, judged_mean)


def err_misinterpreting_visual_content(items: Items) -> float:
    return aggregate('err_misinterpreting_visual_content', items, judged_mean)


def err_step_keyword_mismatch(items: Items) -> float:
    return aggregate('err_step_keyword_mismatch', items, judged_mean)


def loop_rate(items: Items) -> float:
    """Share of replies ending in a thinking loop (`adapters.loops`; 0-1 scale like every Agent-X metric)."""
    return aggregate('loop_rate', items, judged_mean)


def truncation_rate(items: Items) -> float:
    """Share of replies that end inside a loop (or at the token limit) with nothing parsed."""
    return aggregate('truncation_rate', items, judged_mean)
