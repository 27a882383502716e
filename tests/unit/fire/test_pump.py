"""Parked fires: further away than LaunchAheadSeconds a fire waits in the table with no
execution; the pump starts it when it comes within the horizon, once, and nothing is lost when
a change races the pump or Step Functions refuses a start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.unit.fakes import attempt, fake_dependencies
from tests.unit.fakes.stores import FakeRecords
from tests.unit.machine import fulfill_fire
from tests.unit.machine import run as run_execution
from tickwork.domain.action import Status
from tickwork.domain.errors import RepairsIncomplete
from tickwork.domain.naming import execution_name
from tickwork.domain.times import iso
from tickwork.fire.pump import launch_share, pump, pump_shard
from tickwork.fire.reconcile import reconcile
from tickwork.fire.record import record_tick
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
AHEAD = timedelta(minutes=15)


@pytest.fixture
def deps():
    return fake_dependencies(NOW, launch_ahead=AHEAD)


def _start(deps, action_id: str, **when: str) -> None:
    start_action(StartCommand({"id": action_id, **when}, f"ev-{action_id}"), deps)


def _fire(deps, action_id: str) -> None:
    """Its execution fires it at its time, and the tick is recorded."""
    action = deps.records.items[action_id]
    deps.clock.current = action.execution_time
    due = iso(action.execution_time)
    fire = attempt(action_id, action.occurrence, due, generation=action.generation)
    record_tick(fulfill_fire(fire, deps), deps)


def _started(deps) -> list[str]:
    """The ids of the fires in the executions started, once for each execution: a fire parked
    far is launched without a write (its record still parked, naming none)."""
    members = [m.action_id for b in deps.batches.started.values() for m in b.members]
    return members + [o.action_id for o in deps.executions.started.values()]


def test_the_pump_launches_a_parked_fire_once_when_it_comes_within_the_horizon(deps) -> None:
    _start(deps, "far", at=iso(NOW + timedelta(hours=2)))

    # before its launch moment: nothing
    deps.clock.advance(minutes=104)
    assert pump(deps) == {
        "launched": [],
        "moved": [],
        "refused": [],
        "batches": [],
        "failed": [],
        "handed_out": [],
        "waiting": [],
    }
    assert deps.executions.started == {}

    # at it: one execution, waiting to the fire itself; the record, parked far, is not written
    # (it names no execution: the first proved execution of its fire to claim it runs it)
    deps.clock.advance(minutes=1)
    before = deps.records.items["far"]
    assert pump(deps)["launched"] == ["far"]
    name = execution_name("far", 1, 1, key=None)
    assert list(deps.executions.started) == [name]
    assert deps.executions.started[name].wait_until == NOW + timedelta(hours=2)
    record = deps.records.items["far"]
    assert record.version == before.version and record.execution_arn is None
    assert record.waits_for(deps.executions.execution_arn(name))

    # again: nothing more
    assert pump(deps)["launched"] == []
    assert len(deps.executions.started) == 1


def test_a_pump_that_was_down_launches_everything_it_missed_earliest_first(deps) -> None:
    assert pump(deps)["launched"] == []  # the pump runs from the stack's first minute on
    for n, hours in enumerate((5, 3, 4)):
        _start(deps, f"a{n}", at=iso(NOW + timedelta(hours=hours)))

    deps.clock.advance(hours=6)  # then is down: it runs never in between

    assert pump(deps)["launched"] == ["a1", "a2", "a0"]
    assert len(deps.executions.started) == 3


def test_cancelling_or_updating_a_parked_action_touches_only_the_table(deps) -> None:
    _start(deps, "c", at=iso(NOW + timedelta(days=3)))
    _start(deps, "u", rate="rate(1 day)")

    cancel_action("c", deps)
    start_action(StartCommand({"id": "u", "rate": "rate(2 days)"}, "ev-u2"), deps)

    assert deps.executions.stopped == [] and deps.executions.started == {}
    assert deps.records.items["c"].status == Status.CANCELLED
    updated = deps.records.items["u"]
    assert (updated.generation, updated.launch_at) == (2, NOW + timedelta(days=2) - AHEAD)
    assert pump(deps)["launched"] == []  # the pump runs from the stack's first minute on
    deps.clock.advance(days=4)
    assert pump(deps)["launched"] == ["u"]  # the cancelled one is gone from the index
    assert list(deps.executions.started) == [execution_name("u", 2, 1, key=None)]


def test_a_recurrence_parks_its_next_fire_when_it_is_beyond_the_horizon(deps) -> None:
    _start(deps, "r", rate="rate(10 minutes)")
    assert list(deps.executions.started) == [execution_name("r", 1, 1, key=None)]
    _fire(deps, "r")
    assert deps.records.items["r"].launch_at is None  # 10 minutes: within the horizon

    start_action(StartCommand({"id": "r", "rate": "rate(1 hour)"}, "ev-r2"), deps)
    assert deps.records.items["r"].is_parked
    deps.clock.advance(minutes=45)
    assert pump(deps)["launched"] == ["r"]
    _fire(deps, "r")
    after = deps.records.items["r"]
    assert (after.status, after.occurrence, after.execution_arn) == (Status.PENDING, 2, None)
    assert after.launch_at == after.execution_time - AHEAD


def test_a_refused_start_parks_the_fire_again_and_the_pump_retries_it(deps) -> None:
    deps.executions.refusals = ["ExecutionLimitExceeded"]

    _start(deps, "soon", at=iso(NOW + timedelta(minutes=5)))

    record = deps.records.items["soon"]
    assert deps.executions.started == {}
    assert (record.status, record.launch_at, record.execution_arn) == (Status.PENDING, NOW, None)
    assert pump(deps)["launched"] == ["soon"]
    assert list(deps.executions.started) == [execution_name("soon", 1, 1, key=None)]


def test_a_late_launch_runs_at_once_and_finds_the_record_naming_it(deps) -> None:
    # GIVEN a parked fire whose launch came late: its execution runs (and claims it) at once
    _start(deps, "late", at=iso(NOW + timedelta(hours=1)))
    deps.clock.advance(hours=1, seconds=1)
    start = deps.executions.start

    def start_and_claim_at_once(name, order):
        arn = start(name, order)
        fulfill_fire(attempt("late", 1, iso(order.fire_at), name), deps)
        return arn

    deps.executions.start = start_and_claim_at_once

    # WHEN the pump launches it
    run = pump(deps)

    # THEN the record named the execution before it started, so its claim holds at once
    assert run == {
        "launched": ["late"],
        "moved": [],
        "refused": [],
        "batches": [],
        "failed": [],
        "handed_out": [],
        "waiting": [],
    }
    own = deps.executions.execution_arn(execution_name("late", 1, 1, key=None))
    assert deps.records.items["late"].claimed_by == own


def test_a_refusal_in_the_pump_leaves_the_rest_parked_for_the_next_run(deps) -> None:
    for n in range(3):
        _start(deps, f"p{n}", at=iso(NOW + timedelta(hours=1, minutes=n)))
    deps.clock.advance(hours=1)
    deps.executions.refusals = ["ThrottlingException"]

    first = pump(deps, workers=1)

    assert first == {
        "launched": [],
        "moved": [],
        "refused": ["p0"],
        "batches": [],
        "failed": [],
        "handed_out": [],
        "waiting": [],
    }
    assert all(deps.records.items[f"p{n}"].is_parked for n in range(3))
    assert sorted(pump(deps)["launched"]) == ["p0", "p1", "p2"]


def test_a_share_s_worker_parks_due_now_what_a_refusal_left_it(deps) -> None:
    """A share handed to a worker: its shard's watermark has passed it, so each fire the worker
    read due and did not launch is parked due now (the Parked index), for the next run."""
    for n in range(3):
        _start(deps, f"s{n}", at=iso(NOW + timedelta(hours=1, minutes=n)))
    deps.clock.advance(hours=1)
    deps.executions.refusals = ["ThrottlingException"]

    deps.parked.advance(deps.clock.now(), [])  # the run that handed the share out passed it
    run = launch_share(["s0", "s1", "s2"], deps.clock.now(), deps)

    assert run.refused and len(run.launched) < 3  # (launches run side by side: some may go)
    now = deps.clock.now()
    for action_id in sorted({"s0", "s1", "s2"} - set(run.launched)):
        left = deps.records.items[action_id]
        assert left.is_parked and left.launch_at == now == left.updated_at, left
    assert sorted(pump(deps)["launched"] + run.launched) == ["s0", "s1", "s2"]


def test_a_cancel_racing_the_pump_wins_and_nothing_fires(deps) -> None:
    _start(deps, "race", at=iso(NOW + timedelta(hours=1)))
    deps.clock.advance(minutes=46)
    real_start = deps.executions.start

    def cancelled_then_start(name, order):
        if deps.records.items["race"].status == Status.PENDING:
            cancel_action("race", deps)  # lands between the pump's mark and its start
        return real_start(name, order)

    deps.executions.start = cancelled_then_start
    run = pump(deps)

    # THEN the cancel stopped the execution the record named, and were it to run all the same
    # it would find its fire cancelled: nothing fires
    assert run["launched"] == ["race"]
    name = execution_name("race", 1, 1, key=None)
    assert deps.executions.stopped == [deps.executions.execution_arn(name)]
    assert deps.records.items["race"].status == Status.CANCELLED
    assert run_execution(deps, name) is None


def test_a_paused_parked_action_resumes_parked_again(deps) -> None:
    _start(deps, "p", rate="rate(1 day)")
    pause_action("p", "holiday", deps)
    assert deps.records.items["p"].status == Status.PAUSED
    assert deps.executions.stopped == []
    deps.clock.advance(hours=3)
    resume_action("p", None, deps)
    resumed = deps.records.items["p"]
    assert resumed.is_parked and resumed.execution_arn is None
    assert pump(deps)["launched"] == []


def test_the_reconciler_launches_a_parked_fire_whose_launch_moment_passed(deps) -> None:
    _start(deps, "late", at=iso(NOW + timedelta(minutes=20)))
    deps.clock.advance(minutes=11)  # launch moment 6 minutes ago (over a third of 15), pump down

    repaired = reconcile(deps)

    assert repaired["restarted"] == ["late"]
    assert list(deps.executions.started) == [execution_name("late", 1, 1, key=None)]
    assert not deps.records.items["late"].is_parked


def test_a_fire_older_than_a_new_pumps_first_look_is_launched_once_by_the_reconciler(
    deps,
) -> None:
    # GIVEN a fire parked on a stack whose pump has never run, its launch moment hours ago (a
    # new pump's first run looks back to the hour before its own)
    _start(deps, "old", at=iso(NOW + timedelta(hours=2)))
    deps.clock.advance(hours=6)

    # WHEN the pump runs first, then the reconciler, then both again
    first = pump(deps)["launched"]
    repaired = reconcile(deps)["restarted"]
    again = pump(deps)["launched"] + reconcile(deps)["restarted"]

    # THEN it is launched once, by the reconciler, and never again
    assert (first, repaired, again) == ([], ["old"], [])
    assert list(deps.executions.started) == [execution_name("old", 1, 1, key=None)]


@pytest.fixture
def batching():
    return fake_dependencies(
        NOW,
        launch_ahead=AHEAD,
        batch_min_fires=3,
        batch_state_machine_arn="arn:aws:states:::stateMachine:batch",
    )


def test_the_reconciler_leaves_a_fire_just_past_its_launch_moment_to_the_pump(batching) -> None:
    deps = batching
    # A reconciler run that lands between a launch moment and the pump's next run must not
    # start the fires the pump would batch, one by one.
    for n in range(3):
        _start(deps, f"s{n}", at=iso(NOW + timedelta(minutes=20, milliseconds=100 * n)))
    deps.clock.advance(minutes=5, seconds=30)  # launch moment 30 s ago: the pump's

    assert reconcile(deps)["restarted"] == []
    assert deps.executions.started == {} and deps.batches.started == {}

    assert sorted(pump(deps)["launched"]) == ["s0", "s1", "s2"]
    assert len(deps.batches.started) == 1 and deps.executions.started == {}


def test_fires_the_pump_missed_are_launched_by_the_reconciler_in_a_batch(batching) -> None:
    deps = batching
    at = NOW + timedelta(minutes=20)
    for n in range(4):
        _start(deps, f"m{n}", at=iso(at + timedelta(milliseconds=200 * n)))
    _start(deps, "other", at=iso(at + deps.settings.batch_window + timedelta(seconds=2)))
    deps.clock.advance(minutes=12)  # the pump never ran: 7 minutes past the launch moments

    repaired = reconcile(deps)

    assert sorted(repaired["restarted"]) == ["m0", "m1", "m2", "m3", "other"]
    (batch,) = deps.batches.started.values()
    assert sorted(m.action_id for m in batch.members) == ["m0", "m1", "m2", "m3"]
    assert list(deps.executions.started) == [execution_name("other", 1, 1, key=None)]
    assert all(not deps.records.items[i].is_parked for i in repaired["restarted"])


def test_one_parked_fire_that_cannot_be_launched_keeps_no_other_from_its_launch(
    batching, monkeypatch
) -> None:
    deps = batching
    at = NOW + timedelta(minutes=20)
    for n in range(3):  # one second: a batch
        _start(deps, f"m{n}", at=iso(at))
    _start(deps, "other", at=iso(at + deps.settings.batch_window + timedelta(seconds=2)))  # alone
    save = FakeRecords.save

    def poisoned(self, action, expected_version, recorded=None):  # type: ignore[no-untyped-def]
        if action.id == "m0" and action.launch_at is None:  # its mark, every time
            raise RuntimeError("ValidationException: Item size has exceeded the maximum")
        return save(self, action, expected_version, recorded)

    monkeypatch.setattr(FakeRecords, "save", poisoned)
    deps.clock.advance(minutes=12)  # the pump is down: 7 minutes past the launch moments

    with pytest.raises(RepairsIncomplete) as incomplete:
        reconcile(deps)

    assert "m0" in str(incomplete.value)
    (batch,) = deps.batches.started.values()
    assert [m.action_id for m in batch.members] == ["m0", "m1", "m2"]  # m0 finds it moved on
    assert list(deps.executions.started) == [execution_name("other", 1, 1, key=None)]
    assert deps.records.items["m0"].is_parked  # for the next pass
    assert sorted(incomplete.value.repaired["restarted"]) == ["m1", "m2", "other"]


def test_a_reconciler_run_between_the_pumps_marks_and_its_start_starts_nothing_alone(
    batching,
) -> None:
    deps = batching
    for n in range(3):
        _start(deps, f"s{n}", at=iso(NOW + timedelta(minutes=20, milliseconds=100 * n)))
    deps.clock.advance(minutes=5, seconds=1)
    start, repaired = deps.batches.start, {}

    def start_after_a_reconciler_run(name, order):  # type: ignore[no-untyped-def]
        repaired.update(reconcile(deps))  # the records name the batch; it has not started
        return start(name, order)

    deps.batches.start = start_after_a_reconciler_run

    assert sorted(pump(deps)["launched"]) == ["s0", "s1", "s2"]
    assert repaired["restarted"] == [] and deps.executions.started == {}
    assert len(deps.batches.started) == 1

    # A batch that never starts (lost: its fires were parked far, launched without a name) is
    # repaired alone once the pump had its runs and no running execution could hold them.
    deps.batches.started.clear()
    deps.clock.advance(minutes=5)  # within the reconciler's 10 minutes, past the grace
    assert sorted(reconcile(deps)["restarted"]) == ["s0", "s1", "s2"]
    assert len(deps.executions.started) == 3
    assert not any(deps.records.items[f"s{n}"].is_parked for n in range(3))  # named now


class _Workers:
    """Pump workers that run what is handed out as the worker function does, when asked (on
    AWS a worker runs later, beside the pump); ``failing``: hand-outs refused first."""

    def __init__(self, deps, failing: int = 0) -> None:
        self.deps = deps
        self.failing = failing
        self.shards: list[int] = []
        self.shares: list[list[str]] = []

    def _refused(self) -> None:
        if self.failing:
            self.failing -= 1
            raise RuntimeError("TooManyRequestsException: Rate Exceeded.")

    def hand_out_shard(self, shard: int) -> None:
        self._refused()
        self.shards.append(shard)

    def hand_out(self, ids: list[str]) -> None:
        self._refused()
        self.shares.append(list(ids))

    def run_all(self, share: int) -> list[str]:
        """Every shard and share handed out, run (shares a shard hands out, too)."""
        launched: list[str] = []
        while self.shards or self.shares:
            if self.shards:
                run = pump_shard(self.deps, self.shards.pop(0), fan_out=self, share=share)
            else:
                run = launch_share(self.shares.pop(0), self.deps.clock.now(), self.deps).as_dict()
            launched += run["launched"]
        return launched


def _park_many(deps, count: int, spread: timedelta) -> list[str]:
    ids = [f"f:{n:04d}" for n in range(count)]
    step = spread / count
    for n, action_id in enumerate(ids):
        _start(deps, action_id, at=iso(NOW + timedelta(hours=1) + step * n))
    return ids


def test_a_busy_run_hands_each_shard_to_a_worker_and_each_fire_is_launched_once(
    batching,
) -> None:
    deps = batching
    ids = _park_many(deps, 250, timedelta(seconds=50))
    workers = _Workers(deps)
    deps.clock.advance(hours=1, minutes=1)

    run = pump(deps, fan_out=workers, share=20)

    assert run["launched"] == [] and workers.shards == list(deps.parked.shards)
    assert run["handed_out"] == [f"shard {k}" for k in deps.parked.shards]
    assert _started(deps) == []  # the workers', not run yet
    launched = workers.run_all(share=20)
    assert sorted(launched) == ids  # each once, across workers and their shares
    assert pump(deps, fan_out=workers, share=20)["launched"] == []
    assert sorted(_started(deps)) == ids  # every fire in one execution: a batch, or alone


def test_a_busy_shard_launches_its_first_share_and_hands_out_the_rest(batching) -> None:
    deps = batching
    _park_many(deps, 200, timedelta(seconds=50))
    workers = _Workers(deps)
    deps.clock.advance(hours=1, minutes=1)
    now = deps.clock.now()
    shard = max(deps.parked.shards, key=lambda k: len(deps.parked.due_moments(now, 10**6, k)))
    in_shard = [i for _, i in deps.parked.due_moments(now, 10**6, shard=shard)]

    run = pump_shard(deps, shard, fan_out=workers, share=10)

    assert len(run["launched"]) >= 10 and run["handed_out"]
    assert sorted(run["launched"] + run["handed_out"]) == sorted(in_shard)
    assert [i for share in workers.shares for i in share] == run["handed_out"]  # in order
    assert not set(run["handed_out"]) & set(_started(deps))
    workers.run_all(share=10)
    assert sorted(_started(deps)) == sorted(in_shard)  # the shard's, each once; no other


def test_the_fires_of_a_share_whose_worker_was_lost_are_launched_before_their_time(
    batching,
) -> None:
    """A shard worker hands a share out and moves its watermark past it: its fires, parked far,
    look launched. The worker is lost: no execution holds them. The reconciler, finding no
    running execution that could (its own, or a batch of its window), launches each once the
    pump had its runs — before its time, each once."""
    deps = batching
    _park_many(deps, 200, timedelta(seconds=50))
    workers = _Workers(deps)
    deps.clock.advance(minutes=46)
    now = deps.clock.now()
    shard = max(deps.parked.shards, key=lambda k: len(deps.parked.due_moments(now, 10**6, k)))
    run = pump_shard(deps, shard, fan_out=workers, share=10)
    lost, launched = run["handed_out"], run["launched"]
    assert lost and launched and not set(lost) & set(_started(deps))
    assert deps.parked.passed([deps.records.items[i] for i in lost]) == set(lost)
    workers.shares.clear()  # the asynchronous invocation is lost
    first_fire = min(deps.records.items[i].execution_time for i in lost)

    restarted: list[str] = []
    while deps.clock.now() + timedelta(minutes=5) < first_fire:
        deps.clock.advance(minutes=5)  # the reconciler's schedule
        restarted += reconcile(deps)["restarted"]

    # (the other shards, which no pump run read, are the reconciler's as any missed fires)
    assert set(lost) <= set(restarted)  # before their time
    assert len(restarted) == len(set(restarted)) and not set(launched) & set(restarted)


def test_a_shard_that_cannot_be_handed_out_stays_parked_for_the_next_run(batching) -> None:
    deps = batching
    ids = _park_many(deps, 120, timedelta(seconds=50))
    workers = _Workers(deps, failing=1)
    deps.clock.advance(hours=1, minutes=1)

    first = pump(deps, fan_out=workers, share=20)
    assert len(first["handed_out"]) == len(deps.parked.shards) - 1
    workers.run_all(share=20)
    left = sorted(set(ids) - set(_started(deps)))
    assert left  # the shard refused: still parked, due
    assert all(deps.records.items[i].is_parked for i in left)

    again = pump(deps, fan_out=workers, share=1000)  # fewer than a share: the run launches
    assert sorted(again["launched"]) == left and again["handed_out"] == []
    assert sorted(_started(deps)) == ids  # each once


def test_a_run_within_a_share_hands_nothing_out(batching) -> None:
    deps = batching
    _park_many(deps, 20, timedelta(seconds=30))
    workers = _Workers(deps)
    deps.clock.advance(hours=1, minutes=1)

    run = pump(deps, fan_out=workers, share=20)

    assert len(run["launched"]) == 20 and run["handed_out"] == [] and workers.shards == []


def test_a_busy_shard_of_one_launch_moment_launches_it_whole_without_a_hand_out(
    batching,
) -> None:
    # GIVEN a shard holding more than a share, all due in one batch window: one launch moment,
    # which a share keeps whole up to twice its size
    deps = batching
    _park_many(deps, 60, timedelta(seconds=5))
    workers = _Workers(deps)
    deps.clock.advance(hours=1, minutes=1)
    now = deps.clock.now()
    counts = {k: len(deps.parked.due_moments(now, 10**6, k)) for k in deps.parked.shards}
    shard = next(k for k, n in counts.items() if 10 < n <= 20)

    # WHEN its worker runs with shares of 10
    run = pump_shard(deps, shard, fan_out=workers, share=10)

    # THEN it launches them all itself, in one batch, and hands nothing out
    assert len(run["launched"]) == counts[shard] and run["handed_out"] == []
    assert len(run["batches"]) == 1 and workers.shares == []


@pytest.mark.parametrize("near_park", [timedelta(minutes=5), timedelta(0)])
def test_near_one_offs_of_one_window_wait_for_the_pumps_next_run_and_share_its_batch(
    near_park: timedelta,
) -> None:
    """NearParkSeconds 300: four one-offs created 10 minutes before their fire (within the
    horizon) in one batch window wait, parked due now, and the pump's next run starts them as
    one batch; one due in 2 minutes (within NearParkSeconds) starts at once, alone. With 0 (the
    default) each starts at once, a StartExecution each, as before."""
    deps = fake_dependencies(
        NOW,
        launch_ahead=AHEAD,
        near_park=near_park,
        batch_min_fires=3,
        batch_state_machine_arn="arn:aws:states:::stateMachine:batch",
    )
    at = NOW + timedelta(minutes=10)
    near = [f"near{n}" for n in range(4)]
    for n, action_id in enumerate(near):
        _start(deps, action_id, at=iso(at + timedelta(milliseconds=150 * n)))
    _start(deps, "soon", at=iso(NOW + timedelta(minutes=2)))

    if not near_park:
        assert len(deps.executions.started) == 5 and deps.batches.started == {}
        assert pump(deps)["launched"] == []
        return
    assert list(deps.executions.started) == [execution_name("soon", 1, 1, key=None)]
    assert all(deps.records.items[i].launch_at == NOW for i in near)

    deps.clock.advance(seconds=40)  # the pump's next run
    run = pump(deps)

    assert sorted(run["launched"]) == near and len(run["batches"]) == 1
    (batch,) = deps.batches.started.values()
    assert sorted(m.action_id for m in batch.members) == near
    assert len(deps.executions.started) == 1  # soon's alone: no StartExecution for the four


def test_a_near_parked_fire_the_pump_missed_is_the_reconcilers_half_way_to_its_fire() -> None:
    """NearParkSeconds 300: a one-off created 6 minutes before its fire is parked due now; the
    pump is down. The reconciler leaves it to the pump for half the way (3 minutes: two pump
    runs at least), not a third of the horizon (5), then starts it — before it is due."""
    deps = fake_dependencies(NOW, launch_ahead=AHEAD, near_park=timedelta(minutes=5))
    _start(deps, "near", at=iso(NOW + timedelta(minutes=6)))
    assert deps.records.items["near"].launch_at == NOW and deps.executions.started == {}

    deps.clock.advance(minutes=2, seconds=59)
    assert reconcile(deps)["restarted"] == []

    deps.clock.advance(seconds=1)
    assert reconcile(deps)["restarted"] == ["near"]
    assert list(deps.executions.started) == [execution_name("near", 1, 1, key=None)]
    assert deps.clock.now() < NOW + timedelta(minutes=6)
