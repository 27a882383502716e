"""GIVEN the parked-fires and fire-tallies ports (fake and DynamoDB) WHEN fires are parked and
recorded THEN both answer alike: due fires earliest first, and counts by minute and hour."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.contract.conftest import Stores
from tests.fire_totals import record_fires
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.times import to_epoch_ms


def test_parked_fires_come_due_earliest_first(stores: Stores) -> None:
    now = stores.clock.now()
    for action_id, hours in (("p:3", 3), ("p:1", 1), ("p:2", 2), ("p:far", 30)):
        stores.add(action_id, minutes=hours * 60 + 15, launch_at=now + timedelta(hours=hours))
    stores.add("p:launched", minutes=60)  # has its execution: not parked

    def parked_due(until: datetime, limit: int = 1000) -> list[str]:
        # (the ByStatus path may list a pending fire that is not parked: the pump reads each)
        found = stores.parked.due(until, limit)
        return [i for i in found if (a := stores.records.get(i)) is not None and a.is_parked]

    assert parked_due(now) == []
    assert parked_due(now + timedelta(hours=2, minutes=30)) == ["p:1", "p:2"]
    capped = parked_due(now + timedelta(hours=4), limit=2)  # the earliest, within the limit
    assert capped and capped == ["p:1", "p:2"][: len(capped)]
    assert parked_due(now + timedelta(hours=4)) == ["p:1", "p:2", "p:3"]


def test_a_first_call_finds_a_fire_due_since_the_hour_before(stores: Stores) -> None:
    # GIVEN a new stack (no watermark) holding fires whose launch moments passed before the
    # pump's first run: one in the hour before, one earlier
    now = stores.clock.now()
    stores.add("p:late", minutes=5, launch_at=now - timedelta(minutes=50))
    stores.add("p:older", minutes=5, launch_at=now - timedelta(hours=3))
    stores.add("p:now", minutes=5, launch_at=now)

    # THEN the first call launches those of this hour and the one before (a fire older than
    # that is the reconciler's: it starts a parked fire the pump missed)
    found = stores.parked.due(now)
    assert {"p:late", "p:now"} <= set(found) and found.index("p:late") < found.index("p:now")


def test_a_fire_parked_again_due_now_is_found_by_the_next_call(stores: Stores) -> None:
    now = stores.clock.now()
    assert stores.parked.due(now) == []  # a first call sets the watermark
    stores.clock.advance(minutes=3)
    refused = stores.add("p:again", minutes=1, launch_at=stores.clock.now())

    assert stores.parked.due(stores.clock.now()) == [refused.id]


def test_a_workers_shards_together_hold_every_due_fire_and_leave_the_watermark(
    stores: Stores,
) -> None:
    # GIVEN fires due across shards (ids shaped alike, as a busy tenant's are)
    now = stores.clock.now()
    ids = [f"p:{n:03d}" for n in range(40)]
    for n, action_id in enumerate(ids):
        stores.add(action_id, minutes=90, launch_at=now + timedelta(hours=1, seconds=n))
    assert stores.parked.due(now) == []  # the run's watermark: this hour on
    until = now + timedelta(hours=3)  # a watermark moved to it would pass them by

    # WHEN each shard is read, as the workers read them
    by_shard = [stores.parked.due_moments(until, 1000, shard=k) for k in stores.parked.shards]

    # THEN each due fire is in exactly one shard, each shard's earliest first
    found = [action_id for shard in by_shard for _, action_id in shard]
    assert sorted(found) == ids and len(found) == len(set(found))
    assert all(shard == sorted(shard) for shard in by_shard)
    assert sum(1 for shard in by_shard if shard) > 1
    # and reading shards moved no watermark: the run still finds them all
    stores.clock.advance(hours=3)
    assert sorted(stores.parked.due(until)) == ids


def test_a_fire_parked_far_is_passed_only_once_a_run_finished_it(stores: Stores) -> None:
    # GIVEN fires parked far (found by their fire time, launched without a write) in windows of
    # their own, and one parked near (in the Parked index: the pump names its execution)
    now = stores.clock.now()
    far = [
        stores.add(
            f"p:{n:03d}",
            minutes=90 + n,
            launch_at=now + timedelta(minutes=75 + n),
            far_park=True,
        )
        for n in range(6)
    ]
    near = stores.add("p:near", minutes=90, launch_at=now + timedelta(minutes=75))
    assert all(a.parked_far for a in far) and not near.parked_far
    assert stores.parked.passed([*far, near]) == set()  # no run has read them

    # WHEN a run reads them due and finishes all but the fourth
    until = now + timedelta(hours=2)
    found = stores.parked.due_moments(until, 1000)
    assert {a.id for a in far} <= {i for _, i in found}
    held = [m for m in found if m[1] == far[3].id]
    stores.parked.advance(until, held)

    # THEN those before it are passed, it is not, nor is a fire parked near, whatever happened
    passed = stores.parked.passed([*far, near])
    assert {a.id for a in far[:3]} <= passed
    assert far[3].id not in passed and near.id not in passed
    # and once a run finishes it too, every far one is
    stores.parked.due_moments(until, 1000)
    stores.parked.advance(until, [])
    assert stores.parked.passed([*far, near]) == {a.id for a in far}


def test_fires_are_tallied_by_minute_and_hour_all_and_by_group(stores: Stores) -> None:
    at = stores.clock.now()
    minute = to_epoch_ms(at) // 60_000
    record_fires(
        stores.records, "a", [(at, FireKind.ON_TIME), (at + timedelta(seconds=30), FireKind.LATE)]
    )
    record_fires(stores.records, "b", [(at + timedelta(minutes=1), FireKind.FAILED)])

    assert stores.tallies.read(None, False, minute, minute + 1) == {
        minute: {"onTime": 1, "late": 1},
        minute + 1: {"failed": 1},
    }
    assert stores.tallies.read("b", False, minute, minute + 1) == {minute + 1: {"failed": 1}}
    assert stores.tallies.read("a", True, minute // 60, minute // 60) == {
        minute // 60: {"onTime": 1, "late": 1}
    }
    assert stores.tallies.read("c", False, minute, minute + 5) == {}
