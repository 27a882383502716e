"""Properties of next-fire computation for schedules built from random Start details.

Whatever the schedule (cron, rate, frequency preset), zone (DST ones included) and bounds,
its fires strictly increase, are aware UTC, stay inside [max(now, startTime), endTime],
never outnumber executionRemainder, and on the wall clock fall on local times that exist,
with a repeated (fall-back) local time firing once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import assume, event, given, note, settings
from hypothesis import strategies as st

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import Schedule
from tickwork.domain.schedule.wallclock import local_to_utc, utc_to_local
from tickwork.domain.start_request import parse_start_detail
from tickwork.domain.times import iso_exact

ZONES = ("UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kuala_Lumpur")
MAX_FIRES = 20
WALL_CLOCK_KINDS = ("cron", "DAILY", "WEEKLY", "MONTHLY")

nows = st.datetimes(
    min_value=datetime(2024, 1, 1), max_value=datetime(2032, 12, 31), timezones=st.just(UTC)
)
minute_fields = st.one_of(
    st.integers(0, 59).map(str),
    st.sampled_from([1, 2, 5, 7, 10, 15, 20, 30]).map(lambda k: f"*/{k}"),
    st.lists(st.integers(0, 59), min_size=2, max_size=4, unique=True).map(
        lambda ms: ",".join(map(str, sorted(ms)))
    ),
)
hour_fields = st.one_of(
    st.just("*"),
    st.integers(0, 23).map(str),
    st.lists(st.integers(0, 23), min_size=2, max_size=4, unique=True).map(
        lambda hs: ",".join(map(str, sorted(hs)))
    ),
    st.sampled_from([2, 3, 6, 12]).map(lambda k: f"*/{k}"),
)
# Day-of-month and day-of-week are never both restricted: cron ORs them, which is legal
# but makes the fires sparse enough to leave some bounded windows empty.
day_fields = st.sampled_from(
    [("*", "*"), ("1", "*"), ("15", "*"), ("*/2", "*"), ("*", "1-5"), ("*", "0"), ("*", "6")]
)
crons = st.builds(
    lambda m, h, days: f"{m} {h} {days[0]} * {days[1]}", minute_fields, hour_fields, day_fields
)
rates = st.one_of(
    st.just("rate(1 minute)"),
    st.integers(2, 90).map(lambda n: f"rate({n} minutes)"),
    st.just("rate(1 hour)"),
    st.integers(2, 30).map(lambda n: f"rate({n} hours)"),
    st.just("rate(1 day)"),
    st.integers(2, 10).map(lambda n: f"rate({n} days)"),
)
FREQUENCIES = ("TEN_MINS", "HOURLY", "DAILY", "WEEKLY", "MONTHLY")


def _transitions(zone_name: str, year: int) -> list[datetime]:
    """The UTC half hours in ``year`` at which ``zone_name`` changes its offset."""
    zone, step = ZoneInfo(zone_name), timedelta(minutes=30)
    moment, found = datetime(year, 1, 1, tzinfo=UTC), []
    while moment.year == year:
        if (moment + step).astimezone(zone).utcoffset() != moment.astimezone(zone).utcoffset():
            found.append(moment + step)
        moment += step
    return found


# Half the cases start shortly before a DST change in its own zone, so fires cross it.
DST_CHANGES = [(name, t) for name in ZONES for t in _transitions(name, 2027)]


@dataclass(frozen=True)
class Case:
    kind: str  # "cron", "rate" or the frequency preset
    detail: dict[str, Any]
    now: datetime


@st.composite
def cases(draw: st.DrawFn, kinds: tuple[str, ...] = ("cron", "rate", *FREQUENCIES)) -> Case:
    if draw(st.booleans()):
        zone, change = draw(st.sampled_from(DST_CHANGES))
        window = draw(st.sampled_from([timedelta(hours=3), timedelta(days=3)]))
        now = change - draw(st.timedeltas(timedelta(0), window))
    else:
        zone, now = draw(st.sampled_from(ZONES)), draw(nows)
    detail: dict[str, Any] = {"id": "prop", "timezone": zone}
    kind = draw(st.sampled_from(kinds))
    if kind == "cron":
        detail["cron"] = draw(crons)
    elif kind == "rate":
        detail["rate"] = draw(rates)
    else:
        detail["frequency"] = kind
        first = now + draw(st.timedeltas(timedelta(days=-400), timedelta(days=60)))
        how = draw(st.sampled_from(["none", "at-local", "at-offset", "executionTime"]))
        if how == "at-local":  # a naive wall time, read in the zone
            detail["at"] = utc_to_local(first, ZoneInfo(zone)).isoformat()
        elif how == "at-offset":
            detail["at"] = iso_exact(first)
        elif how == "executionTime":
            detail["executionTime"] = int(first.timestamp() * 1000)
    if draw(st.booleans()):
        start = now + draw(st.timedeltas(timedelta(days=-30), timedelta(days=30)))
        detail["startTime"] = iso_exact(start)
    if draw(st.booleans()):
        floor = max(now, _parsed(detail.get("startTime")) or now)
        end = floor + draw(st.timedeltas(timedelta(hours=1), timedelta(days=400)))
        detail["endTime"] = iso_exact(end)
    if draw(st.booleans()):
        detail["executionRemainder"] = draw(st.integers(1, 25))
    return Case(kind, detail, now)


def _parsed(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _schedule(case: Case) -> Schedule:
    """The parsed schedule; the rare detail refused for a reason the strategy allows is
    discarded (an "at" in a DST gap, or bounds leaving no fire), any other refusal fails."""
    try:
        return parse_start_detail(case.detail, case.now).schedule
    except ValidationFailed as refused:
        expected = {"at", "endTime", "startTime", "cron"}
        assert all(p.field in expected for p in refused.problems), refused
        assert all("skip" in p.problem or "no fire" in p.problem for p in refused.problems)
        note(f"refused: {refused}")
        assume(False)
        raise


def _fires(schedule: Schedule, now: datetime) -> list[datetime]:
    return schedule.upcoming(now, MAX_FIRES)


@settings(max_examples=300, deadline=None)
@given(cases())
def test_fires_strictly_increase_and_stay_in_bounds(case: Case) -> None:
    """GIVEN a random cron, rate or frequency schedule in a random zone with random bounds
    WHEN its fires are listed from now, up to 20 of them
    THEN they are aware UTC, strictly increasing, not before now or startTime, not after
    endTime, and no more than executionRemainder."""
    schedule = _schedule(case)
    fires = _fires(schedule, case.now)
    note(f"fires: {[iso_exact(f) for f in fires]}")

    assert fires, "a parsed schedule has a first fire"
    assert all(f.tzinfo is UTC for f in fires)
    assert all(a < b for a, b in pairwise(fires))
    assert fires[0] >= case.now
    start, end = _parsed(case.detail.get("startTime")), _parsed(case.detail.get("endTime"))
    if start is not None:
        assert fires[0] >= start
    if end is not None:
        assert fires[-1] <= end
    remainder = case.detail.get("executionRemainder")
    if remainder is not None:
        assert len(fires) <= remainder


@settings(max_examples=200, deadline=None)
@given(cases(), st.integers(min_value=0, max_value=400 * 86_400))
def test_catching_up_resumes_on_a_real_fire_after_the_gap(case: Case, gap_seconds: int) -> None:
    """GIVEN a schedule's first fire and an outage of a random length after it
    WHEN the next fire is asked for with the catch-up point at the outage's end
    THEN it is exactly the first fire of the schedule at or after that point (not a made-up
    time), strictly after the previous fire, and within the bounds."""
    schedule = _schedule(case)
    first = schedule.first_fire_time(case.now)
    assert first is not None
    resume = first + timedelta(seconds=gap_seconds)

    following = schedule.next_fire_time(first, 1, not_before=resume)
    note(f"{case.detail} first={first} resume={resume} following={following}")

    after_first = max(resume, first + timedelta(microseconds=1))
    if following is None:
        # Nothing to resume on: the count is spent, or no fire of the schedule lies strictly
        # after the previous one and at or after the resume point (e.g. the end comes first).
        assert (
            case.detail.get("executionRemainder") == 1
            or schedule.first_fire_time(after_first) is None
        )
        return
    assert following > first and following >= resume
    assert following == schedule.first_fire_time(after_first)


@settings(max_examples=300, deadline=None)
@given(cases(WALL_CLOCK_KINDS))
def test_wall_clock_fires_exist_and_fire_once_per_local_time(case: Case) -> None:
    """GIVEN a random cron, DAILY, WEEKLY or MONTHLY schedule in a random (often DST) zone
    WHEN its fires are listed from now
    THEN each fire's local wall time exists (it round-trips through UTC to the fire itself,
    its first occurrence) and no local wall time fires twice, so a fall-back hour fires once."""
    schedule = _schedule(case)
    zone = ZoneInfo(case.detail["timezone"])
    fires = _fires(schedule, case.now)
    walls = [utc_to_local(fire, zone) for fire in fires]
    note(f"walls: {[w.isoformat() for w in walls]}")
    offsets = {fire.astimezone(zone).utcoffset() for fire in fires}
    event(f"{case.kind}, fires cross a DST change: {len(offsets) > 1}")

    for fire, wall in zip(fires, walls, strict=True):
        back = local_to_utc(wall, zone)
        assert back is not None, f"{wall} does not exist in {zone.key}"
        # A frequency's first time given as an instant may be the second occurrence of a
        # repeated local time: the user named that instant, so it alone may differ.
        if fire != schedule.anchor:
            assert back == fire, f"{iso_exact(fire)} is not the first {wall} in {zone.key}"
    assert len(set(walls)) == len(walls)
