"""GIVEN a schedule on local wall times (a cron, a DAILY frequency) in a zone with DST WHEN it
crosses a change THEN its DST policy decides: a repeated local time fires at its FIRST
occurrence (the default, as before), its LAST or BOTH; a missing one is SKIPped (the default)
or SHIFTed forward by the gap. As properties over zones, local times and both kinds of
schedule: fires strictly increase, each is a wall time the schedule names (or that time moved
forward by the gap), and each local day has exactly as many fires as the policy says."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.preview import around_dst_change
from tickwork.domain.schedule.wallclock import DstPolicy, MissingTime, RepeatedTime
from tickwork.domain.start_request import parse_start_detail

YEAR_START = datetime(2027, 1, 1, tzinfo=UTC)
ZONES = [
    "America/New_York",  # 02:00 → 03:00 in March, 02:00 → 01:00 in November
    "Europe/Berlin",  # 02:00 → 03:00, 03:00 → 02:00
    "Australia/Sydney",  # the southern hemisphere: April back, October forward
    "Australia/Lord_Howe",  # a 30-minute shift
    "America/Santiago",  # changes at local midnight
]


def _fires(detail: dict[str, Any], days: int = 366) -> list[datetime]:
    schedule = parse_start_detail({"id": "dst", **detail}, now=YEAR_START).schedule
    fires: list[datetime] = []
    fire = schedule.first_fire_time(YEAR_START)
    while fire is not None and fire < YEAR_START + timedelta(days=days):
        fires.append(fire)
        fire = schedule.next_fire_time(fire, len(fires))
    return fires


def _kind(wall: datetime, zone: ZoneInfo) -> str:
    """Whether a naive local time exists once, twice or not at all in ``zone``."""
    first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if first.astimezone(zone).replace(tzinfo=None) != wall:
        return "missing"
    second = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
    return "repeated" if second != first else "once"


@settings(max_examples=40, deadline=None)
@given(
    zone_name=st.sampled_from(ZONES),
    hour=st.integers(min_value=0, max_value=3),
    minute=st.sampled_from([0, 15, 30, 45]),
    repeated=st.sampled_from(list(RepeatedTime)),
    missing=st.sampled_from(list(MissingTime)),
    as_frequency=st.booleans(),
)
def test_a_daily_local_time_fires_as_its_policy_says_every_day_of_a_year(
    zone_name: str,
    hour: int,
    minute: int,
    repeated: RepeatedTime,
    missing: MissingTime,
    as_frequency: bool,
) -> None:
    zone = ZoneInfo(zone_name)
    policy = {"dstRepeated": str(repeated), "dstMissing": str(missing), "timezone": zone_name}
    if as_frequency:  # first fire: that local time on the first day it exists once
        first_day = next(
            day
            for day in (date(2027, 1, 1) + timedelta(days=n) for n in range(10))
            if _kind(datetime(day.year, day.month, day.day, hour, minute), zone) == "once"
        )
        first = datetime(first_day.year, first_day.month, first_day.day, hour, minute)
        detail = {"frequency": "DAILY", "at": first.isoformat(), **policy}
    else:
        detail = {"cron": f"{minute} {hour} * * *", **policy}
    fires = _fires(detail)

    assert fires == sorted(fires) and len(set(fires)) == len(fires)
    per_day = Counter(fire.astimezone(zone).date() for fire in fires)
    start_day = fires[0].astimezone(zone).date()
    day = start_day
    while day < (YEAR_START + timedelta(days=365)).astimezone(zone).date():
        wall = datetime(day.year, day.month, day.day, hour, minute)
        kind = _kind(wall, zone)
        expected = {
            "once": 1,
            "repeated": 2 if repeated is RepeatedTime.BOTH else 1,
            "missing": 1 if missing is MissingTime.SHIFT else 0,
        }[kind]
        assert per_day[day] == expected, (day, kind, per_day[day])
        day += timedelta(days=1)
    for fire in fires:
        local = fire.astimezone(zone)
        wall = datetime(local.year, local.month, local.day, hour, minute)
        if (local.hour, local.minute) == (hour, minute):
            if _kind(wall, zone) == "repeated" and repeated is not RepeatedTime.BOTH:
                assert local.fold == (1 if repeated is RepeatedTime.LAST else 0)
        else:  # only a missing time, shifted forward by the gap
            assert missing is MissingTime.SHIFT and _kind(wall, zone) == "missing"
            gap = local.replace(tzinfo=None) - wall
            assert timedelta(0) < gap <= timedelta(hours=1)


def test_the_default_policy_is_the_rule_before_it_first_and_skip() -> None:
    detail = {"cron": "30 1 * * *", "timezone": "America/New_York"}
    explicit = {**detail, "dstRepeated": "FIRST", "dstMissing": "SKIP"}
    assert _fires(detail) == _fires(explicit)
    schedule = parse_start_detail({"id": "dst", **detail}, now=YEAR_START).schedule
    assert schedule.dst == DstPolicy() and "dst" not in schedule.to_dict()  # stored as before


def test_the_fall_back_hour_under_each_policy() -> None:
    def fall_back(repeated: str) -> list[str]:
        detail = {"cron": "30 1 * * *", "timezone": "America/New_York", "dstRepeated": repeated}
        return [
            f.astimezone(ZoneInfo("America/New_York")).isoformat()
            for f in _fires(detail)
            if f.date() == date(2027, 11, 7)
        ]

    assert fall_back("FIRST") == ["2027-11-07T01:30:00-04:00"]
    assert fall_back("LAST") == ["2027-11-07T01:30:00-05:00"]
    assert fall_back("BOTH") == ["2027-11-07T01:30:00-04:00", "2027-11-07T01:30:00-05:00"]


def test_a_missing_time_shifted_lands_once_even_where_the_schedule_fires_anyway() -> None:
    detail = {"cron": "*/30 * * * *", "timezone": "America/New_York", "dstMissing": "SHIFT"}
    zone = ZoneInfo("America/New_York")
    night = [
        f.astimezone(zone).strftime("%H:%M%z")
        for f in _fires(detail, days=80)
        if f.astimezone(zone).date() == date(2027, 3, 14) and f.astimezone(zone).hour < 5
    ]
    # 02:00 and 02:30 do not exist: 02:00 shifted is 03:00, which the schedule has anyway
    assert night == ["00:00-0500", "00:30-0500", "01:00-0500", "01:30-0500", "03:00-0400",
                     "03:30-0400", "04:00-0400", "04:30-0400"]  # fmt: skip


@pytest.mark.parametrize("when", [{"rate": "rate(1 hour)"}, {"duration": "1h"}])
def test_a_policy_on_elapsed_time_is_refused_naming_the_field(when: dict[str, str]) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_start_detail({"id": "dst", "dstRepeated": "BOTH", **when}, now=YEAR_START)
    assert [p.field for p in refused.value.problems] == ["dstRepeated"]


def test_a_bad_policy_is_refused_with_its_choices() -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_start_detail(
            {"id": "dst", "cron": "0 9 * * *", "dstRepeated": "TWICE", "dstMissing": "LATER"},
            now=YEAR_START,
        )
    problems = {p.field: p.fix for p in refused.value.problems}
    assert "FIRST" in problems["dstRepeated"] and "SHIFT" in problems["dstMissing"]


def test_the_fires_around_the_next_change_show_the_policy() -> None:
    around = around_dst_change(
        {"cron": "30 1 * * *", "timezone": "America/New_York", "dstRepeated": "BOTH"},
        datetime(2027, 10, 1, tzinfo=UTC),
    )
    assert around is not None
    assert around.change == datetime(2027, 11, 7, 6, 0, tzinfo=UTC)
    assert around.before[-1] == datetime(2027, 11, 7, 5, 30, tzinfo=UTC)  # 01:30 EDT
    assert around.after[0] == datetime(2027, 11, 7, 6, 30, tzinfo=UTC)  # 01:30 EST, again
    assert around.offset_before == timedelta(hours=-4)
    assert around.offset_after == timedelta(hours=-5)
    assert around_dst_change({"cron": "0 9 * * *"}, YEAR_START) is None  # UTC has no change
