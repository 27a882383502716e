"""The one time module: wire text rounded up to the millisecond, stored instants exact, user
input refused naming the field, and naive local times read on the zone's wall clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.wallclock import parse_local
from tickwork.domain.times import (
    from_epoch_ms,
    iso,
    iso_exact,
    parse_epoch_ms,
    parse_iso,
    to_epoch_ms,
)

MOMENT = datetime(2026, 3, 8, 6, 30, 0, 250_001, tzinfo=UTC)


def test_the_wire_form_rounds_up_to_the_millisecond_and_reads_back() -> None:
    assert iso(MOMENT) == "2026-03-08T06:30:00.251Z"
    assert parse_iso(iso(MOMENT)) == MOMENT + timedelta(microseconds=999)
    assert parse_iso(iso(MOMENT)) >= MOMENT  # never earlier than the computed instant


def test_the_stored_form_is_exact() -> None:
    assert iso_exact(MOMENT) == "2026-03-08T06:30:00.250001Z"
    assert parse_iso(iso_exact(MOMENT)) == MOMENT
    assert iso_exact(MOMENT.replace(microsecond=0)) == "2026-03-08T06:30:00Z"


def test_epoch_milliseconds_round_trip_rounding_up() -> None:
    assert to_epoch_ms(MOMENT) == 1772951400251
    assert from_epoch_ms(1772951400251) == datetime(2026, 3, 8, 6, 30, 0, 251_000, tzinfo=UTC)


def test_any_offset_reads_as_utc() -> None:
    kl = datetime(2026, 3, 8, 14, 30, tzinfo=timezone(timedelta(hours=8)))
    assert parse_iso("2026-03-08T14:30:00+08:00") == kl.astimezone(UTC)


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-08T06:30:00",
        "yesterday",
        "",
        "0001-01-01T00:00:00+01:00",  # before the year 1 in UTC
        "9999-12-31T23:00:00-05:00",  # after the year 9999 in UTC
    ],
)
def test_a_time_without_an_offset_or_not_a_time_is_refused_naming_the_field(text: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_iso(text, "scheduledTime")
    (problem,) = refused.value.problems
    assert problem.field == "scheduledTime" and "2026-05-01T09:00:00Z" in problem.fix


def test_epoch_seconds_given_as_milliseconds_are_refused() -> None:
    with pytest.raises(ValidationFailed, match="epoch seconds"):
        parse_epoch_ms(1_772_951_400, "executionTime")


def test_a_naive_local_time_is_read_on_the_zones_wall_clock() -> None:
    new_york = ZoneInfo("America/New_York")
    assert parse_local("2026-03-08T01:30:00", new_york, "at") == datetime(
        2026, 3, 8, 6, 30, tzinfo=UTC
    )
    with pytest.raises(ValidationFailed, match="the clocks skip it"):
        parse_local("2026-03-08T02:30:00", new_york, "at")  # the spring-forward gap
