"""A year of a daily cron on virtual time, through the real state machines: 365 fires at local
09:00 across both DST changes, none early, none doubled (issue 31's measure: its own file, the
longest of the suite, so the workers share the rest around it)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.support import Stack, assert_never_early, now
from tickwork.domain.action import Status
from tickwork.domain.times import parse_iso


@pytest.mark.timeout(600)  # about 50 s of wall time on an idle 2-core machine (README)
def test_a_daily_cron_across_dst_advanced_a_year_fires_365_times_at_local_nine(
    stack: Stack,
) -> None:
    # GIVEN a daily 09:00 cron in New York (two DST changes a year), from a virtual midnight
    zone = ZoneInfo("America/New_York")
    stack.local.time.advance_to(datetime(2027, 1, 1, 5, tzinfo=UTC).timestamp())
    began = now()
    stack.start({"id": "daily:ny", "cron": "0 9 * * *", "timezone": "America/New_York"})
    stack.wait_record("daily:ny", lambda a: a.status is Status.PENDING)

    # WHEN the stack's clock is advanced a year (365 days: 2027 is no leap year)
    wall = time.monotonic()
    done = stack.local.time.advance(365 * 86400)
    print(f"\na year of a daily cron: {done.steps} steps, {time.monotonic() - wall:.1f}s wall")

    # THEN it fired 365 times, once per occurrence, each at 09:00 New York time, never early
    ticks = stack.ticks_for("daily:ny")
    assert len(ticks) == 365
    assert sorted(t["occurrence"] for t in ticks) == list(range(1, 366))
    assert_never_early(ticks)
    local_times = {parse_iso(t["scheduledTime"]).astimezone(zone).time().isoformat() for t in ticks}
    assert local_times == {"09:00:00"}
    offsets = {parse_iso(t["scheduledTime"]).astimezone(zone).utcoffset() for t in ticks}
    assert offsets == {timedelta(hours=-5), timedelta(hours=-4)}  # both sides of DST
    # AND each fired at its instant (the lateness is the work of the fire, not of the advance)
    assert all(
        parse_iso(t["actualTime"]) - parse_iso(t["scheduledTime"]) < timedelta(seconds=5)
        for t in ticks
    )
    assert now() >= began + timedelta(days=365)
    assert stack.record("daily:ny").occurrence == 366
