"""`tasks/agentx/judge_samples.py` (the judged scoring step the Agent-X exports ship): its checks, the ones appended
to the exported folder's own test, run here on this project's copy."""

from lmms_agentic.tasks.agentx.judge_samples_checks import (  # noqa: F401 (collected by pytest)
    fake_judge,
    judge_samples,
    test_judge_samples_needs_its_own_endpoint_and_model,
    test_judge_samples_reads_one_score_in_range,
    test_judge_samples_reads_the_logged_documents_without_data,
    test_judge_samples_retries_a_busy_judge,
    test_judge_samples_scores_what_the_judge_scored_and_says_why_the_rest_is_not,
    test_judge_samples_stops_calling_a_judge_that_keeps_failing,
)
