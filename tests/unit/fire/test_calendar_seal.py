"""GIVEN a stack with a seal key and a calendar put through tickwork WHEN the stored calendar is
changed outside tickwork (dates added, hours cut, its seal dropped, another calendar's item
copied over it, its content made unreadable) THEN no fire takes it: the fire is neither skipped
nor moved on its account, a Schedule Tampered names the calendar, the record keeps its own
sealed copy (never sealed again over the changed content) and needs attention until a fire
reads the calendar sealed again; a Start naming it is refused naming the field."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.errors import CalendarTampered, ValidationFailed
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome
from tickwork.domain.schedule.calendar import Calendar
from tickwork.fire.calendar_reads import stack_calendar
from tickwork.fire.sealing import calendar_seal_holds, seal_holds, sealed_calendar
from tickwork.steering.calendars import put_calendar
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 12, 21, 8, 0, tzinfo=UTC)  # a Monday
WEEKDAYS = {"timezone": "UTC", "hours": {"MON-FRI": ["09:00-17:00"]}}


def _deps() -> Dependencies:
    deps = fake_dependencies(NOW, seal_secret_id="seal")
    deps.secrets.values["seal"] = b"the-seal-key"  # type: ignore[attr-defined]
    put_calendar("work", dict(WEEKDAYS), deps)
    start_action(StartCommand({"id": "d", "cron": "0 10 * * *", "calendar": "work"}), deps)
    return deps


def _edit_in_table(deps: Dependencies, **changes: Any) -> None:
    """What a write straight to the table does: the content changed, the seal left as it was
    (or dropped), the version and write time bumped so that it looks like tickwork's."""
    stored = deps.calendars.calendars["work"]  # type: ignore[attr-defined]
    changed = replace(stored, version=stored.version + 1, updated_at=NOW, **changes)
    deps.calendars.calendars["work"] = changed  # type: ignore[attr-defined]


def _fire_next(deps: Dependencies) -> None:
    action = deps.records.get("d")
    assert action is not None and action.execution_time is not None
    deps.clock.current = max(deps.clock.current, action.execution_time)  # type: ignore[attr-defined]
    machine.run(deps, machine.current(deps, "d"))


def _tampered(deps: Dependencies) -> list[dict[str, Any]]:
    return deps.publisher.of_type(DetailType.TAMPERED)  # type: ignore[attr-defined,no-any-return]


def test_a_calendar_put_through_tickwork_is_sealed_and_read_under_its_seal() -> None:
    deps = _deps()
    stored = deps.calendars.get("work")
    assert stored is not None and stored.seal is not None and calendar_seal_holds(stored, deps)
    assert stack_calendar("work", deps) == stored
    record = deps.records.get("d")
    assert record is not None and record.schedule.calendar is not None
    snapshot = record.schedule.calendar.calendar
    assert snapshot is not None and snapshot.seal is None, "the snapshot is under the record's"


@pytest.mark.parametrize(
    "changes",
    [
        {"dates": frozenset({date(2026, 12, 21), date(2026, 12, 22)})},  # today and tomorrow
        {"hours": {0: ((0, 1),)}},  # Monday 00:00-00:01 only
        {"timezone": "Pacific/Kiritimati"},
        {"seal": None},  # the seal dropped, the content as it was
        {"description": "edited"},
    ],
    ids=["dates", "hours", "zone", "seal-dropped", "description"],
)
def test_a_calendar_changed_in_the_table_neither_skips_nor_moves_a_fire(
    changes: dict[str, Any],
) -> None:
    deps = _deps()
    before = deps.records.get("d")
    assert before is not None
    _edit_in_table(deps, **changes)
    _fire_next(deps)
    after = deps.records.get("d")
    assert after is not None
    assert [(h.scheduled_time, h.outcome) for h in after.history] == [
        (datetime(2026, 12, 21, 10, tzinfo=UTC), Outcome.FIRED)
    ], "fired as planned, on the record's own copy"
    assert after.execution_time == datetime(2026, 12, 22, 10, tzinfo=UTC), "planned on its copy"
    (said,) = _tampered(deps)
    assert said["id"] == "d" and "calendar 'work'" in said["reason"]
    assert deps.publisher.of_type(DetailType.SKIPPED) == []  # type: ignore[attr-defined]
    assert after.schedule.calendar == before.schedule.calendar, "never sealed over the edit"
    assert seal_holds(after, deps)
    assert after.needs_attention and after.tampered_calendar is not None
    assert after.tampered_calendar.name == "work"
    # put right through tickwork: the next fire takes it, and the note goes
    put_calendar("work", dict(WEEKDAYS), deps)
    _fire_next(deps)
    mended = deps.records.get("d")
    assert mended is not None and not mended.needs_attention and mended.tampered_calendar is None
    assert len(_tampered(deps)) == 1


