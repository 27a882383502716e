"""GIVEN fires of every trigger, at any delay after their scheduled time WHEN they are recorded
and tallied THEN only the schedule's own fires can be late: a run now, a retry by hand and a
backfilled occurrence (whose scheduled time is in the past by design) are never counted late, in
the tick's lateMs, the history or the fire totals behind /stats and the fires chart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from tickwork.domain.action import Occurrence
from tickwork.domain.fire import Outcome, Tick, Trigger
from tickwork.domain.fire_tally import FireKind, fire_kind
from tickwork.fire.record import occurrence_of

SCHEDULED = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def _tick(trigger: Trigger, delay: timedelta) -> Tick:
    return Tick(
        action_id="a:1",
        generation=1,
        occurrence=3,
        scheduled_time=SCHEDULED,
        actual_time=SCHEDULED + delay,
        attempts=1,
        action="TICK",
        outcome=Outcome.FIRED,
        execution_name="x",
        idempotency_key="k",
        manual=0 if trigger is Trigger.SCHEDULED else 1,
        trigger=trigger,
        result={},
    )


@given(
    trigger=st.sampled_from(list(Trigger)),
    delay=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=800)),
)
def test_only_a_scheduled_fire_is_ever_late(trigger: Trigger, delay: timedelta) -> None:
    tick = _tick(trigger, delay)
    recorded: Occurrence = occurrence_of(tick)
    kind = fire_kind(recorded)
    if trigger is Trigger.SCHEDULED:
        ran = tick.actual_time - SCHEDULED  # kept to the millisecond
        assert tick.late_ms == recorded.late_ms == int(ran.total_seconds() * 1000)
        assert kind is (FireKind.LATE if ran > timedelta(seconds=1) else FireKind.ON_TIME)
    else:
        assert tick.late_ms == recorded.late_ms == 0
        assert kind is FireKind.ON_TIME
