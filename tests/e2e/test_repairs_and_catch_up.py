"""GIVEN fires whose execution or whose outcome got lost WHEN the reconciler runs THEN each is
repaired without a second fire; and a fire missed past its threshold follows its catch-up
policy, in the real state machine."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest

from tests.e2e.support import Stack, assert_never_early, in_seconds, now, wait_until
from tickwork.domain.action import Status
from tickwork.fire import lone_fire
from tickwork.fire.reconcile import reconcile
from tickwork.fire.record import record_tick
from tickwork_local.stack import stop_execution


def _wait_execution(stack: Stack, action_id: str, status: str, timeout: float = 15) -> None:
    wait_until(
        lambda: any(
            e["name"].startswith(action_id) and e["status"] == status for e in stack.executions()
        ),
        timeout,
        f"a {status} execution for {action_id}",
    )


def test_a_lost_tick_is_recorded_from_the_execution_output_and_fires_once(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a fire whose task cannot write its record (the table refuses that write), so its
    # tick goes out unmarked for the tick handler to record — which receives nothing
    stack.pause_delivery("TickFunction")

    def refused(tick: Any, *args: Any, **kwargs: Any) -> Any:
        if tick.action_id == "lost-tick":
            raise RuntimeError("ProvisionedThroughputExceededException")
        return record_tick(tick, *args, **kwargs)

    monkeypatch.setattr(lone_fire, "record_tick", refused)
    stack.start({"id": "lost-tick", "at": in_seconds(1)})
    _wait_execution(stack, "lost-tick", "SUCCEEDED")
    assert stack.record("lost-tick").status == Status.IN_PROGRESS
    monkeypatch.undo()

    # WHEN the reconciler runs
    repaired = reconcile(stack.deps, stuck_after=timedelta(0))

    # THEN the occurrence is recorded from the execution's output: COMPLETED, one execution
    assert repaired["recorded"] == ["lost-tick"] and repaired["released"] == []
    action = stack.record("lost-tick")
    assert action.status == Status.COMPLETED and [h.outcome for h in action.history] == ["FIRED"]
    assert len([e for e in stack.executions() if e["name"].startswith("lost-tick")]) == 1


@pytest.mark.real_time  # its waits are on wall-clock seconds still
def test_a_stopped_execution_is_restarted_and_a_missed_fire_is_skipped(make_stack) -> None:
    # GIVEN a 2-fire recurrence that skips fires missed by over 2 s, whose execution (started
    # at once: its first fire, 10 s away, is inside the horizon) was stopped by hand before
    # the first fire, and an outage until 3 s past that fire
    stack: Stack = make_stack(LaunchAheadSeconds="30")
    stack.start(
        {"id": "skipper", "rate": "rate(5 seconds)", "executionRemainder": 2,
         "startTime": in_seconds(10), "catchUp": "SKIP", "misfireThreshold": "2s"}
    )  # fmt: skip
    first = stack.wait_record("skipper", lambda a: a.execution_arn is not None)
    sfn = stack.local.client("stepfunctions")
    assert stop_execution(sfn, first.execution_arn, "stopped by hand", attempts=100)
    time.sleep(max(0.0, (first.execution_time.timestamp() + 3) - now().timestamp()))

    # WHEN the reconciler runs
    repaired = reconcile(stack.deps)

    # THEN a repair execution finds occurrence 1 missed and skips it; occurrence 2 fires. (On
    # a busy machine moto may not have stopped an execution whose worker had not begun yet:
    # the reconciler then finds it running and leaves it, and it finds the fire missed itself.
    # Either way an execution other than the stopped one runs the fire, once.)
    ran = [
        e
        for e in stack.executions()
        if e["name"].startswith("skipper") and e["status"] != "ABORTED"
    ]
    assert repaired["restarted"] == ["skipper"] or ran, (repaired, stack.executions())
    done = stack.wait_record("skipper", lambda a: a.status == Status.COMPLETED, timeout=15)
    assert [h.outcome for h in done.history] == ["SKIPPED", "FIRED"]
    assert done.history[0].late_ms >= 2000
    ticks = stack.ticks_for("skipper", count=1, timeout=5)
    assert [t["occurrence"] for t in ticks] == [2]
    assert_never_early(ticks)
    skipped = stack.lifecycle.wait_for(
        lambda evs: any(e["detail-type"] == "Schedule Skipped" for e in evs), 5
    )
    assert any(e["detail"].get("catchUp") == "SKIP" for e in skipped)