def test_another_calendars_item_copied_over_it_is_not_taken() -> None:
    deps = _deps()
    put_calendar("closed", {"timezone": "UTC", "dates": ["2026-12-21", "2026-12-22"]}, deps)
    copied = deps.calendars.get("closed")
    assert copied is not None
    deps.calendars.calendars["work"] = copied  # type: ignore[attr-defined]  # seal and all
    with pytest.raises(CalendarTampered):
        stack_calendar("work", deps)


def test_a_start_naming_a_calendar_changed_in_the_table_is_refused_naming_the_field() -> None:
    deps = _deps()
    _edit_in_table(deps, dates=frozenset({date(2026, 12, 24)}))
    with pytest.raises(ValidationFailed) as refused:
        start_action(StartCommand({"id": "e", "cron": "0 11 * * *", "calendar": "work"}), deps)
    (problem,) = refused.value.problems
    assert problem.field == "calendar" and "outside tickwork" in problem.problem
    assert "tickwork calendar put work" in problem.fix
    assert deps.records.get("e") is None


def test_without_a_seal_key_calendars_are_taken_as_stored() -> None:
    deps = fake_dependencies(NOW)
    put_calendar("work", dict(WEEKDAYS), deps)
    stored = deps.calendars.get("work")
    assert stored is not None and stored.seal is None and stack_calendar("work", deps) == stored


_dates = st.frozensets(st.dates(date(2026, 1, 1), date(2030, 12, 31)), max_size=6)
_windows = st.lists(
    st.tuples(st.integers(0, 1438), st.integers(1, 60)).map(lambda w: (w[0], min(1440, sum(w)))),
    min_size=1,
    max_size=2,
).map(lambda ws: tuple(sorted(set(ws))))
_hours = st.none() | st.dictionaries(st.integers(0, 6), _windows, min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(
    dates=_dates,
    hours=_hours,
    zone=st.sampled_from(["UTC", "Europe/London", "America/New_York", "Asia/Kolkata"]),
    description=st.none() | st.text(max_size=20),
    other_dates=_dates,
    other_zone=st.sampled_from(["UTC", "Europe/Paris"]),
)
def test_a_seal_holds_for_what_the_stack_wrote_and_for_nothing_else(
    dates: frozenset[date],
    hours: dict[int, tuple[tuple[int, int], ...]] | None,
    zone: str,
    description: str | None,
    other_dates: frozenset[date],
    other_zone: str,
) -> None:
    deps = fake_dependencies(NOW, seal_secret_id="seal")
    deps.secrets.values["seal"] = b"k"  # type: ignore[attr-defined]
    calendar = Calendar("c", zone, dates, hours, description or None, 3, NOW)
    sealed = sealed_calendar(calendar, deps)
    round_trip = replace(Calendar.from_dict(sealed.to_dict()), seal=sealed.seal)
    assert calendar_seal_holds(round_trip, deps)
    altered = replace(sealed, dates=other_dates, timezone=other_zone)
    if (other_dates, other_zone) != (dates, zone):
        assert not calendar_seal_holds(altered, deps)
    for field, value in [("name", "d"), ("version", 4), ("updated_at", NOW + timedelta(1))]:
        assert not calendar_seal_holds(replace(sealed, **{field: value}), deps), field
