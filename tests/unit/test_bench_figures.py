"""GIVEN the benchmark's arithmetic WHEN fed known inputs THEN percentiles are observed values
(nearest rank), billed transitions count each state entered plus each task retry, and dollars
follow the price table."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from benchkit import prices
from benchkit.cost import Usage, _billed_transitions
from benchkit.stats import median, percentile


def test_percentiles_are_nearest_rank_observations() -> None:
    values = [5, 1, 4, 2, 3]
    assert median(values) == 3
    assert percentile(values, 99) == 5
    assert percentile(list(range(1, 101)), 95) == 95


def test_a_retry_is_a_billed_transition() -> None:
    happy = [
        {"type": "ExecutionStarted"},
        {"type": "WaitStateEntered"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled"},
        {"type": "ExecutionSucceeded"},
    ]
    retried = [*happy[:4], {"type": "TaskFailed"}, {"type": "TaskScheduled"}, *happy[4:]]
    assert _billed_transitions(happy) == 3
    assert _billed_transitions(retried) == 4


def test_dollars_follow_the_price_table() -> None:
    usage = Usage("x", actions=1, fires=2, transitions=6, invocations=Counter(a=4), events=2)
    dollars = usage.dollars()
    assert dollars["Step Functions"] == 3 * prices.STEP_FUNCTIONS_STANDARD_PER_TRANSITION * 1e6
    assert dollars["EventBridge"] == 1 * prices.EVENTBRIDGE_PER_CUSTOM_EVENT * 1e6
    assert dollars["Lambda"] == 2 * prices.LAMBDA_PER_REQUEST * 1e6
