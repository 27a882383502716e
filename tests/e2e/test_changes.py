"""GIVEN a waiting action WHEN it is cancelled or updated THEN the fire follows the lock rules."""

from __future__ import annotations

from tests.e2e.support import Stack, assert_never_early, in_seconds, wait_until
from tickwork.domain.action import Status
from tickwork.domain.times import parse_iso


def test_cancel_before_fire_never_fires(make_stack) -> None:
    # GIVEN an action whose execution waits for a fire far outside its 1 s lock, however slowly
    # the Start is handled (a busy machine)
    stack: Stack = make_stack(LaunchAheadSeconds="120")
    stack.start({"id": "promo:end", "at": in_seconds(60)})
    waiting = stack.wait_record("promo:end", lambda a: a.status == Status.PENDING)
    stack.wait_execution(str(waiting.execution_arn))

    # WHEN it is stopped
    stack.stop("promo:end")
    stack.wait_record("promo:end", lambda a: a.status == Status.CANCELLED)
    wait_until(lambda: [e["status"] for e in stack.executions()] == ["ABORTED"], what="aborted")

    # THEN its execution is aborted, so it can never fire: no tick, the fulfill step never ran
    assert stack.ticks_for("promo:end") == []
    assert len(stack.invocations("FulfillFunction")) == 0


def test_update_before_the_lock_moves_the_fire(stack: Stack) -> None:
    # GIVEN an action due in 12 seconds (the update has 11 s to land before the 1 s lock,
    # however busy the machine)
    stack.start({"id": "price:change", "at": in_seconds(12), "data": {"price": 10}})
    stack.wait_record("price:change", lambda a: a.status == Status.PENDING)

    # WHEN a Start with the same id moves it later with new data
    moved_to = in_seconds(14)
    stack.start({"id": "price:change", "at": moved_to, "data": {"price": 12}})
    stack.wait_record("price:change", lambda a: a.generation == 2)

    # THEN one fire happens, at the new time, with the new data
    stack.wait_record("price:change", lambda a: a.status == Status.COMPLETED, timeout=40)
    stack.local.wait_idle()
    ticks = stack.ticks_for("price:change", count=1, timeout=2)
    assert len(ticks) == 1
    assert ticks[0]["scheduledTime"] == moved_to
    assert ticks[0]["data"] == {"price": 12}
    assert_never_early(ticks)


def test_update_inside_the_lock_is_refused(make_stack) -> None:
    # GIVEN a 3-second lock and an action due in 2 seconds (inside it from the start)
    stack = make_stack(LockSeconds="3")
    at = in_seconds(2)
    stack.start({"id": "flight:remind", "at": at, "data": {"v": 1}})
    stack.wait_record("flight:remind", lambda a: a.status == Status.PENDING)

    # WHEN an update arrives inside the lock
    stack.start({"id": "flight:remind", "at": in_seconds(30), "data": {"v": 2}})

    # THEN it is rejected with ActionLocked, and the original fires as planned
    rejected = stack.lifecycle.wait_for(
        lambda evs: any(e["detail-type"] == "Schedule Rejected" for e in evs), timeout=5
    )
    reasons = [e["detail"]["reason"] for e in rejected if e["detail-type"] == "Schedule Rejected"]
    assert reasons == ["ActionLocked"]
    stack.wait_record("flight:remind", lambda a: a.status == Status.COMPLETED, timeout=10)
    ticks = stack.ticks_for("flight:remind", count=1, timeout=2)
    assert len(ticks) == 1 and ticks[0]["data"] == {"v": 1}
    assert parse_iso(ticks[0]["scheduledTime"]) == parse_iso(at)
