"""A year of a cron on virtual time, through the real state machines, across both DST changes:
every fire at local 09:00, none early, none doubled.

``make test`` runs a weekly cron for the year (52 fires, two of them on the days the clocks
change). Issue 31's measure, a daily cron for the year (365 fires), is ``make year``: it prints
its wall time, and CI runs it beside ``make test``."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.support import Stack, assert_never_early, now
from tickwork.domain.action import Status
from tickwork.domain.times import parse_iso

ZONE = ZoneInfo("America/New_York")
FULL_YEAR = os.environ.get("TICKWORK_DAILY_YEAR") == "1"  # set by `make year`


def _a_year_of(
    stack: Stack, action_id: str, cron: str, capsys: pytest.CaptureFixture[str]
) -> list[dict]:
    """Start ``cron`` in New York at a virtual 2027-01-01 00:00 local, advance the stack's
    clock 365 days (2027 is no leap year), print the wall time it took, and return the
    action's ticks."""
    stack.local.time.advance_to(datetime(2027, 1, 1, 5, tzinfo=UTC).timestamp())
    began = now()
    stack.start({"id": action_id, "cron": cron, "timezone": "America/New_York"})
    stack.wait_record(action_id, lambda a: a.status is Status.PENDING)
    wall = time.monotonic()
    done = stack.local.time.advance(365 * 86400)
    with capsys.disabled():  # the figure, shown without -s (the stack's logs are not)
        print(f"\na year of `{cron}`: {done.steps} steps, {time.monotonic() - wall:.1f}s wall")
    assert now() >= began + timedelta(days=365)
    return stack.ticks_for(action_id)


def _each_once_at_local_nine(ticks: list[dict], fires: int) -> None:
    assert len(ticks) == fires
    assert sorted(t["occurrence"] for t in ticks) == list(range(1, fires + 1))
    assert_never_early(ticks)
    local = [parse_iso(t["scheduledTime"]).astimezone(ZONE) for t in ticks]
    assert {moment.time().isoformat() for moment in local} == {"09:00:00"}
    assert {moment.utcoffset() for moment in local} == {timedelta(hours=-5), timedelta(hours=-4)}
    # Each fired at its instant: the lateness is the work of the fire, not of the advance.
    assert all(
        parse_iso(t["actualTime"]) - parse_iso(t["scheduledTime"]) < timedelta(seconds=5)
        for t in ticks
    )


def test_a_weekly_cron_across_dst_advanced_a_year_fires_52_times_at_local_nine(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a Sunday 09:00 cron in New York; WHEN advanced a year
    ticks = _a_year_of(stack, "weekly:ny", "0 9 * * 0", capsys)
    # THEN the 52 Sundays of 2027 fired once each at 09:00 local, never early
    _each_once_at_local_nine(ticks, 52)
    # AND the two Sundays the clocks changed on fired at 09:00 of their new offset
    changed = {
        parse_iso(t["scheduledTime"]).astimezone(ZONE).date().isoformat(): parse_iso(
            t["scheduledTime"]
        )
        for t in ticks
    }
    assert changed["2027-03-14"] == datetime(2027, 3, 14, 13, tzinfo=UTC)  # EDT, UTC-4
    assert changed["2027-11-07"] == datetime(2027, 11, 7, 14, tzinfo=UTC)  # EST, UTC-5
    assert stack.record("weekly:ny").occurrence == 53


@pytest.mark.skipif(not FULL_YEAR, reason="a daily cron for a year is `make year` (CI runs it)")
@pytest.mark.timeout(600)  # about 50 s of wall time on an idle 2-core machine (README)
def test_a_daily_cron_across_dst_advanced_a_year_fires_365_times_at_local_nine(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a daily 09:00 cron in New York; WHEN advanced a year
    ticks = _a_year_of(stack, "daily:ny", "0 9 * * *", capsys)
    # THEN it fired 365 times, once per occurrence, each at 09:00 New York time, never early
    _each_once_at_local_nine(ticks, 365)
    assert stack.record("daily:ny").occurrence == 366
