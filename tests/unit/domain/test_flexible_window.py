"""GIVEN a schedule with a flexible window WHEN its occurrences fire THEN each fires at an
instant of its own in the window after its scheduled time (never before it), fixed by the
action's id and the occurrence's scheduled time, so a replay fires at the same instant and a
fleet on one cron spreads; a window never carries a fire past the next occurrence, so fires keep
the schedule's order and each maps back to its own occurrence. As properties over schedules
(regular and irregular crons, rates, frequencies), window sizes at the gap's edge and ids
shaped like the stack's own names; and through the use cases: every occurrence recorded once,
in order, at its instant, never before it, a resume before an instant still fires it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.fire import Outcome
from tickwork.domain.preview import detail_fire_times
from tickwork.domain.schedule import Schedule
from tickwork.domain.start_request import parse_start_detail
from tickwork.domain.times import iso
from tickwork.steering.occurrences import Which, move_occurrence, skip_occurrence
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2027, 3, 26, 22, 0, tzinfo=UTC)  # Europe/Berlin changes two nights later
MS = timedelta(milliseconds=1)

WHENS: list[dict[str, Any]] = [
    {"cron": "0 * * * *"},
    {"cron": "*/5 9 * * *"},  # dense for an hour, then a day's gap
    {"cron": "0 9 * * MON-FRI"},  # irregular gaps: a day, and the weekend
    {"cron": "30 2 * * *", "timezone": "Europe/Berlin", "dstRepeated": "BOTH"},
    {"cron": "0,1 * * * *"},  # a minute apart, then 59
    {"rate": "rate(1 minute)"},
    {"rate": "rate(7 seconds)"},
    {"rate": "rate(3 hours)"},
    {"frequency": "DAILY", "at": "2027-03-27T08:15:00Z"},
    {"frequency": "TEN_MINS", "at": "2027-03-26T22:03:00Z"},
]
SEEDS = st.one_of(
    st.sampled_from(["b-1", "b-2026-x", "x-g1-o2", "evt-0", "a" * 200, "h", "preview"]),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789:_-.@+=", min_size=1, max_size=40),
)
SIZES = st.one_of(
    st.sampled_from(
        [
            timedelta(seconds=1),
            timedelta(seconds=7) - MS,
            timedelta(seconds=7),
            timedelta(seconds=7) + MS,
            timedelta(minutes=1),
            timedelta(minutes=5),
            timedelta(hours=1) - MS,
            timedelta(hours=1),
            timedelta(hours=1) + MS,
            timedelta(hours=24),
        ]
    ),
    st.integers(min_value=1, max_value=86_400_000).map(lambda ms: ms * MS),
)


def _schedule(when: dict[str, Any], size: timedelta, around: bool = False) -> Schedule:
    """The schedule of ``when`` with a window to the millisecond (a Start's is in whole
    units), as a record stores it; ``around``: centred on the scheduled time."""
    plain = parse_start_detail({"id": "w", **when}, now=NOW).schedule
    window = {"sizeMs": size // MS, **({"around": True} if around else {})}
    return Schedule.from_dict({**plain.to_dict(), "window": window})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    when=st.sampled_from(WHENS),
    size=SIZES,
    seed=SEEDS,
    around=st.booleans(),
)
def test_each_fire_lies_in_its_window_in_order_and_maps_back_to_its_occurrence(
    when: dict[str, Any], size: timedelta, seed: str, around: bool
) -> None:
    schedule = _schedule(when, size, around)
    scheduled = schedule.upcoming(NOW, 14)
    fires = [schedule.fire_time(s, seed) for s in scheduled]
    again = Schedule.from_dict(schedule.to_dict())  # a replay reads the stored schedule
    lead = (size // MS // 2) * MS if around else timedelta(0)
    for index, (s, fire) in enumerate(zip(scheduled, fires, strict=True)):
        following = scheduled[index + 1] if index + 1 < len(scheduled) else None
        assert s - lead <= fire < s - lead + size, "in its window: never early unless around"
        if following is not None:
            assert fire < following or around
            assert fire < fires[index + 1], "fires keep the schedule's order, never meeting"
        if index and around:  # half the gap each side: never past the midpoint
            assert fire > s - (s - scheduled[index - 1]) / 2
        if following is not None and around:
            assert fire < s + (following - s) / 2 + MS
        assert schedule.origin(fire, seed) == s, "each fire maps back to its own occurrence"
        assert again.fire_time(s, seed) == fire, "a replay fires at the same instant"
        assert fire.microsecond % 1000 == 0


def test_a_fleet_on_one_cron_spreads_over_the_window_and_none_fires_before_the_hour() -> None:
    schedule = _schedule({"cron": "0 * * * *"}, timedelta(minutes=15))
    top = schedule.upcoming(NOW, 1)[0]
    fires = [schedule.fire_time(top, f"tenant:{n}") for n in range(300)]
    assert min(fires) >= top and max(fires) < top + timedelta(minutes=15)
    minutes = {int((fire - top).total_seconds() // 60) for fire in fires}
    assert minutes == set(range(15)), "every minute of the window gets some of the fleet"
    assert len(set(fires)) > 290


def test_a_window_wider_than_the_gap_is_cut_to_it() -> None:
    schedule = _schedule({"rate": "rate(1 minute)"}, timedelta(hours=1))
    for s in schedule.upcoming(NOW, 30):
        assert s <= schedule.fire_time(s, "dense") < s + timedelta(minutes=1)


@pytest.mark.parametrize(
    ("detail", "field", "words"),
    [
        ({"flexibleWindow": "25h"}, "flexibleWindow", "longer than"),
        ({"flexibleWindow": "0s"}, "flexibleWindow", ""),
        ({"flexibleWindow": "soon"}, "flexibleWindow", "not a duration"),
        ({"flexibleWindow": "15m", "windowMode": "BEFORE"}, "windowMode", "not a window mode"),
        ({"windowMode": "AROUND"}, "windowMode", "no flexibleWindow"),
        (
            {"flexibleWindow": "15m", "windowMode": "AROUND", "calendar": "uk"},
            "windowMode",
            "calendar",
        ),
        ({"flexibleWindow": 900}, "flexibleWindow", ""),
    ],
)
def test_a_bad_window_is_refused_naming_the_field(
    detail: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_start_detail({"id": "w", "cron": "0 * * * *", **detail}, now=NOW)
    (problem,) = [p for p in refused.value.problems if p.field == field]
    assert words in problem.problem and problem.fix


def test_the_window_is_stored_with_the_schedule_and_left_out_without_one() -> None:
    schedule = _schedule({"cron": "0 * * * *"}, timedelta(minutes=15))
    assert schedule.to_dict()["window"] == {"sizeMs": 900_000}
    assert Schedule.from_dict(schedule.to_dict()) == schedule
    plain = parse_start_detail({"id": "w", "cron": "0 * * * *"}, now=NOW).schedule
    assert "window" not in plain.to_dict()


def test_preview_lists_an_ids_instants_and_the_scheduled_times_without_an_id() -> None:
    when = {"cron": "0 * * * *", "flexibleWindow": "15m"}
    scheduled = detail_fire_times(when, NOW, 3)
    instants = detail_fire_times({**when, "id": "report:7"}, NOW, 3)
    assert [s.minute for s in scheduled] == [0, 0, 0]
    schedule = parse_start_detail({"id": "report:7", **when}, now=NOW).schedule
    assert instants == [schedule.fire_time(s, "report:7") for s in scheduled]
    assert instants != scheduled


# --- through the use cases -------------------------------------------------------------------
def _fire_all(deps: Any, action_id: str, count: int) -> list[tuple[int, datetime, datetime]]:
    fired = []
    for _ in range(count):
        action = deps.records.get(action_id)
        assert action is not None and action.execution_time is not None
        deps.clock.current = max(deps.clock.current, action.execution_time)
        machine.run(deps, machine.current(deps, action_id))
    action = deps.records.get(action_id)
    assert action is not None
    for h in action.history:
        fired.append((h.occurrence, h.moved_to or h.scheduled_time, h.actual_time))  # fired for
    return fired


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    when=st.sampled_from([w for w in WHENS if "frequency" not in w]),
    window=st.sampled_from(["1s", "59s", "1m", "15m", "1h", "24h"]),
    seed=st.sampled_from(["b-1", "x-g1-o2", "evt-7", "tenant:42"]),
    mode=st.sampled_from(["AFTER", "AROUND"]),
)
def test_every_occurrence_fires_once_in_order_at_its_instant_never_before_it(
    when: dict[str, Any], window: str, seed: str, mode: str
) -> None:
    deps = fake_dependencies(NOW, history_limit=50)
    detail = {"id": seed, **when, "flexibleWindow": window, "windowMode": mode}
    start_action(StartCommand(detail), deps)
    action = deps.records.get(seed)
    assert action is not None
    expected = [
        action.fire_time_of(s) for s in action.schedule.upcoming(NOW - timedelta(hours=12), 400)
    ]
    expected = [f for f in expected if f >= NOW][:8]
    history = _fire_all(deps, seed, 8)
    assert [h[0] for h in history] == list(range(1, 9)), "each occurrence once, in order"
    assert [h[1] for h in history] == expected, "each at its own instant in its window"
    assert all(actual >= due for _, due, actual in history), "never before its instant"


def test_a_skip_and_a_move_apply_to_a_windowed_occurrence() -> None:
    deps = fake_dependencies(NOW, history_limit=50)
    start_action(StartCommand({"id": "w", "cron": "0 * * * *", "flexibleWindow": "10m"}), deps)
    action = deps.records.get("w")
    assert action is not None
    hours = action.schedule.upcoming(NOW, 4)
    skip_occurrence("w", Which(at=hours[1]), None, deps)
    move_occurrence("w", Which(number=3), hours[2] + timedelta(minutes=30), None, deps)
    history = _fire_all(deps, "w", 4)
    assert [h[1] for h in history] == [
        action.fire_time_of(hours[0]),
        action.fire_time_of(hours[1]),  # skipped: comes due at its instant, runs nothing
        hours[2] + timedelta(minutes=30),
        action.fire_time_of(hours[3]),
    ]
    done = deps.records.get("w")
    assert done is not None
    assert [h.outcome for h in done.history] == [
        Outcome.FIRED,
        Outcome.SKIPPED,
        Outcome.FIRED,
        Outcome.FIRED,
    ]


def test_a_resume_between_an_occurrence_and_its_instant_still_fires_it() -> None:
    deps = fake_dependencies(NOW, history_limit=50)
    start_action(StartCommand({"id": "w", "cron": "0 * * * *", "flexibleWindow": "1h"}), deps)
    action = deps.records.get("w")
    assert action is not None and action.execution_time is not None
    hours = action.schedule.upcoming(NOW, 3)
    second = action.fire_time_of(hours[1])
    pause_action("w", None, deps)
    deps.clock.current = hours[1] + (second - hours[1]) / 2  # type: ignore[attr-defined]
    answer = resume_action("w", None, deps)
    resumed = deps.records.get("w")
    assert resumed is not None and resumed.execution_time == second, answer
    assert resumed.origin_of(second) == hours[1]


def test_a_one_off_takes_a_window_and_fires_in_it() -> None:
    deps = fake_dependencies(NOW, history_limit=50)
    at = NOW + timedelta(hours=2)
    start_action(StartCommand({"id": "o", "at": iso(at), "flexibleWindow": "10m"}), deps)
    action = deps.records.get("o")
    assert action is not None and action.schedule.window is not None
    assert action.execution_time is not None
    assert at <= action.execution_time < at + timedelta(minutes=10)
    assert action.execution_time == action.schedule.fire_time(at, "o"), "its own instant"


@given(seed=SEEDS, span=st.integers(min_value=1, max_value=86_400_000))
def test_an_instant_is_always_inside_its_span(seed: str, span: int) -> None:
    from tickwork.domain.schedule.window import _offset

    assert 0 <= _offset(seed, 1_790_000_000_000, span) < span
