"""GIVEN live schedules naming a calendar WHEN the calendar is put again THEN no edit silently
ends or freezes them: one that would leave a schedule with no fire within the search bound is
refused naming it (or, asked for by name, holds it: paused on the calendar, in attention,
never COMPLETED); a fire the old calendar pushed far out comes back at once when the calendar
is changed back; a schedule held on it resumes once it allows a fire; and a fire recorded whose
calendar is why no fire is left holds the schedule instead of completing it. As examples, and
as a property over generated calendars, edits and the time passing between them."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.action.upcoming import next_fire_after
from tickwork.domain.errors import CalendarEndsSchedules
from tickwork.domain.events import DetailType
from tickwork.domain.schedule.calendar import Calendar
from tickwork.fire.sealing import sealed_calendar
from tickwork.steering.calendars import put_calendar
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 12, 21, 8, 0, tzinfo=UTC)  # a Monday
OPEN = {"timezone": "UTC"}
MONDAY_9 = {"timezone": "UTC", "hours": {"MON": ["09:00-09:01"]}}


def _deps(body: dict[str, Any] = OPEN) -> Dependencies:
    deps = fake_dependencies(NOW, seal_secret_id="seal")
    deps.secrets.values["seal"] = b"the-seal-key"  # type: ignore[attr-defined]
    put_calendar("c", dict(body), deps)
    return deps


def _start(deps: Dependencies, action_id: str, cron: str) -> None:
    start_action(StartCommand({"id": action_id, "cron": cron, "calendar": "c"}), deps)


def _fire_next(deps: Dependencies, action_id: str) -> None:
    action = deps.records.get(action_id)
    assert action is not None and action.execution_time is not None
    deps.clock.current = max(deps.clock.current, action.execution_time)  # type: ignore[attr-defined]
    machine.run(deps, machine.current(deps, action_id))


def _record(deps: Dependencies, action_id: str) -> Any:
    action = deps.records.get(action_id)
    assert action is not None
    return action


def _days(first: date, count: int) -> list[str]:
    return [(first + timedelta(days=n)).isoformat() for n in range(count)]


def test_a_calendar_that_would_leave_a_schedule_no_fire_is_refused_naming_it() -> None:
    deps = _deps()
    _start(deps, "ten", "30 10 * * *")  # never inside Monday 09:00-09:01
    _start(deps, "nine", "0 9 * * *")  # inside it on Mondays
    before = _record(deps, "ten")
    with pytest.raises(CalendarEndsSchedules) as refused:
        put_calendar("c", dict(MONDAY_9), deps)
    assert refused.value.action_ids == ["ten"] and "'ten'" in str(refused.value)
    stored = deps.calendars.get("c")
    assert stored is not None and stored.version == 1, "nothing written"
    assert _record(deps, "ten") == before


def test_asked_for_by_name_such_schedules_are_held_then_resume_when_it_allows_a_fire() -> None:
    deps = _deps()
    _start(deps, "ten", "30 10 * * *")
    put = put_calendar("c", dict(MONDAY_9), deps, hold_schedules=True)
    assert put.held == ["ten"]
    held = _record(deps, "ten")
    assert held.status is Status.PAUSED and held.held_by_calendar == "c"
    assert held.needs_attention and held.pause.note.startswith("held: calendar c")
    (paused,) = deps.publisher.of_type(DetailType.PAUSED)  # type: ignore[attr-defined]
    assert paused["heldByCalendar"] == "c"
    # a resume by hand while the calendar still allows nothing: still held, never COMPLETED
    deps.clock.current += timedelta(days=2)  # type: ignore[attr-defined]
    resume_action("ten", None, deps)
    assert _record(deps, "ten").status is Status.PAUSED
    # the calendar allows its fires again: resumed by itself
    put = put_calendar("c", dict(OPEN), deps)
    assert put.resumed == ["ten"]
    resumed = _record(deps, "ten")
    assert resumed.status is Status.PENDING and not resumed.needs_attention
    assert resumed.execution_time == datetime(2026, 12, 23, 10, 30, tzinfo=UTC)


def test_a_fire_pushed_far_out_by_a_calendar_comes_back_when_it_is_changed_back() -> None:
    deps = _deps()
    _start(deps, "m", "* * * * *")
    _fire_next(deps, "m")
    put_calendar("c", {"timezone": "UTC", "dates": _days(NOW.date(), 1000)}, deps)
    _fire_next(deps, "m")  # planned before the edit: skipped when due, the next in 2029
    pushed = _record(deps, "m")
    assert pushed.execution_time >= datetime(2029, 9, 16, tzinfo=UTC)
    put = put_calendar("c", dict(OPEN), deps)  # changed back
    assert put.planned_again == ["m"]
    back = _record(deps, "m")
    now = deps.clock.now()
    assert now < back.execution_time <= now + timedelta(minutes=1)
    assert back.generation == pushed.generation + 1, "the far execution is superseded"
    _fire_next(deps, "m")
    assert _record(deps, "m").history[-1].outcome == "FIRED"


def test_a_schedule_paused_by_its_user_is_left_paused_by_a_calendar_edit() -> None:
    deps = _deps()
    _start(deps, "p", "0 10 * * *")
    pause_action("p", "by hand", deps)
    put = put_calendar("c", {"timezone": "UTC", "dates": _days(NOW.date(), 3)}, deps)
    assert (put.planned_again, put.resumed, put.held) == ([], [], [])
    assert _record(deps, "p").status is Status.PAUSED


def test_a_fire_recorded_whose_calendar_allows_no_more_holds_the_schedule() -> None:
    """The calendar changed under a fire already planned (as a race with a put would): the fire
    is skipped when due, and with no fire left on the calendar's account the schedule is held,
    never COMPLETED."""
    deps = _deps()
    _start(deps, "ten", "30 10 * * *")
    stored = deps.calendars.get("c")
    assert stored is not None
    changed = Calendar.parse("c", dict(MONDAY_9), stored.version + 1, NOW)
    deps.calendars.put(sealed_calendar(changed, deps))  # past the use case's check
    _fire_next(deps, "ten")
    held = _record(deps, "ten")
    assert held.status is Status.PAUSED and held.held_by_calendar == "c"
    assert held.history[-1].outcome == "SKIPPED"
    assert deps.publisher.of_type(DetailType.COMPLETED) == []  # type: ignore[attr-defined]


# --- as a property --------------------------------------------------------------------------
_crons = st.sampled_from(["* * * * *", "0 10 * * *", "30 10 * * 1-5", "15 */6 * * *"])
_bodies = st.one_of(
    st.just(OPEN),
    st.just(MONDAY_9),
    st.builds(
        lambda start, count: {"timezone": "UTC", "dates": _days(start, count)},
        st.dates(date(2026, 12, 20), date(2027, 1, 10)),
        st.integers(1, 1000),
    ),
    st.builds(
        lambda days, hour: {"timezone": "UTC", "hours": {days: [f"{hour:02d}:00-{hour:02d}:30"]}},
        st.sampled_from(["MON", "TUE-THU", "SAT-SUN", "MON-FRI"]),
        st.integers(0, 23),
    ),
)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    crons=st.lists(_crons, min_size=1, max_size=3),
    edits=st.lists(st.tuples(_bodies, st.integers(0, 4 * 24 * 60)), min_size=1, max_size=5),
)
def test_no_calendar_edit_ends_a_schedule_or_leaves_its_fire_later_than_allowed(
    crons: list[str], edits: list[tuple[dict[str, Any], int]]
) -> None:
    deps = _deps()
    ids = [f"s{n}" for n in range(len(crons))]
    for action_id, cron in zip(ids, crons, strict=True):
        _start(deps, action_id, cron)
    for body, minutes in edits:
        put_calendar("c", dict(body), deps, hold_schedules=True)
        now = deps.clock.now()
        for action_id in ids:
            action = _record(deps, action_id)
            assert action.status in (Status.PENDING, Status.PAUSED), action.status
            allowed = next_fire_after(action, now, None)
            if action.status is Status.PAUSED:
                assert action.held_by_calendar == "c" and allowed is None
            else:  # the first fire the calendar allows, or one planned before it comes due
                assert allowed is not None and action.execution_time <= allowed
        until = now + timedelta(minutes=minutes)
        for action_id in ids:  # the fires due meanwhile
            for _ in range(6):
                action = _record(deps, action_id)
                due = action.execution_time
                if action.status is not Status.PENDING or due is None or due > until:
                    break
                _fire_next(deps, action_id)
        deps.clock.current = max(deps.clock.current, until)  # type: ignore[attr-defined]
    assert deps.publisher.of_type(DetailType.COMPLETED) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("lands", ["after the claim", "before the record"])
def test_a_calendar_put_back_while_a_fire_runs_is_what_its_next_fire_is_planned_on(
    lands: str,
) -> None:
    """A fifth review: a fire under way while its calendar (1,000 dates from tomorrow) was put
    back read the old calendar at its claim and planned its next fire in 2029; the put saw it
    claimed and passed it by. Now the fire reads the calendar again as it is recorded, and the
    put looks again at the fires it found under way."""
    deps = _deps()
    _start(deps, "rb", "55 23 * * *")
    tomorrow = NOW.date() + timedelta(days=1)
    put_calendar("c", {"timezone": "UTC", "dates": _days(tomorrow, 1000)}, deps)
    store = deps.records.store  # type: ignore[attr-defined]
    done: list[str] = []

    def put_back() -> None:
        record = deps.records.get("rb")
        claimed = record is not None and record.status is Status.IN_PROGRESS
        if claimed and not done:
            done.append("put")
            put_calendar("c", dict(OPEN), deps)

    if lands == "after the claim":
        store.after_write = put_back
    else:
        store.before_save = lambda action: put_back() if action.history else None
    _fire_next(deps, "rb")
    store.after_write = lambda: None
    store.before_save = lambda action: None

    after = _record(deps, "rb")
    assert done == ["put"] and len(after.history) == 1
    assert after.execution_time == datetime.combine(tomorrow, datetime.min.time(), UTC).replace(
        hour=23, minute=55
    )
