"""GIVEN a named exclusion calendar (dates, weekly business hours, in its zone) WHEN a schedule
names it THEN no occurrence fires on an excluded moment: SKIP drops it (the schedule goes on
with the next allowed one), SHIFT fires it at the calendar's next allowed moment unless an
occurrence comes first by then; fires keep the schedule's order and map back to their
occurrence. As properties over schedules, calendars and policies; and through the use cases:
a Start naming a calendar the stack lacks is refused naming the field, a calendar changed after
a fire was planned skips that fire when it comes due, and the record's seal still holds after
each refresh."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.config import MAX_HISTORY
from tickwork.dependencies import Dependencies
from tickwork.domain.errors import CalendarNotFound, ValidationFailed
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome
from tickwork.domain.preview import detail_fire_times
from tickwork.domain.schedule import Schedule
from tickwork.domain.schedule.calendar import Calendar, CalendarUse, Excluded
from tickwork.domain.schedule.window import FireWindow
from tickwork.domain.start_request import parse_start_detail
from tickwork.fire.sealing import seal_holds
from tickwork.steering.calendars import delete_calendar, put_calendar
from tickwork.steering.occurrences import Which, move_occurrence, skip_occurrence
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 12, 20, 12, 0, tzinfo=UTC)  # a Sunday
HOUR = timedelta(hours=1)
UK = {
    "timezone": "Europe/London",
    "dates": ["2026-12-25", "2026-12-28"],
    "hours": {"MON-FRI": ["09:00-17:00"]},
}


def _calendar(body: dict[str, Any] = UK, name: str = "uk") -> Calendar:
    return Calendar.parse(name, body, 1, NOW)


def test_a_calendar_excludes_its_dates_and_the_moments_outside_its_hours() -> None:
    uk = _calendar()
    assert uk.excludes(datetime(2026, 12, 25, 10, tzinfo=UTC))  # a holiday
    assert uk.excludes(datetime(2026, 12, 26, 10, tzinfo=UTC))  # a Saturday: no hours
    assert uk.excludes(datetime(2026, 12, 22, 8, 59, tzinfo=UTC))  # before opening
    assert uk.excludes(datetime(2026, 12, 22, 17, 0, tzinfo=UTC))  # the end is open
    assert not uk.excludes(datetime(2026, 12, 22, 9, 0, tzinfo=UTC))
    assert uk.next_allowed(datetime(2026, 12, 24, 18, tzinfo=UTC)) == datetime(
        2026, 12, 29, 9, tzinfo=UTC
    )  # past the holiday, the weekend and the next holiday
    summer = _calendar({"timezone": "Europe/London", "hours": {"MON": ["09:00-10:00"]}})
    assert not summer.excludes(datetime(2027, 7, 5, 8, 30, tzinfo=UTC))  # 09:30 BST


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"dates": ["2026-12-25", "Christmas"]}, "dates[1]"),
        ({"dates": "2026-12-25"}, "dates"),
        ({"hours": {"MONDAY": ["09:00-17:00"]}}, "hours.MONDAY"),
        ({"hours": {"MON": ["17:00-09:00"]}}, "hours.MON[0]"),
        ({"hours": {"FRI-MON": ["09:00-17:00"]}}, "hours.FRI-MON"),
        ({"hours": {}}, "hours"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"holidays": []}, "holidays"),
        ({"dates": ["2026-01-01"] * 1001}, "dates"),
    ],
)
def test_a_bad_calendar_is_refused_naming_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        Calendar.parse("uk", body, 1, NOW)
    assert field in [p.field for p in refused.value.problems]
    assert all(p.fix for p in refused.value.problems)


def test_skip_drops_excluded_occurrences_and_shift_moves_them_to_the_next_allowed_moment() -> None:
    uk = _calendar()
    skip = Schedule.of_cron("0 10 * * *", calendar=CalendarUse("uk", Excluded.SKIP, uk))
    sunday = datetime(2026, 12, 20, tzinfo=UTC)
    days = [s.day for s in skip.upcoming(sunday, 6)]
    assert days == [21, 22, 23, 24, 29, 30]
    shift = Schedule.of_cron("0 10 * * *", calendar=CalendarUse("uk", Excluded.SHIFT, uk))
    pairs = [(s, shift.fire_time(s, "x")) for s in shift.upcoming(sunday, 7)]
    assert [(s.day, f.day, f.hour) for s, f in pairs] == [
        (20, 21, 9),  # Sunday's shifted to Monday's opening, before Monday's own
        (21, 21, 10),
        (22, 22, 10),
        (23, 23, 10),
        (24, 24, 10),
        (28, 29, 9),  # the 25th to 27th: each passed by the next; the 28th to the 29th
        (29, 29, 10),
    ]


@st.composite
def calendars(draw: st.DrawFn) -> Calendar:
    start = date(2027, 3, 1)
    dates = draw(st.sets(st.integers(0, 40), max_size=15))
    body: dict[str, Any] = {
        "timezone": draw(st.sampled_from(["UTC", "Europe/Berlin", "America/New_York"])),
        "dates": [(start + timedelta(days=d)).isoformat() for d in dates],
    }
    if draw(st.booleans()):
        opening = draw(st.integers(0, 20))
        closing = draw(st.integers(opening + 1, 24))
        days = draw(st.sampled_from(["MON-FRI", "MON-SUN", "TUE-THU", "SAT-SUN"]))
        body["hours"] = {days: [f"{opening:02d}:00-{closing:02d}:00"]}
    return Calendar.parse("c", body, 1, NOW)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    calendar=calendars(),
    when=st.sampled_from(
        ["0 * * * *", "30 9 * * *", "0 9 * * MON-FRI", "*/20 8-18 * * *", "0 0 1 * *"]
    ),
    policy=st.sampled_from(list(Excluded)),
    window=st.sampled_from([None, 1, 5 * 60, 50 * 60, 3 * 3600, 86400]),
    seed=st.sampled_from(["seed", "b-1", "orders:42", "x" * 64]),
)
def test_no_fire_lands_on_an_excluded_moment_and_fires_keep_their_order(
    calendar: Calendar, when: str, policy: Excluded, window: int | None, seed: str
) -> None:
    use = CalendarUse("c", policy, calendar)
    spread = None if window is None else FireWindow(timedelta(seconds=window))
    schedule = Schedule.of_cron(when, calendar=use, window=spread)
    unspread = Schedule.of_cron(when, calendar=use)  # where each fire's window opens
    plain = Schedule.of_cron(when)
    after = datetime(2027, 3, 1, tzinfo=UTC)
    scheduled: list[datetime] = []  # its occurrences over three weeks, at most 15
    moment = schedule.first_fire_time(after)
    while moment is not None and moment < after + timedelta(days=21) and len(scheduled) < 15:
        scheduled.append(moment)
        moment = schedule.next_fire_time(moment, len(scheduled))
    # a window spreads fires, but never decides which occurrences fire: its calendar does
    assert scheduled == unspread.upcoming(after, len(scheduled))
    fires = [schedule.fire_time(s, seed) for s in scheduled]
    for s, fire in zip(scheduled, fires, strict=True):
        assert not calendar.excludes(fire), "no fire on an excluded moment"
        assert fire >= s, "never before its occurrence"
        assert schedule.origin(fire, seed) == s, "each fire maps back to its occurrence"
        assert schedule.fire_time(s, seed) == fire, "the same instant each time it is asked"
        opening = unspread.fire_time(s, seed)
        assert (
            opening <= fire < opening + timedelta(seconds=window or 0) + timedelta(milliseconds=1)
        ), "inside the window that opens at its (shifted) time"
        if policy is Excluded.SKIP and window is None:
            assert fire == s
    assert fires == sorted(fires) and len(set(fires)) == len(fires), "in order, never meeting"
    # none lost: every occurrence the calendar allows is there
    raw, fired = plain.first_fire_time(after), 0
    while raw is not None and scheduled and raw <= scheduled[-1]:
        if not calendar.excludes(raw):
            assert raw in scheduled, f"{raw} is allowed and lost"
        fired += 1
        raw = plain.next_fire_time(raw, fired)


# The days around DST changes: spring forward and fall back, an hour at 02:00 (New York), at
# 01:00 UTC (Berlin), half an hour (Lord Howe), at midnight (Santiago).
_CHANGES = {
    "America/New_York": [
        datetime(2027, 3, 14, 4, tzinfo=UTC),
        datetime(2027, 11, 7, 4, tzinfo=UTC),
    ],
    "Europe/Berlin": [datetime(2027, 3, 28, tzinfo=UTC), datetime(2027, 10, 31, tzinfo=UTC)],
    "Australia/Lord_Howe": [
        datetime(2027, 4, 3, 12, tzinfo=UTC),
        datetime(2027, 10, 2, 12, tzinfo=UTC),
    ],
    "America/Santiago": [
        datetime(2027, 4, 3, 23, tzinfo=UTC),
        datetime(2027, 9, 4, 23, tzinfo=UTC),
    ],
}


@settings(max_examples=150, deadline=None)
@given(
    zone=st.sampled_from(sorted(_CHANGES)),
    which=st.integers(0, 1),
    windows=st.lists(
        st.tuples(st.integers(0, 47), st.integers(1, 8)), min_size=1, max_size=3
    ),  # (start in half hours, length in half hours)
    days=st.sampled_from(["MON-SUN", "MON-FRI", "SAT-SUN"]),
    minutes=st.integers(0, 36 * 60),
)
def test_the_next_allowed_moment_is_the_first_one_across_dst_changes(
    zone: str, which: int, windows: list[tuple[int, int]], days: str, minutes: int
) -> None:
    texts = []
    for start, length in windows:
        end = min(start + length, 48)
        texts.append(f"{start // 2:02d}:{start % 2 * 30:02d}-{end // 2:02d}:{end % 2 * 30:02d}")
    calendar = Calendar.parse("c", {"timezone": zone, "hours": {days: texts}}, 1, NOW)
    moment = _CHANGES[zone][which] - timedelta(hours=12) + timedelta(minutes=minutes)
    allowed = calendar.next_allowed(moment)
    assert allowed is not None and allowed >= moment
    assert not calendar.excludes(allowed), "the moment found is allowed"
    # no allowed moment before it: allowed spans begin on a whole minute (of UTC too, as the
    # offsets of these zones are whole minutes)
    probe = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while probe < allowed:
        assert calendar.excludes(probe), f"{probe} is allowed, before {allowed}"
        probe += timedelta(minutes=1)


# --- through the use cases -------------------------------------------------------------------
def _deps() -> Dependencies:
    deps = fake_dependencies(NOW, history_limit=MAX_HISTORY)
    put_calendar("uk", dict(UK), deps)
    return deps


def _fire_next(deps: Dependencies, action_id: str) -> None:
    action = deps.records.get(action_id)
    assert action is not None and action.execution_time is not None
    deps.clock.current = max(deps.clock.current, action.execution_time)  # type: ignore[attr-defined]
    machine.run(deps, machine.current(deps, action_id))


def test_a_start_naming_a_calendar_the_stack_lacks_is_refused_naming_the_field() -> None:
    deps = _deps()
    with pytest.raises(ValidationFailed) as refused:
        start_action(StartCommand({"id": "r", "cron": "0 10 * * *", "calendar": "us"}), deps)
    assert refused.value.problems[0].field == "calendar"
    assert "tickwork calendar put us" in refused.value.problems[0].fix
    assert deps.records.get("r") is None


@pytest.mark.parametrize(
    ("detail", "field"),
    [
        ({"cron": "0 10 * * *", "onExcluded": "SHIFT"}, "onExcluded"),
        ({"cron": "0 10 * * *", "calendar": "uk", "onExcluded": "LATER"}, "onExcluded"),
        ({"cron": "0 10 * * *", "calendar": "u k"}, "calendar"),
        ({"at": "2027-01-01T00:00:00Z", "calendar": "uk"}, "calendar"),
    ],
)
def test_a_bad_calendar_use_is_refused_naming_the_field(detail: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_start_detail({"id": "r", **detail}, NOW)
    assert field in [p.field for p in refused.value.problems]


def test_fires_skip_the_calendars_days_and_a_changed_calendar_applies_when_due() -> None:
    deps = _deps()
    start_action(StartCommand({"id": "r", "cron": "0 10 * * *", "calendar": "uk"}), deps)
    for _ in range(4):
        _fire_next(deps, "r")
    action = deps.records.get("r")
    assert action is not None
    assert [h.scheduled_time.day for h in action.history] == [21, 22, 23, 24]
    assert action.execution_time == datetime(2026, 12, 29, 10, tzinfo=UTC)
    # the 29th becomes a holiday after its fire was planned: skipped when it comes due
    put_calendar("uk", {**UK, "dates": [*UK["dates"], "2026-12-29"]}, deps)
    _fire_next(deps, "r")
    _fire_next(deps, "r")
    after = deps.records.get("r")
    assert after is not None
    assert [(h.scheduled_time.day, h.outcome) for h in after.history[-2:]] == [
        (29, Outcome.SKIPPED),
        (30, Outcome.FIRED),
    ]
    (skipped,) = deps.publisher.of_type(DetailType.SKIPPED)  # type: ignore[attr-defined]
    assert skipped["reason"] == "excluded by calendar uk"
    assert after.schedule.calendar is not None and after.schedule.calendar.calendar is not None
    assert after.schedule.calendar.calendar.version == 2, "the record took the new calendar"
    assert seal_holds(after, deps), "sealed again with it"
    # deleted: the schedule keeps the copy it holds
    delete_calendar("uk", deps)
    _fire_next(deps, "r")
    assert deps.records.get("r").history[-1].outcome is Outcome.FIRED  # type: ignore[union-attr]
    with pytest.raises(CalendarNotFound):
        delete_calendar("uk", deps)


def test_preview_shows_the_calendars_effect() -> None:
    uk = _calendar()
    sunday = datetime(2026, 12, 20, tzinfo=UTC)
    times = detail_fire_times(
        {"cron": "0 10 * * *", "calendar": "uk", "onExcluded": "SHIFT"}, sunday, 3, uk
    )
    assert times == [
        datetime(2026, 12, 21, 9, tzinfo=UTC),
        datetime(2026, 12, 21, 10, tzinfo=UTC),
        datetime(2026, 12, 22, 10, tzinfo=UTC),
    ]
    plain = replace(uk, dates=frozenset(), hours=None)
    assert detail_fire_times({"cron": "0 10 * * *", "calendar": "uk"}, NOW, 1, plain) == [
        datetime(2026, 12, 20, 10, tzinfo=UTC) + timedelta(days=1)
    ]


# --- found by an outside attack: each a regression test ---------------------------------------
def test_a_calendar_deleted_and_made_again_is_taken_though_its_version_starts_over() -> None:
    deps = _deps()
    start_action(StartCommand({"id": "r", "cron": "0 10 * * *", "calendar": "uk"}), deps)
    _fire_next(deps, "r")  # the 21st; the 22nd planned
    delete_calendar("uk", deps)
    deps.clock.current += timedelta(seconds=1)  # type: ignore[attr-defined]
    put = put_calendar("uk", {**UK, "dates": ["2026-12-22", "2026-12-23"]}, deps)
    assert put.created and put.calendar.version == 1
    _fire_next(deps, "r")
    _fire_next(deps, "r")
    action = deps.records.get("r")
    assert action is not None
    assert [(h.scheduled_time.day, h.outcome) for h in action.history] == [
        (21, Outcome.FIRED),
        (22, Outcome.SKIPPED),  # planned before: skipped when due
        (24, Outcome.FIRED),  # the 23rd planned on the new one: no occurrence
    ]


def test_a_run_of_excluded_dates_longer_than_a_year_is_passed() -> None:
    start = date(2027, 1, 1)
    dates = [(start + timedelta(days=n)).isoformat() for n in range(450)]
    long = Calendar.parse("long", {"dates": dates}, 1, NOW)
    for policy in Excluded:
        schedule = Schedule.of_cron("0 10 * * *", calendar=CalendarUse("long", policy, long))
        first = schedule.first_fire_time(datetime(2027, 1, 1, tzinfo=UTC))
        assert first is not None and first.date() >= start + timedelta(days=449)


def test_a_failed_fire_plans_the_next_on_the_calendar_as_it_is_now() -> None:
    deps = _deps()
    put_calendar("uk", {**UK, "dates": ["2026-12-22"]}, deps)
    start_action(StartCommand({"id": "r", "cron": "0 10 * * *", "calendar": "uk"}), deps)
    action = deps.records.get("r")
    assert action is not None and action.execution_time is not None
    put_calendar("uk", {**UK, "dates": []}, deps)  # the 22nd allowed again
    deps.clock.current = action.execution_time  # type: ignore[attr-defined]
    machine.fail(deps, machine.current(deps, "r"))
    after = deps.records.get("r")
    assert after is not None and after.execution_time == datetime(2026, 12, 22, 10, tzinfo=UTC)


# --- found by the calendar attack: each a regression test -------------------------------------
BUSINESS = {"timezone": "Europe/London", "hours": {"MON-FRI": ["09:00-17:00"]}}
MON, TUE, WED = (datetime(2026, 12, day, tzinfo=UTC) for day in (21, 22, 23))


def _evening_shifted(deps: Dependencies) -> None:
    """Daily at 18:00, outside business hours: each occurrence shifts to 09:00 the next
    weekday (London is on UTC in December)."""
    put_calendar("work", dict(BUSINESS), deps)
    detail = {"id": "e", "cron": "0 18 * * *", "calendar": "work", "onExcluded": "SHIFT"}
    start_action(StartCommand(detail), deps)


def _at(deps: Dependencies, moment: datetime) -> None:
    deps.clock.current = moment  # type: ignore[attr-defined]


def test_a_late_record_keeps_the_next_shifted_fire_whose_occurrence_has_passed() -> None:
    deps = _deps()
    _evening_shifted(deps)
    _fire_next(deps, "e")  # Sunday 18:00's, at Monday 09:00; Monday 18:00's planned Tuesday
    action = deps.records.get("e")
    assert action is not None and action.execution_time == TUE + timedelta(hours=9)
    _at(deps, TUE + timedelta(hours=18, minutes=30))  # it runs late: after Tuesday 18:00
    machine.run(deps, machine.current(deps, "e"))
    after = deps.records.get("e")
    assert after is not None
    # Tuesday 18:00 has passed, but its fire (Wednesday 09:00) is ahead: not passed over
    assert after.execution_time == WED + timedelta(hours=9)


def test_a_resume_keeps_a_shifted_fire_still_ahead_though_its_occurrence_passed() -> None:
    deps = _deps()
    _evening_shifted(deps)
    _at(deps, MON + timedelta(hours=8))
    pause_action("e", None, deps)  # before Sunday 18:00's fire at Monday 09:00
    _at(deps, MON + timedelta(hours=19))
    resume_action("e", None, deps)  # Monday 18:00 has passed; its fire is Tuesday 09:00
    action = deps.records.get("e")
    assert action is not None and action.execution_time == TUE + timedelta(hours=9)


def test_a_shifted_occurrence_can_be_skipped_until_its_fire() -> None:
    deps = _deps()
    _evening_shifted(deps)
    _fire_next(deps, "e")
    _at(deps, MON + timedelta(hours=19))  # Monday 18:00 passed, its fire Tuesday 09:00 ahead
    skip_occurrence("e", Which(at=MON + timedelta(hours=18)), None, deps)
    _fire_next(deps, "e")
    action = deps.records.get("e")
    assert action is not None
    last = action.history[-1]  # (a fire's history names its fire time)
    assert (last.scheduled_time, last.outcome) == (TUE + timedelta(hours=9), Outcome.SKIPPED)
    assert action.execution_time == WED + timedelta(hours=9), "the next is Tuesday 18:00's"


def test_no_shifted_fire_lands_after_the_end_time() -> None:
    calendar = Calendar.parse("work", dict(BUSINESS), 1, NOW)
    use = CalendarUse("work", Excluded.SHIFT, calendar)
    end = MON + timedelta(hours=8)  # Sunday 18:00 would shift to Monday 09:00: after it
    schedule = Schedule.of_cron("0 18 * * *", calendar=use, end=end)
    assert schedule.upcoming(NOW, 3) == []
    assert Schedule.of_cron("0 18 * * *", calendar=use, end=end + HOUR).upcoming(NOW, 3) == [
        datetime(2026, 12, 20, 18, tzinfo=UTC)  # fires at Monday 09:00, within it
    ]


def test_a_clock_set_back_into_a_date_not_excluded_opens_it() -> None:
    # St John's fell back at 00:01 until 2010: from 7 Nov 00:00:59 NDT to 6 Nov 23:01 NST
    calendar = Calendar.parse(
        "c", {"timezone": "America/St_Johns", "dates": ["2010-11-07"]}, 1, NOW
    )
    moment = datetime(2010, 11, 7, 2, 30, 30, tzinfo=UTC)  # 7 Nov 00:00:30 NDT: excluded
    assert calendar.excludes(moment)
    assert calendar.next_allowed(moment) == datetime(2010, 11, 7, 2, 31, tzinfo=UTC)  # 23:01 NST


def test_a_resume_keeps_a_moved_occurrence_whose_move_is_still_ahead() -> None:
    deps = _deps()
    _evening_shifted(deps)
    _at(deps, MON + timedelta(hours=8))
    pause_action("e", None, deps)  # before Sunday 18:00's fire at Monday 09:00
    moved_to = TUE + timedelta(hours=20)  # Monday 18:00's (shifted to Tuesday 09:00) moved
    move_occurrence("e", Which(at=MON + timedelta(hours=18)), moved_to, None, deps)
    _at(deps, TUE + timedelta(hours=19))  # its shifted time and Tuesday 18:00 passed, its move not
    resume_action("e", None, deps)
    action = deps.records.get("e")
    assert action is not None and action.execution_time == moved_to


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    when=st.sampled_from(["0 * * * *", "55 16 * * *", "*/20 8-18 * * *", "0 9 * * MON-FRI"]),
    window=st.sampled_from(["1s", "10m", "2h", "24h"]),
    policy=st.sampled_from(["SKIP", "SHIFT"]),
    seed=st.sampled_from(["b-1", "x-g1-o2", "tenant:42"]),
)
def test_a_calendar_and_a_window_together_fire_each_occurrence_once_inside_business_hours(
    when: str, window: str, policy: str, seed: str
) -> None:
    # GIVEN a recurrence with business hours and holidays, and a flexible window that can
    # carry a fire past 17:00 or into a holiday
    deps = _deps()
    detail = {
        "id": seed,
        "cron": when,
        "calendar": "uk",
        "onExcluded": policy,
        "flexibleWindow": window,
    }
    start_action(StartCommand(detail), deps)
    action = deps.records.get(seed)
    assert action is not None
    uk = Calendar.parse("uk", dict(UK), 1, NOW)
    expected = [action.fire_time_of(s) for s in action.schedule.upcoming(NOW, 10)]

    # WHEN its next ten fires happen, each when its execution's Wait ends
    for _ in range(10):
        _fire_next(deps, seed)

    # THEN each occurrence fired once, in order, at its instant in its window, never before
    # it, and none outside the calendar's hours or on its holidays
    after = deps.records.get(seed)
    assert after is not None
    fired = [h for h in after.history if h.outcome is Outcome.FIRED]
    assert [h.occurrence for h in fired] == list(range(1, 11)), "each occurrence once, in order"
    assert [h.scheduled_time for h in fired] == expected, "each at its own instant"
    assert all(h.actual_time >= h.scheduled_time for h in fired), "never early"
    assert not [h.scheduled_time for h in fired if uk.excludes(h.scheduled_time)]


def test_a_fire_reads_its_calendar_to_check_it_and_again_to_plan_the_next() -> None:
    # GIVEN an action on a calendar, and the stack's calendars counted as they are read
    deps = _deps()
    start_action(StartCommand({"id": "r", "cron": "0 10 * * *", "calendar": "uk"}), deps)
    store, reads = deps.calendars, []

    def counted(name: str):  # type: ignore[no-untyped-def]
        reads.append(name)
        return store.get(name)

    class Counted:
        get = staticmethod(counted)
        put, delete, all = store.put, store.delete, store.all

    deps = replace(deps, calendars=Counted())  # type: ignore[arg-type]

    # WHEN its next fire runs (the check that the calendar still allows it, then the next
    # fire planned on the calendar as it is)
    _fire_next(deps, "r")

    # THEN the calendar was read twice: when the fire was checked, and again as it was recorded
    # (a calendar put while the fire ran is what its next fire is planned on), no more
    assert reads == ["uk", "uk"]
    after = deps.records.get("r")
    assert after is not None and after.occurrence == 2


def _fire_late(deps: Dependencies, action_id: str, at: datetime) -> None:
    """The record's next fire runs at ``at`` (after an outage), however late that is."""
    action = deps.records.get(action_id)
    assert action is not None and action.execution_time is not None
    deps.clock.current = max(deps.clock.current, at)  # type: ignore[attr-defined]
    machine.run(deps, machine.current(deps, action_id))


