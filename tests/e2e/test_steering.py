"""GIVEN live schedules on the emulated stack, each fire run by the real state machine WHEN an
operator steers them — cancel or change inside the lock, pause and resume, run now, groups —
THEN every fire happens once, never early, as the steering says, and no schedule is ever
unmanageable."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from tests.e2e.support import Stack, advance_to, assert_never_early, now, wait_until
from tickwork.domain.action import Status
from tickwork.domain.selection import Selection
from tickwork.steering.bulk import bulk_change
from tickwork.steering.retry import retry_action


def test_a_rate_of_one_minute_is_cancelled_at_once_inside_its_lock(make_stack) -> None:
    # GIVEN the default 2-minute lock and a rate(1 minute) recurrence: always inside its lock
    stack = make_stack(LockSeconds="120")
    stack.start({"id": "every:minute", "rate": "rate(1 minute)"})
    first = stack.wait_record("every:minute", lambda a: a.status == Status.PENDING)

    # WHEN it is stopped on the bus, its fire not claimed yet
    stack.stop("every:minute")

    # THEN it is cancelled at once (the lock guards changes of the schedule, not a cancel):
    # its imminent fire never happens, and nothing is rejected
    done = stack.wait_record("every:minute", lambda a: a.status == Status.CANCELLED)
    advance_to(first.execution_time + timedelta(minutes=3))  # type: ignore[operator]
    stack.local.wait_idle()
    assert stack.ticks_for("every:minute") == [] and done.deferred is None
    assert not any(e["detail-type"] == "Schedule Rejected" for e in stack.lifecycle.drain())


def test_pause_stops_the_fires_and_resume_goes_on_from_now(stack: Stack) -> None:
    # GIVEN a recurrence every 2 seconds that has fired
    stack.start({"id": "pulse", "rate": "rate(2 seconds)"})
    stack.ticks_for("pulse", count=1, timeout=8)

    # WHEN it is paused on the bus (after the imminent fire, if one is inside the lock)
    stack.local.publish("Schedule Pause", {"id": "pulse", "note": "deploy"})
    paused = stack.wait_record("pulse", lambda a: a.status == Status.PAUSED, timeout=8)
    stack.local.wait_idle()
    fired_before = len(stack.ticks_for("pulse"))

    # THEN nothing fires while it is paused, and it shows as paused
    time.sleep(5)
    assert len(stack.ticks_for("pulse")) == fired_before
    assert paused.pause is not None and paused.pause.note == "deploy"
    stack.wait_counted()
    assert stack.queries.count(Selection())["PAUSED"] == 1

    # WHEN it is resumed: the fires missed while paused are not caught up
    resumed_at = now()
    stack.local.publish("Schedule Resume", {"id": "pulse"})
    stack.ticks_for("pulse", count=fired_before + 1, timeout=8)
    ticks = stack.ticks_for("pulse")
    late = [t for t in ticks[fired_before:] if t["lateMs"] > 1500]
    assert late == [] and all(
        datetime.fromisoformat(t["scheduledTime"]) >= resumed_at for t in ticks[fired_before:]
    )
    assert_never_early(ticks)


def test_run_now_fires_once_at_once_and_leaves_the_schedule(stack: Stack) -> None:
    # GIVEN a daily recurrence, far from its next fire
    stack.start({"id": "report", "rate": "rate(1 day)"})
    before = stack.wait_record("report", lambda a: a.status == Status.PENDING)

    # WHEN it is run now on the bus, and the same event is delivered twice
    event = {"id": "report", "requestId": "ops-7"}
    stack.local.publish("Schedule Run Now", event)
    stack.local.publish("Schedule Run Now", event)

    # THEN it fires once, now, recorded as RUN_NOW; the schedule's next fire is unmoved
    stack.ticks_for("report", count=1, timeout=10)
    stack.wait_record("report", lambda a: a.history and not a.manual.in_flight)
    time.sleep(1)  # a second fire, were there one, would have ticked by now
    ticks = stack.ticks_for("report")
    assert [(t["trigger"], t["manual"]) for t in ticks] == [("RUN_NOW", 1)]
    after = stack.record("report")
    assert after.execution_time == before.execution_time and after.occurrence == 1
    assert [h.trigger for h in after.history] == ["RUN_NOW"] and after.manual.in_flight == ()


def test_a_failed_occurrence_does_not_end_a_recurrence_and_is_retried_by_hand(
    stack: Stack, receiver
) -> None:
    # GIVEN a webhook every 3 seconds, twice, whose first fire fails past its retries
    receiver.failures = 3
    stack.start({"id": "hook:daily", "rate": "rate(3 seconds)", "executionRemainder": 2,
                 "action": "HTTP_REQUEST", "data": {"url": receiver.url}})  # fmt: skip

    # WHEN it runs: CONTINUE (the default) goes on to the next occurrence
    done = stack.wait_record("hook:daily", lambda a: a.status == Status.COMPLETED, timeout=25)
    assert [(h.occurrence, h.outcome) for h in done.history] == [(1, "FAILED"), (2, "FIRED")]
    assert done.needs_attention
    failed_keys = {r["headers"]["Idempotency-Key"] for r in receiver.requests[:3]}
    assert len(failed_keys) == 1  # every attempt of that fire carried the same key

    # WHEN the failed fire is retried by hand

    answer = retry_action("hook:daily", stack.deps).to_wire()

    # THEN it runs once more with the key it failed with, and the action needs no attention
    healed = stack.wait_record("hook:daily", lambda a: not a.needs_attention, timeout=10)
    assert answer["idempotencyKey"] in failed_keys
    assert receiver.requests[-1]["headers"]["Idempotency-Key"] == answer["idempotencyKey"]
    assert healed.history[-1].trigger == "RETRY" and healed.history[-1].outcome == "FIRED"
    keys = [r["headers"]["Idempotency-Key"] for r in receiver.requests]
    assert len(set(keys)) == 2  # occurrence 1 (four attempts in all) and occurrence 2


def test_on_failure_pause_pauses_the_recurrence(stack: Stack, receiver) -> None:
    receiver.failures = 3
    stack.start({"id": "hook:careful", "rate": "rate(3 seconds)", "onFailure": "PAUSE",
                 "action": "HTTP_REQUEST", "data": {"url": receiver.url}})  # fmt: skip

    paused = stack.wait_record("hook:careful", lambda a: a.status == Status.PAUSED, timeout=20)

    assert (
        paused.needs_attention
        and paused.pause is not None
        and "occurrence 1 failed" in (paused.pause.note or "")
    )
    stack.local.wait_idle()
    time.sleep(4)
    assert len(receiver.requests) == 3  # no fire while paused


def test_a_group_is_paused_and_cancelled_in_one_sweep(make_stack) -> None:
    stack = make_stack(LaunchAheadSeconds="7200")  # fires an hour away have executions
    for n in range(3):
        stack.start({"id": f"sub:42:{n}", "rate": "rate(1 hour)", "group": "sub-42"})
    stack.start({"id": "sub:43:0", "rate": "rate(1 hour)", "group": "sub-43"})
    for n in range(3):
        waiting = stack.wait_record(f"sub:42:{n}", lambda a: a.status == Status.PENDING)
        stack.wait_execution(str(waiting.execution_arn))  # started after the record is written

    paused = bulk_change("pause", Selection(group="sub-42"), stack.deps).to_wire()
    cancelled = bulk_change("cancel", Selection(group="sub-42"), stack.deps).to_wire()

    assert [r["outcome"] for r in paused["results"]] == ["paused"] * 3
    assert [r["outcome"] for r in cancelled["results"]] == ["cancelled"] * 3
    assert stack.record("sub:43:0").status == Status.PENDING
    # the paused ones' executions, stopped once (the emulator's worker settles each stop)
    wait_until(lambda: sum(e["status"] == "ABORTED" for e in stack.executions()) == 3)


def test_at_in_eventbridge_schedulers_form_fires_at_that_local_time(stack: Stack) -> None:
    kl = ZoneInfo("Asia/Kuala_Lumpur")
    soon = now() + timedelta(seconds=3)
    local = soon.astimezone(kl).replace(tzinfo=None, microsecond=0)
    expression = f"at({local.isoformat(timespec='seconds')})"

    stack.start({"id": "launch", "scheduleExpression": expression, "timezone": str(kl)})

    ticks = stack.ticks_for("launch", count=1, timeout=10)
    assert len(ticks) == 1
    due = local.replace(tzinfo=kl).astimezone(UTC)
    assert datetime.fromisoformat(ticks[0]["scheduledTime"]) == due
    assert_never_early(ticks)


def test_a_resume_catches_up_as_the_action_asks(stack: Stack) -> None:
    """Temporal's and Cadence's choice: the occurrences that came due while an action was
    paused are skipped (the default), run once (LAST), or each run (ALL) — each a fire of its
    own, its own key and scheduled time, never counted late, never run twice."""
    for policy in ("SKIP", "LAST", "ALL"):
        stack.start({"id": f"cu:{policy}", "rate": "rate(1 minute)", "catchUpOnResume": policy})
    first = {p: stack.wait_record(f"cu:{p}", lambda a: a.execution_time is not None)
             for p in ("SKIP", "LAST", "ALL")}  # fmt: skip
    for policy in first:
        stack.local.publish("Schedule Pause", {"id": f"cu:{policy}"})
        stack.wait_record(f"cu:{policy}", lambda a: a.status == Status.PAUSED)
    start = first["ALL"].execution_time
    assert start is not None
    advance_to(start + timedelta(minutes=4, seconds=30))  # 5 occurrences came due meanwhile
    for policy in first:
        stack.local.publish("Schedule Resume", {"id": f"cu:{policy}"})
    caught: dict[str, list] = {}
    for policy, count in (("SKIP", 0), ("LAST", 1), ("ALL", 5)):
        record = stack.wait_record(
            f"cu:{policy}",
            lambda a, c=count: (
                a.status == Status.PENDING
                and sum(h.trigger == "CATCH_UP" for h in a.history) >= c
                and not a.manual.in_flight
                and a.backfill is None
            ),
        )
        ran = [h for h in record.history if h.trigger == "CATCH_UP"]
        caught[policy] = sorted(ran, key=lambda h: h.scheduled_time)
        assert all(h.outcome == "FIRED" and h.late_ms == 0 for h in caught[policy])
    # THEN SKIP ran none; ALL each one from the fire due when it was paused, in order; LAST
    # the last of them once
    every = [h.scheduled_time for h in caught["ALL"]]
    assert caught["SKIP"] == [] and len(every) >= 5
    assert every == [start + timedelta(minutes=n) for n in range(len(every))]
    assert [h.scheduled_time for h in caught["LAST"]] == every[-1:]
    ticks = stack.ticks_for("cu:ALL")
    keys = [t["idempotencyKey"] for t in ticks if t["trigger"] == "CATCH_UP"]
    assert len(set(keys)) == len(every)


def test_a_catch_up_never_runs_more_than_the_schedule_has(stack: Stack) -> None:
    """A schedule of 3 occurrences paused past all of them and resumed with catchUpOnResume ALL
    runs those 3, each once, and then it is done: never 20 for a 3-time schedule."""
    stack.start(
        {"id": "cu:three", "rate": "rate(1 minute)", "executionRemainder": 3,
         "catchUpOnResume": "ALL"}
    )  # fmt: skip
    first = stack.wait_record("cu:three", lambda a: a.execution_time is not None)
    stack.local.publish("Schedule Pause", {"id": "cu:three"})
    stack.wait_record("cu:three", lambda a: a.status == Status.PAUSED)
    assert first.execution_time is not None
    advance_to(first.execution_time + timedelta(minutes=20))

    stack.local.publish("Schedule Resume", {"id": "cu:three"})

    done = stack.wait_record(
        "cu:three",
        lambda a: a.status == Status.COMPLETED and not a.manual.in_flight and a.backfill is None,
    )
    advance_to(first.execution_time + timedelta(minutes=30))
    ran = [h for h in stack.record("cu:three").history if h.outcome == "FIRED"]
    assert [h.scheduled_time for h in sorted(ran, key=lambda h: h.scheduled_time)] == [
        first.execution_time + timedelta(minutes=n) for n in range(3)
    ]
    assert {h.trigger for h in ran} == {"CATCH_UP"}
    assert done.status == Status.COMPLETED


def test_a_retry_asked_twice_runs_the_failed_fire_once(stack: Stack) -> None:
    """Two retries of one failed fire asked back to back: the second answers that the first
    is under way; the fire runs again once."""
    stack.start(
        {"id": "rt:twice", "rate": "rate(1 minute)", "action": "HTTP_REQUEST",
         "data": {"url": "http://127.0.0.1:9/never", "method": "POST"},
         "maximumRetryAttempts": 0}
    )  # fmt: skip
    failed = stack.wait_record("rt:twice", lambda a: bool(a.unresolved), timeout=60)
    key = failed.unresolved[-1].idempotency_key

    first = retry_action("rt:twice", stack.deps)
    second = retry_action("rt:twice", stack.deps)

    assert first.outcome == "retried" and second.outcome == "unchanged"
    assert second.manual == first.manual and second.idempotency_key == key
    record = stack.record("rt:twice")
    assert [m.idempotency_key for m in record.manual.in_flight].count(key) <= 1
