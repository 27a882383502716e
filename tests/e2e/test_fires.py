"""GIVEN the stack from template.yaml WHEN actions come due THEN each occurrence fires once."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from itertools import pairwise

from tests.e2e.support import Stack, assert_never_early, in_seconds, wait_until
from tickwork.config import Settings
from tickwork.domain.action import Status
from tickwork.domain.batch import window_of
from tickwork.domain.times import iso, parse_iso
from tickwork.fire.sealing import seal_of


def test_one_off_fires_once_and_completes(stack: Stack) -> None:
    # GIVEN a one-off TICK action due in 2 seconds
    at = in_seconds(2)
    stack.start({"id": "order:1:remind", "at": at, "data": {"order": 1}})

    # WHEN it comes due
    action = stack.wait_record("order:1:remind", lambda a: a.status == Status.COMPLETED)
    stack.local.wait_idle()

    # THEN exactly one tick was emitted, not early, carrying the action's data
    ticks = stack.ticks_for("order:1:remind", count=1, timeout=2)
    assert len(ticks) == 1
    assert ticks[0]["data"] == {"order": 1}
    assert ticks[0]["outcome"] == "FIRED"
    assert parse_iso(ticks[0]["scheduledTime"]) >= parse_iso(at)
    assert_never_early(ticks)
    # AND the record holds the occurrence and expires later
    assert [h.occurrence for h in action.history] == [1]
    assert action.ttl is not None
    assert [e["detail-type"] for e in stack.lifecycle.drain()].count("Schedule Completed") == 1


def test_recurring_fires_exactly_n_times(stack: Stack) -> None:
    # GIVEN an action every 2 seconds, 3 times
    stack.start(
        {"id": "daily:5", "rate": "rate(2 seconds)", "repeat": True, "executionRemainder": 3}
    )

    # WHEN the chain runs out
    action = stack.wait_record("daily:5", lambda a: a.status == Status.COMPLETED, timeout=20)
    stack.local.wait_idle()

    # THEN 3 ticks, numbered 1..3, in order, 2 s apart, none early; one execution per fire
    ticks = stack.ticks_for("daily:5", count=3, timeout=2)
    assert [t["occurrence"] for t in ticks] == [1, 2, 3]
    scheduled = [parse_iso(t["scheduledTime"]) for t in ticks]
    assert [(b - a).total_seconds() for a, b in pairwise(scheduled)] == [
        2.0,
        2.0,
    ]
    assert_never_early(ticks)
    assert len([e for e in stack.executions() if e["status"] == "SUCCEEDED"]) == 3
    assert [h.occurrence for h in action.history] == [1, 2, 3]


def test_unknown_action_type_found_at_run_time_ends_no_action_without_retries(stack: Stack) -> None:
    # GIVEN a validly sealed action whose type nobody registers any more (a deploy dropped it;
    # a hand edit would break the seal first: tests/e2e/test_security.py)
    stack.start({"id": "tampered", "at": in_seconds(2)})
    current = stack.wait_record("tampered", lambda a: a.status == Status.PENDING)
    retyped = replace(current, action="LAUNCH_ROCKET", version=current.version + 1)
    stack.records.save(replace(retyped, seal=seal_of(retyped, stack.deps)), current.version)

    # WHEN it comes due
    action = stack.wait_record("tampered", lambda a: a.status == Status.NO_ACTION)
    stack.local.wait_idle()

    # THEN nothing ran, the fulfill function was called once (no retries), and the tick says why
    assert len(stack.invocations("FulfillFunction")) == 1
    ticks = stack.ticks_for("tampered", count=1, timeout=2)
    assert [t["outcome"] for t in ticks] == ["NO_ACTION"]
    assert "LAUNCH_ROCKET" in ticks[0]["result"]["reason"]
    assert action.history[-1].outcome == "NO_ACTION"


def test_a_parked_fire_gets_its_execution_from_the_pump_and_fires_once_on_time(
    make_stack,
) -> None:
    # GIVEN a horizon of 2 seconds, a pump every second, and a fire 6 seconds away
    stack = make_stack(LaunchAheadSeconds="2", PumpSchedule="rate(1 second)")
    at = in_seconds(6)
    stack.start({"id": "far:away", "at": at})

    # THEN until it comes within the horizon it waits in the table, with no execution
    parked = stack.wait_record("far:away", lambda a: a.launch_at is not None)
    assert parked.execution_arn is None and stack.executions() == []
    assert parked.execution_time is not None and parked.launch_at is not None
    # from the start of its batch window (BatchWindowSeconds, 20 by default)
    launch_from = window_of(parked.execution_time, Settings.batch_window)
    assert launch_from - parked.launch_at == timedelta(seconds=2)

    # WHEN it comes due
    done = stack.wait_record("far:away", lambda a: a.status == Status.COMPLETED, timeout=20)
    stack.local.wait_idle()

    # THEN the pump started one execution for it, which fired it once, not early
    assert done.execution_arn is not None
    assert [e["executionArn"] for e in stack.executions()] == [done.execution_arn]
    ticks = stack.ticks_for("far:away", count=1, timeout=2)
    assert len(ticks) == 1 and ticks[0]["scheduledTime"] == at
    assert_never_early(ticks)


def _pump_runs(stack: Stack) -> list[dict]:
    return [i.result for i in stack.invocations("PumpFunction") if isinstance(i.result, dict)]


def test_fires_refused_by_the_open_execution_quota_wait_parked_and_fire_once(make_stack) -> None:
    # GIVEN an account whose open-execution quota is full (AWS: 1,000,000 by default)
    stack = make_stack(max_open_executions=0)

    # WHEN 5 fires are due within the horizon, 3 seconds from now
    at = in_seconds(3)
    for n in range(5):
        stack.start({"id": f"quota:{n}", "at": at})

    # THEN each start is refused and the fire parked again, due now, and the pump's retries
    # are refused too
    for n in range(5):
        stack.wait_record(f"quota:{n}", lambda a: a.is_parked and a.launch_at is not None)
    wait_until(lambda: sum(len(run["refused"]) for run in _pump_runs(stack)) >= 1)

    # WHEN the account has room for 2 executions again
    stack.local.max_open_executions = 2

    # THEN the pump launches them as executions end, each fire happens once, none early
    for n in range(5):
        stack.wait_record(f"quota:{n}", lambda a: a.status == Status.COMPLETED, timeout=60)
    assert sum(len(run["launched"]) for run in _pump_runs(stack)) == 5
    ticks = [t for n in range(5) for t in stack.ticks_for(f"quota:{n}", count=1, timeout=5)]
    assert sorted(t["id"] for t in ticks) == [f"quota:{n}" for n in range(5)]
    assert_never_early(ticks)


def test_a_busy_pump_run_hands_out_shares_to_its_workers_and_each_fire_happens_once(
    make_stack,
) -> None:
    # GIVEN a pump that hands its shards to workers past 3 fires due, and shares of 3 past it
    stack = make_stack(LaunchAheadSeconds="2", PumpSchedule="rate(1 second)", PumpShareFires="3")
    at = window_of(parse_iso(in_seconds(10)), Settings.batch_window) + Settings.batch_window
    ids = [f"busy:{n:02d}" for n in range(12)]
    for n, action_id in enumerate(ids):  # two batch windows, each fire at its own millisecond
        when = at + timedelta(milliseconds=997 * n)
        stack.start({"id": action_id, "at": iso(when)})
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.launch_at is not None)

    # WHEN they come due
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=60)
    stack.local.wait_idle()

    # THEN the pump handed its shards to its workers, which launched each fire once
    worked = [i for i in stack.invocations("PumpWorkerFunction") if isinstance(i.result, dict)]
    by_pump = [i for run in _pump_runs(stack) for i in run["launched"]]
    by_workers = [i for w in worked for i in w.result["launched"]]
    handed = [i for run in _pump_runs(stack) for i in run["handed_out"]]
    assert any(h.startswith("shard ") for h in handed)
    assert {w.event["shard"] for w in worked if "shard" in w.event} >= {
        int(h.removeprefix("shard ")) for h in handed
    }
    assert sorted(by_pump + by_workers) == ids
    # and each fired once, never early
    ticks = [t for i in ids for t in stack.ticks_for(i, count=1, timeout=5)]
    assert sorted(t["id"] for t in ticks) == ids
    assert_never_early(ticks)


def test_near_one_offs_wait_for_the_pump_and_share_one_batch_of_their_window(make_stack) -> None:
    # GIVEN a stack whose near one-offs wait for the pump's next run (NearParkSeconds 300), on
    # the template's 15-minute horizon (the tests' stack launches 5 s ahead)
    stack = make_stack(LaunchAheadSeconds="900", NearParkSeconds="300", BatchMinFires="3")
    at = window_of(parse_iso(in_seconds(600)), Settings.batch_window) + Settings.batch_window
    ids = [f"near:{n}" for n in range(4)]

    # WHEN four one-offs of one batch window are created ~10 minutes before it (within the
    # 15-minute horizon), and one 2 minutes before its own fire (within NearParkSeconds)
    for n, action_id in enumerate(ids):
        stack.start({"id": action_id, "at": iso(at + timedelta(milliseconds=150 * n))})
    stack.start({"id": "soon", "at": in_seconds(120)})

    # THEN the four wait parked, due now, with no execution; the soon one has its own at once
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.launch_at is not None)
        assert stack.record(action_id).execution_arn is None
    stack.wait_record("soon", lambda a: a.execution_arn is not None)

    # WHEN they come due: the pump's next run started the four as one batch
    for action_id in [*ids, "soon"]:
        stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=60)
    runs = [run for run in _pump_runs(stack) if run["launched"]]
    assert sorted(i for run in runs for i in run["launched"]) == ids
    assert sum(len(run["batches"]) for run in runs) == 1
    # and each fired once, never early
    ticks = [t for i in [*ids, "soon"] for t in stack.ticks_for(i, count=1, timeout=5)]
    assert sorted(t["id"] for t in ticks) == sorted([*ids, "soon"])
    assert_never_early(ticks)
