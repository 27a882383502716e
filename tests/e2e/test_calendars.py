"""GIVEN a daily cron naming a business-day calendar on the emulated stack (virtual time, the
real state machines) WHEN nine days pass, and holidays are added on the way THEN it fires on
the calendar's allowed days only — a SHIFTed weekend occurrence at Monday's opening — each once,
in order, never early; the holiday added after its fire was planned is skipped when it comes
due with the calendar named; and the record keeps the new calendar under a seal that holds.
Beside it, a flexible window on the same calendar spreads fires inside business hours only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest

from tests.e2e.support import Stack, assert_never_early
from tests.functional.api_support import Api, serving
from tickwork.domain.action import Status
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome
from tickwork.fire.sealing import seal_holds


@pytest.fixture
def stack(make_stack: Callable[..., Stack]) -> Stack:
    return make_stack(HistoryLimit="10")  # a week's fires read back from the history


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as api:
        yield api


def test_a_daily_cron_fires_on_business_days_and_takes_a_changed_calendar(
    stack: Stack, api: Api
) -> None:
    # The week the test sees starts on a Thursday at noon, whatever day it runs: the first fire
    # is a Friday's, the one planned when the calendar changes (made a holiday) a weekday, and
    # the weekday after it made a holiday too is not the Monday the weekend's occurrences shift
    # to. Started on a Sunday, that Monday was the second holiday and the shift went to Tuesday.
    now = stack.local.clock.now()
    thursday = (now + timedelta(days=(3 - now.weekday()) % 7 or 7)).replace(
        hour=12, minute=0, second=0, microsecond=0
    )
    stack.local.time.advance_to(thursday.timestamp())
    business = {"timezone": "UTC", "hours": {"MON-FRI": ["09:00-17:00"]}}
    assert api.put("/calendars/business", business).status == 201
    body = {"id": "d", "cron": "0 10 * * *", "calendar": "business", "onExcluded": "SHIFT"}
    assert api.post("/actions", body).status == 201, body
    # and one at 16:50 whose 30-minute window would carry most of its fires past closing time
    late = {**body, "id": "w", "cron": "50 16 * * *", "flexibleWindow": "30m"}
    assert api.post("/actions", late).status == 201, late
    first = stack.wait_record("d", lambda a: a.status is Status.PENDING).execution_time
    assert first is not None
    stack.local.time.advance_to((first + timedelta(days=3)).timestamp())
    planned = stack.wait_record("d", lambda a: len(a.history) >= 2).execution_time
    assert planned is not None
    # two holidays: the fire already planned, and a weekday after it (planned on afterwards)
    holiday = planned.date()
    later = next(
        holiday + timedelta(days=n)
        for n in range(2, 9)
        if (holiday + timedelta(days=n)).weekday() < 5
    )
    dates = [holiday.isoformat(), later.isoformat()]
    changed = api.put("/calendars/business", {**business, "dates": dates})
    assert changed.status == 200 and changed.json["version"] == 2
    stack.local.time.advance_to((first + timedelta(days=9)).timestamp())  # within the 10 kept
    record = stack.wait_record(
        "d", lambda a: a.history and a.history[-1].scheduled_time >= first + timedelta(days=7)
    )
    fired = [h for h in record.history if h.outcome is Outcome.FIRED]
    assert all(h.scheduled_time.weekday() < 5 for h in fired), "weekdays only"
    assert all(9 <= h.scheduled_time.hour < 17 for h in fired), "in business hours"
    mondays = [h.scheduled_time for h in fired if h.scheduled_time.weekday() == 0]
    assert any(m.hour == 9 for m in mondays), "the weekend's occurrence shifted to the opening"
    times = [h.scheduled_time for h in record.history]
    assert times == sorted(times) and len(set(times)) == len(times)
    numbers = [h.occurrence for h in record.history]  # the newest the record keeps
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    skipped = [h for h in record.history if h.outcome is Outcome.SKIPPED]
    assert [h.scheduled_time.date() for h in skipped] == [holiday], "the planned one, when due"
    assert later not in [h.scheduled_time.date() for h in fired], "the later one: no fire"
    announced = [
        e["detail"] for e in stack.lifecycle.drain() if e["detail-type"] == DetailType.SKIPPED
    ]
    assert [e["reason"] for e in announced if e["id"] == "d"] == ["excluded by calendar business"]
    held = record.schedule.calendar
    assert held is not None and held.calendar is not None and held.calendar.version == 2
    assert seal_holds(record, stack.deps)
    assert_never_early([t for t in stack.ticks_for("d")])
    # the windowed one: spread inside business hours, never past closing, each occurrence once
    spread = stack.record("w")
    instants = [h.scheduled_time for h in spread.history if h.outcome is Outcome.FIRED]
    assert len(instants) >= 5
    assert all(t.weekday() < 5 and 9 <= t.hour < 17 for t in instants), instants
    assert len({(t.minute, t.second) for t in instants}) > 1, "spread, not all at 16:50"
    numbers = [h.occurrence for h in spread.history]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert_never_early([t for t in stack.ticks_for("w")])