@pytest.mark.parametrize("policy", ["SKIP", "SHIFT"])
def test_a_missed_fire_never_catches_up_on_a_moment_its_calendar_excludes(policy: str) -> None:
    # GIVEN a daily 16:00 on business hours (Mon-Fri 09:00-17:00, London), catch-up ONCE
    deps = _deps()
    detail = {"id": "r", "cron": "0 16 * * *", "timezone": "Europe/London",
              "calendar": "uk", "onExcluded": policy, "catchUp": "ONCE"}  # fmt: skip
    start_action(StartCommand(detail), deps)
    while (
        (a := deps.records.get("r")) is not None
        and a.execution_time is not None
        and (
            a.execution_time.hour != 16  # (Sunday's, shifted to Monday's opening)
        )
    ):
        _fire_next(deps, "r")
    action = deps.records.get("r")
    assert action is not None and action.execution_time is not None
    monday_four = action.execution_time  # Monday 21 December, 16:00
    assert monday_four == datetime(2026, 12, 21, 16, 0, tzinfo=UTC)
    before = len(action.history)
    uk = Calendar.parse("uk", dict(UK), 1, NOW)

    # WHEN an outage holds Monday's fire until 20:00, after closing
    _fire_late(deps, "r", monday_four + timedelta(hours=4))

    # THEN it does not run at 20:00: SKIP skips it; SHIFT moves it to Tuesday's opening,
    # where it fires once, before Tuesday's own 16:00
    after = deps.records.get("r")
    assert after is not None
    number = action.occurrence
    if policy == "SKIP":
        assert [(h.occurrence, h.outcome) for h in after.history[before:]] == [
            (number, Outcome.SKIPPED)
        ]
        (skipped,) = deps.publisher.of_type(DetailType.SKIPPED)  # type: ignore[attr-defined]
        assert "calendar uk excludes" in skipped["reason"]
        assert after.execution_time == monday_four + timedelta(days=1)
        return
    tuesday_nine = datetime(2026, 12, 22, 9, 0, tzinfo=UTC)
    assert len(after.history) == before and after.occurrence == number
    assert after.execution_time == tuesday_nine, "moved to the calendar's next allowed moment"
    _fire_next(deps, "r")
    _fire_next(deps, "r")
    done = deps.records.get("r")
    assert done is not None
    fired_for = [(h.occurrence, h.moved_to or h.scheduled_time, h.outcome) for h in done.history]
    assert fired_for[before:] == [
        (number, tuesday_nine, Outcome.FIRED),
        (number + 1, monday_four + timedelta(days=1), Outcome.FIRED),
    ]
    assert not [h for h in done.history if uk.excludes(h.actual_time)], "none when excluded"


