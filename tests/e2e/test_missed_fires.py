"""GIVEN the emulated stack on virtual time through an outage of its scheduled functions (the
pump and the reconciler down) WHEN a parked fire's time passes and the reconciler comes back
THEN the watchdog, run with it, announces Schedule Missed with the action, occurrence and
cause, the reconciler launches the fire as the pump would have, and it fires late, announced
as Schedule Late — through the real state machines; one whose calendar excludes the moment it
would fire late at (past closing time) is moved to the calendar's next opening instead. (With
the reconciler up, a parked fire the pump missed is launched a third of the horizon after its
launch moment: before it is due.)"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from tests.e2e.support import Stack, assert_never_early
from tickwork.domain.action import Status
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome


def test_a_fire_the_stopped_pump_never_launched_is_missed_then_fired_late(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(MissedGraceSeconds="60")
    stack.start({"id": "missed:1", "rate": "rate(1 hour)"})
    due = stack.wait_record("missed:1", lambda a: a.status is Status.PENDING).execution_time
    assert due is not None and stack.record("missed:1").is_parked
    stack.stop_schedule("PumpFunction")
    stack.stop_schedule("ReconcilerFunction")
    stack.local.time.advance_to((due + timedelta(minutes=10)).timestamp())
    assert stack.record("missed:1").history == ()  # nothing ran it

    # WHEN the reconciler runs again (its scheduled event, as after the outage)
    reconciler = next(f.name for f in stack.local.functions if f.logical_id == "ReconcilerFunction")
    answer, error = stack.local.runtime.invoke(reconciler, _scheduled_event())
    assert error is None and answer["missed"] == ["missed:1"], answer
    assert answer["restarted"] == ["missed:1"]
    stack.local.time.advance(60)

    events = stack.lifecycle.drain()
    (missed,) = [e["detail"] for e in events if e["detail-type"] == DetailType.MISSED]
    assert missed["id"] == "missed:1" and missed["occurrence"] == 1
    assert "never launched" in missed["cause"] and missed["overdueMs"] > 60_000
    (late,) = [e["detail"] for e in events if e["detail-type"] == DetailType.LATE]
    assert late["id"] == "missed:1" and late["occurrence"] == 1 and late["lateMs"] > 60_000
    record = stack.record("missed:1")
    assert [(h.occurrence, h.outcome) for h in record.history] == [(1, Outcome.FIRED)]
    assert not record.needs_attention  # it fired at last
    assert_never_early(stack.ticks_for("missed:1"))


def _scheduled_event(function: str = "reconcile") -> dict[str, object]:
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "events" / function / "scheduled.json"
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def test_a_fire_missed_past_closing_time_is_moved_to_the_next_opening(
    make_stack: Callable[..., Stack],
) -> None:
    # GIVEN a weekday 16:30 on business hours (09:00-17:00 UTC), SHIFT, missed after 60 s,
    # and the pump and reconciler down from before its fire until after closing
    from tickwork.steering.calendars import put_calendar

    stack = make_stack()
    business = {"timezone": "UTC", "hours": {"MON-FRI": ["09:00-17:00"]}}
    put_calendar("business", business, stack.deps)
    stack.start({"id": "late:1", "cron": "30 16 * * MON-FRI", "calendar": "business",
                 "onExcluded": "SHIFT", "misfireThreshold": "60s"})  # fmt: skip
    due = stack.wait_record("late:1", lambda a: a.status is Status.PENDING).execution_time
    assert due is not None and stack.record("late:1").is_parked
    stack.stop_schedule("PumpFunction")
    stack.stop_schedule("ReconcilerFunction")
    stack.local.time.advance_to((due + timedelta(hours=2)).timestamp())  # 18:30: closed

    # WHEN the reconciler comes back and launches it, at 18:30
    reconciler = next(f.name for f in stack.local.functions if f.logical_id == "ReconcilerFunction")
    answer, error = stack.local.runtime.invoke(reconciler, _scheduled_event())
    assert error is None and answer["restarted"] == ["late:1"], answer
    opening = (due + timedelta(days=1 if due.weekday() < 4 else 3)).replace(hour=9, minute=0)
    moved = stack.wait_record("late:1", lambda a: a.execution_time == opening)
    assert moved.history == () and moved.launch_at is not None  # parked for the pump
    stack.local.time.advance_to(moved.launch_at.timestamp())  # the pump is back by then
    pump = next(f.name for f in stack.local.functions if f.logical_id == "PumpFunction")
    answer, error = stack.local.runtime.invoke(pump, _scheduled_event("pump"))
    assert error is None and answer["launched"] == ["late:1"], answer
    stack.local.time.advance_to((opening + timedelta(minutes=1)).timestamp())

    # THEN it did not run at 18:30: it fired once, at the next opening, through the real state
    # machines, and that day's own 16:30 is still to come
    record = stack.wait_record("late:1", lambda a: len(a.history) == 1)
    assert [(h.occurrence, h.moved_to, h.outcome) for h in record.history] == [
        (1, opening, Outcome.FIRED)
    ]
    assert record.history[0].scheduled_time < opening  # its own time kept, and why it moved
    assert (record.history[0].reason or "").startswith("moved by its calendar: missed")
    assert record.occurrence == 2 and record.execution_time == opening.replace(hour=16, minute=30)
    ticks = stack.ticks_for("late:1")
    assert [t["occurrence"] for t in ticks] == [1]
    assert_never_early(ticks)
