"""GIVEN a stack whose counts may lag the writes (CountLagSeconds) WHEN actions are written
THEN the counts take them once the oldest is that old, in one fold: a run of the count
function before then finds them waiting and leaves them (docs/protocol.md, "Counts and fire
totals")."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.e2e.support import Stack, in_seconds, wait_until
from tickwork.domain.action import Status
from tickwork.domain.selection import Selection


@pytest.mark.real_time  # the lag is counted on the stream's wall-clock stamps
def test_writes_wait_for_the_lag_then_one_fold_counts_them_all(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(CountLagSeconds="8")
    before = stack.deps.queries.count(Selection()).get(Status.PENDING, 0)
    for n in range(3):
        stack.start({"id": f"lag:{n}", "at": in_seconds(3600)})
    records = stack.deps.records
    wait_until(lambda: all(records.get(f"lag:{n}") for n in range(3)), what="the records")
    assert stack.local.unfolded()

    wait_until(lambda: not stack.local.unfolded(), timeout=60, what="the writes folded")
    assert stack.deps.queries.count(Selection()).get(Status.PENDING, 0) == before + 3
    runs = [i.result for i in stack.invocations("CountFunction")]
    # a run before the lag left them waiting; the three were counted in one fold
    assert all(r["folds"] == 0 or r["counted"] == 3 for r in runs), runs
    assert sum(r["folds"] for r in runs) == 1, runs
