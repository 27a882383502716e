"""Fire totals come from counters kept as each fire is recorded: once per fire however often
its tick is delivered, by minute and hour, in all and in its group; /stats windows and chart
buckets read a bounded number of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.fire_totals import record_fires
from tests.unit.fakes import attempt, fake_dependencies
from tests.unit.machine import fulfill_fire
from tickwork.api.stats import fire_buckets, fire_counts
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso
from tickwork.fire.record import record_tick
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def test_a_recorded_fire_is_counted_once_however_often_its_tick_comes() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "r", "rate": "rate(10 minutes)", "group": "g"}), deps)
    deps.clock.current = NOW + timedelta(minutes=10)
    tick = fulfill_fire(attempt("r", 1, iso(NOW + timedelta(minutes=10))), deps)

    record_tick(tick, deps)
    record_tick(tick, deps)  # delivered again

    minute = int((NOW + timedelta(minutes=10)).timestamp()) // 60
    assert deps.tallies.read(None, False, minute, minute) == {minute: {"onTime": 1}}
    assert deps.tallies.read("g", True, minute // 60, minute // 60) == {minute // 60: {"onTime": 1}}


def test_windows_and_buckets_add_up_the_counters() -> None:
    deps = fake_dependencies(NOW)
    fires = {
        "a": [(timedelta(minutes=10), FireKind.ON_TIME), (timedelta(minutes=20), FireKind.LATE),
              (timedelta(hours=3), FireKind.ON_TIME), (timedelta(days=2), FireKind.ON_TIME)],
        "b": [(timedelta(minutes=30), FireKind.FAILED),
              (timedelta(hours=23, minutes=59), FireKind.ON_TIME)],
    }  # fmt: skip
    for group, ago_kinds in fires.items():
        record_fires(deps.records, group, [(NOW - ago, kind) for ago, kind in ago_kinds])

    everything = fire_counts(deps.queries, deps.tallies, Selection(), NOW)
    assert everything == {
        "lastHour": {"fired": 2, "late": 1, "failed": 1},
        "lastDay": {"fired": 4, "late": 1, "failed": 1},
    }
    assert fire_counts(deps.queries, deps.tallies, Selection(group="a"), NOW)["lastDay"] == {
        "fired": 3,
        "late": 1,
        "failed": 0,
    }
    buckets = fire_buckets(deps.tallies, NOW, 60, 10)["buckets"]
    assert [(b["onTime"], b["late"], b["failed"]) for b in buckets] == [
        (0, 0, 0), (0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 0, 0),
    ]  # fmt: skip
    hourly = fire_buckets(deps.tallies, NOW, 24 * 60, 60)["buckets"]
    # 24 whole hours, the last holding now: the fire 23 h 59 min ago is in the hour before them
    assert sum(b["onTime"] for b in hourly) == 2 and len(hourly) == 24