def test_a_missed_shifted_fire_that_the_next_occurrence_passes_is_skipped() -> None:
    # GIVEN an hourly on business hours, SHIFT: the 16:00 runs late at 17:30
    deps = _deps()
    detail = {"id": "h", "cron": "0 * * * *", "timezone": "Europe/London",
              "calendar": "uk", "onExcluded": "SHIFT", "catchUp": "ONCE"}  # fmt: skip
    start_action(StartCommand(detail), deps)
    while (
        (a := deps.records.get("h")) is not None
        and a.execution_time is not None
        and (a.execution_time.hour != 16)
    ):
        _fire_next(deps, "h")
    a = deps.records.get("h")
    assert a is not None and a.execution_time is not None
    four = a.execution_time
    _fire_late(deps, "h", four + timedelta(minutes=90))

    # THEN it is skipped: the next occurrence fires at the opening that it would move to
    after = deps.records.get("h")
    assert after is not None and after.history[-1].outcome is Outcome.SKIPPED
    skipped = deps.publisher.of_type(DetailType.SKIPPED)  # type: ignore[attr-defined]
    assert "stands for it" in skipped[-1]["reason"]
    assert after.execution_time == datetime(2026, 12, 22, 9, 0, tzinfo=UTC)


@settings(max_examples=200, deadline=None)
@example(seed="b-47164")
@given(seed=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789:_-", min_size=1, max_size=30))
def test_an_instant_drawn_on_an_excluded_moment_is_redrawn_a_bounded_number_of_times(
    seed: str,
) -> None:
    # GIVEN a 24-hour window on a daily 09:00 that its calendar allows 10 minutes of
    narrow = Calendar.parse("n", {"timezone": "UTC", "hours": {"MON-SUN": ["09:00-09:10"]}}, 1, NOW)
    looks: list[datetime] = []

    def excludes(moment: datetime) -> bool:
        looks.append(moment)
        return narrow.excludes(moment)

    watched = replace(narrow)
    object.__setattr__(watched, "excludes", excludes)
    schedule = Schedule.of_cron(
        "0 9 * * *",
        calendar=CalendarUse("n", Excluded.SKIP, watched),
        window=FireWindow(timedelta(hours=24)),
    )
    occurrence = datetime(2027, 3, 2, 9, tzinfo=UTC)

    # WHEN its instant is worked out (ids such as "b-47164" once took 3 s: 30,000 redraws)
    fire = schedule.fire_time(occurrence, seed)

    # THEN it is allowed, inside its window, and found in a bounded number of looks
    assert not narrow.excludes(fire) and occurrence <= fire < occurrence + timedelta(minutes=10)
    assert len(looks) <= 65


def test_the_preview_of_a_calendar_and_a_window_shows_the_instants_the_action_fires_at() -> None:
    # GIVEN an hourly on business hours with a window, started, and the same detail previewed
    deps = _deps()
    detail = {"id": "b-1", "cron": "0 * * * *", "timezone": "Europe/London",
              "calendar": "uk", "onExcluded": "SHIFT", "flexibleWindow": "30m"}  # fmt: skip
    start_action(StartCommand(detail), deps)
    action = deps.records.get("b-1")
    assert action is not None
    uk = Calendar.parse("uk", dict(UK), 1, NOW)

    # WHEN previewed with its id, and without
    shown = detail_fire_times(detail, NOW, 5, uk)
    unspread = detail_fire_times({k: v for k, v in detail.items() if k != "id"}, NOW, 5, uk)

    # THEN with it: the instants it fires at (its id fixes them); without: the shifted times
    assert shown == [action.fire_time_of(s) for s in action.schedule.upcoming(NOW, 5)]
    assert all(u.minute == 0 for u in unspread), "a window's opening: its (shifted) hour"


@pytest.mark.parametrize("window", [None, "2h"])
def test_a_holiday_added_while_paused_over_the_planned_fire_is_skipped_after_a_resume(
    window: str | None,
) -> None:
    # GIVEN a daily 10:00 on business hours, paused, and the day of its planned fire made a
    # holiday meanwhile
    deps = _deps()
    detail = {"id": "x-g1-o2", "cron": "0 10 * * *", "timezone": "Europe/London",
              "calendar": "uk"}  # fmt: skip
    if window:
        detail["flexibleWindow"] = window
    start_action(StartCommand(detail), deps)
    action = deps.records.get("x-g1-o2")
    assert action is not None and action.execution_time is not None
    planned = action.execution_time
    pause_action("x-g1-o2", None, deps)
    holiday = {**UK, "dates": [*UK["dates"], planned.date().isoformat()]}
    put_calendar("uk", holiday, deps)

    # WHEN it is resumed before that fire, and the fire comes due
    resume_action("x-g1-o2", None, deps)
    _fire_next(deps, "x-g1-o2")

    # THEN it is skipped, named for its calendar: no fire on the holiday
    after = deps.records.get("x-g1-o2")
    assert after is not None
    assert [(h.scheduled_time, h.outcome) for h in after.history] == [(planned, Outcome.SKIPPED)]


def test_a_frequency_started_between_milliseconds_fires_only_when_its_calendar_allows() -> None:
    # GIVEN a ten-minute frequency started at a clock reading with microseconds (as the
    # system clock gives), on hours that close at 17:00
    started = datetime(2027, 3, 1, 8, 59, 59, 999500, tzinfo=UTC)  # a Monday
    deps = fake_dependencies(started, history_limit=MAX_HISTORY)
    body = {"timezone": "UTC", "hours": {"MON-FRI": ["09:00-17:00"]}}
    put_calendar("biz", dict(body), deps)
    hours = Calendar.parse("biz", body, 1, started)
    start_action(StartCommand({"id": "b-1", "frequency": "TEN_MINS", "calendar": "biz"}), deps)

    # WHEN its day's fires happen
    for _ in range(50):
        action = deps.records.get("b-1")
        assert action is not None and action.execution_time is not None
        if action.execution_time.day != 1:
            break
        _fire_next(deps, "b-1")

    # THEN none is at 17:00:00.000 (an occurrence at 16:59:59.9995 rounded up onto it)
    after = deps.records.get("b-1")
    assert after is not None and len(after.history) == 47  # 09:10 to 16:50
    assert not [h.actual_time for h in after.history if hours.excludes(h.actual_time)]
