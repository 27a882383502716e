"""Batches: the parked fires due in one batch window share one execution of the batch machine.
The pump groups them (at least BatchMinFires, at most BatchMaxFires), and the batch's task
fires each exactly as a lone fire's execution would: claimed, never early, recorded once,
a transient failure retried alone, a permanent one reported, a changed fire left quiet."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tests.unit.fakes.aws import FakePublisher
from tests.unit.fakes.stores import FakeTabbedRecords
from tests.unit.machine import fulfill_fire
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.batch import BatchOrder
from tickwork.domain.errors import (
    ActionSuperseded,
    PermanentFulfillmentError,
    RetriesExhausted,
    TransientFulfillmentError,
)
from tickwork.domain.events import DetailType
from tickwork.domain.fire import FireAttempt, Outcome
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso
from tickwork.fire.fire_batch import fire_batch
from tickwork.fire.fulfill import fulfill_claimed
from tickwork.fire.grouping import group
from tickwork.fire.lone_fire import fire_lone
from tickwork.fire.orders import start_lone
from tickwork.fire.planning import fire_order
from tickwork.fire.pump import launch_parked, pump
from tickwork.fire.reconcile import reconcile
from tickwork.fire.record import record_tick
from tickwork.ports import ExecutionState
from tickwork.ports.notifier import Notification
from tickwork.steering.pause import pause_action
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
AHEAD = timedelta(minutes=15)
SECOND = NOW + timedelta(hours=1)  # the second every fire of these tests is due in


class ScriptedNotifier:
    """Sends every notification, except for the template types told to fail: "FLAKY" fails
    transiently the first ``flaky_times`` times, "BROKEN" fails for good."""

    def __init__(self, flaky_times: int = 1) -> None:
        self.sent: list[Notification] = []
        self.flaky_left = flaky_times
        self.slow = threading.Event()  # "SLOW" waits for it
        self._lock = threading.Lock()

    def template_fields(self, notification_type: str, template_type: str) -> frozenset[str] | None:
        return None  # no stored templates: the Start's data is not checked against one

    def send(self, notification: Notification) -> str:
        if notification.template_type == "SLOW":
            assert self.slow.wait(timeout=60), "the test never let the slow target answer"
        with self._lock:
            if notification.template_type == "BROKEN":
                raise PermanentFulfillmentError("the provider refuses this recipient")
            if notification.template_type == "FLAKY" and self.flaky_left > 0:
                self.flaky_left -= 1
                raise TransientFulfillmentError("the provider timed out")
            self.sent.append(notification)
            return f"m-{len(self.sent)}"

    def sent_to(self, action_id: str) -> int:
        return sum(n.action_id == action_id for n in self.sent)


@pytest.fixture
def notifier() -> ScriptedNotifier:
    return ScriptedNotifier()


@pytest.fixture
def deps(notifier: ScriptedNotifier) -> Dependencies:
    deps = fake_dependencies(
        NOW,
        notifier=notifier,
        launch_ahead=AHEAD,
        seal_secret_id="seal",
        batch_state_machine_arn="arn:aws:states:us-east-1:123456789012:stateMachine:batch",
    )
    deps.secrets.values["seal"] = b"the-seal-key"  # ticks and reports carry their proof
    return deps


def _start(
    deps: Dependencies, action_id: str, at: datetime, template: str = "REMINDER", **detail: Any
) -> None:
    data = {"notificationType": "SMS", "templateType": template, "mobile": "60123456789"}
    command = {"id": action_id, "at": iso(at), "action": "SEND_NOTIFICATION", "data": data}
    event_id = f"ev-{action_id}-{template}"  # a new event for each change
    start_action(StartCommand({**command, **detail}, event_id), deps)


def _due_together(deps: Dependencies, count: int, at: datetime = SECOND, **kw: Any) -> list[str]:
    ids = [f"b{n:03d}" for n in range(count)]
    for n, action_id in enumerate(ids):
        _start(deps, action_id, at + timedelta(milliseconds=7 * n % 1000), **kw)
    return ids


def _pump_at_launch(deps: Dependencies) -> dict[str, Any]:
    """The pump's first run after the second's fires came within the horizon."""
    deps.clock.current = SECOND - AHEAD + timedelta(minutes=1)
    return pump(deps)


def _only_batch(deps: Dependencies) -> tuple[str, BatchOrder]:
    [(name, order)] = deps.batches.started.items()
    return name, order


def _run_batch(deps: Dependencies, retry: int = 0) -> list[dict[str, Any]]:
    """The batch machine's Wait ends at the second; its task runs every fire."""
    name, order = _only_batch(deps)
    deps.clock.current = max(deps.clock.current, order.second)
    return [f.to_wire() for f in fire_batch(order, deps.batches.execution_arn(name), retry, deps)]


# --- grouping ----------------------------------------------------------------------------------
def test_fires_due_in_the_same_second_become_one_batch_of_their_keys_only(deps) -> None:
    ids = _due_together(deps, 6)

    run = _pump_at_launch(deps)

    name, order = _only_batch(deps)
    assert run["batches"] == [name] and sorted(run["launched"]) == ids
    assert name.startswith(f"b-{int(SECOND.timestamp())}-")  # for people: a batch is its machine
    assert deps.executions.started == {}  # none of them alone
    wire = order.to_wire()
    assert wire["waitUntil"] == iso(SECOND)
    assert [f["id"] for f in wire["fires"]] == ids
    assert set(wire["fires"][0]) == {"id", "generation", "occurrence", "fireAt"}  # no data
    # parked far, launched without a write: each record waits for the batch, naming none
    arn = deps.batches.execution_arn(name)
    assert all(deps.records.items[i].waits_for(arn) for i in ids)
    assert all(deps.records.items[i].execution_arn is None for i in ids)


def test_the_fires_of_one_second_come_due_for_launch_together(deps) -> None:
    # GIVEN fires spread over one second's milliseconds
    ids = _due_together(deps, 6)

    # WHEN the pump runs at the launch moment of the second's start
    deps.clock.current = SECOND - AHEAD
    run = pump(deps)

    # THEN it finds them all at once: one batch, not a few of them alone
    assert sorted(run["launched"]) == ids and len(run["batches"]) == 1
    assert sorted(m.action_id for m in _only_batch(deps)[1].members) == ids


def test_fewer_than_the_minimum_in_a_window_run_alone(deps) -> None:
    _due_together(deps, 4)
    _start(deps, "later", SECOND + deps.settings.batch_window)  # the next window's first ms

    run = _pump_at_launch(deps)

    assert run["batches"] == [] and deps.batches.started == {}
    assert len(deps.executions.started) == 5


def test_sparse_fires_across_a_window_share_one_batch_each_at_its_own_millisecond(
    deps, notifier
) -> None:
    # GIVEN fires a second and more apart, at arbitrary milliseconds, all in one 10 s window
    window = deps.settings.batch_window
    offsets = [timedelta(milliseconds=ms) for ms in (9_999, 1_234, 4_321, 7_007, 5)]
    ids = [f"s{n}" for n in range(len(offsets))]
    for action_id, offset in zip(ids, offsets, strict=True):
        _start(deps, action_id, SECOND + offset)
    _start(deps, "next-window", SECOND + window)

    run = _pump_at_launch(deps)

    # THEN they make one batch, waiting to its earliest fire's second; the next window's is alone
    _, order = _only_batch(deps)
    assert sorted(m.action_id for m in order.members) == sorted(ids)
    assert order.second == SECOND and len(run["batches"]) == 1
    assert [o.action_id for o in deps.executions.started.values()] == ["next-window"]
    # WHEN its task runs from the end of the Wait: each fires at its own millisecond, once
    out = _run_batch(deps)
    assert [f["outcome"] for f in out] == ["FIRED"] * len(ids)
    for member in order.members:
        [ran] = deps.records.items[member.action_id].history
        assert ran.actual_time >= member.fire_at  # never early
        assert notifier.sent_to(member.action_id) == 1


def test_a_one_second_window_batches_only_the_fires_of_one_second(notifier) -> None:
    deps = fake_dependencies(
        NOW,
        notifier=notifier,
        launch_ahead=AHEAD,
        batch_window=timedelta(seconds=1),
        batch_state_machine_arn="arn:aws:states:us-east-1:123456789012:stateMachine:batch",
    )
    ids = _due_together(deps, 5)
    for n in range(5):  # one a second after: each alone in its window
        _start(deps, f"later{n}", SECOND + timedelta(seconds=1 + n, milliseconds=500))

    run = _pump_at_launch(deps)

    [(_, order)] = deps.batches.started.items()
    assert sorted(m.action_id for m in order.members) == ids and len(run["batches"]) == 1
    assert len(deps.executions.started) == 5


def test_a_busy_second_makes_batches_of_at_most_the_maximum_and_a_short_rest_runs_alone(
    notifier,
) -> None:
    deps = fake_dependencies(
        NOW, notifier=notifier, launch_ahead=AHEAD, batch_min_fires=3, batch_max_fires=4,
        batch_state_machine_arn="arn:batch",
    )  # fmt: skip
    ids = _due_together(deps, 10)  # 4 + 4 + 2: the last 2 are under the minimum

    run = _pump_at_launch(deps)

    sizes = [len(o.members) for o in deps.batches.started.values()]
    assert sizes == [4, 4] and len(run["batches"]) == 2
    alone = {o.action_id for o in deps.executions.started.values()}
    assert alone == set(ids[8:])
    assert sorted(run["launched"]) == ids


def test_batches_are_off_without_the_batch_machine(notifier) -> None:
    deps = fake_dependencies(NOW, notifier=notifier, launch_ahead=AHEAD)
    _due_together(deps, 8)

    run = _pump_at_launch(deps)

    assert run["batches"] == [] and len(deps.executions.started) == 8


def test_the_batch_name_is_the_same_for_the_same_members_and_another_for_others(deps) -> None:
    _due_together(deps, 5)
    records = [deps.records.items[f"b{n:03d}"] for n in range(5)]

    [first], _ = group(records, deps)
    [again], _ = group(list(reversed(records)), deps)
    [other], _ = group([records[3], records[0], records[4], records[1], records[2]], deps)
    _start(deps, "b005", SECOND)
    [more], _ = group([*records, deps.records.items["b005"]], deps)

    assert first.name == again.name == other.name
    assert more.name != first.name


def test_a_refused_batch_leaves_every_fire_parked_and_the_next_run_launches_them(deps) -> None:
    ids = _due_together(deps, 5)
    deps.batches.refusals = ["ExecutionLimitExceeded"]

    run = _pump_at_launch(deps)

    assert sorted(run["refused"]) == ids and run["batches"] == []
    assert all(deps.records.items[i].is_parked for i in ids)
    again = pump(deps)
    assert sorted(again["launched"]) == ids and len(again["batches"]) == 1


# --- the batch task ----------------------------------------------------------------------------
def test_the_task_fires_each_fire_once_at_its_millisecond_and_records_it(deps, notifier) -> None:
    ids = _due_together(deps, 6)
    _pump_at_launch(deps)
    name, order = _only_batch(deps)

    out = _run_batch(deps)

    assert [f["outcome"] for f in out] == ["FIRED"] * 6
    assert all(notifier.sent_to(i) == 1 for i in ids)
    for fire in order.members:
        record = deps.records.items[fire.action_id]
        assert record.status == Status.COMPLETED
        [ran] = record.history
        assert ran.execution == name and ran.outcome is Outcome.FIRED
        assert ran.actual_time >= fire.fire_at  # never early
    ticks = deps.publisher.of_type(DetailType.TICK)
    assert sorted(t["id"] for t in ticks) == ids
    assert all(t["executionName"] == name and t["proof"] for t in ticks)
    # handed to the bus together, as they are recorded (the adapter puts 10 per PutEvents)
    assert sum(deps.publisher.chunks) == 6 and max(deps.publisher.chunks) <= 10


def test_a_slow_target_holds_back_no_other_fires_tick(deps, notifier) -> None:
    ids = _due_together(deps, 5)
    _start(deps, "slow", SECOND, template="SLOW")
    _pump_at_launch(deps)
    name, order = _only_batch(deps)
    deps.clock.current = order.second
    task = threading.Thread(
        target=fire_batch, args=(order, deps.batches.execution_arn(name), 0, deps)
    )
    task.start()
    try:
        # WHEN the slow target has not answered yet THEN every other fire's tick is out
        deadline = threading.Event()
        while len(deps.publisher.of_type(DetailType.TICK)) < 5:
            assert not deadline.wait(0.01) and task.is_alive()
        assert sorted(t["id"] for t in deps.publisher.of_type(DetailType.TICK)) == ids
    finally:
        notifier.slow.set()
        task.join(timeout=60)
    assert {t["id"] for t in deps.publisher.of_type(DetailType.TICK)} == {*ids, "slow"}


def test_the_fire_totals_and_counts_of_a_batch_are_added_once_at_its_end(deps) -> None:
    ids = _due_together(deps, 7, group="billing")
    _pump_at_launch(deps)
    minute = int(SECOND.timestamp()) // 60

    _run_batch(deps)

    assert deps.tallies.read("billing", False, minute, minute) == {minute: {"onTime": 7}}
    counts = deps.queries.count(Selection(group="billing"))
    assert (counts["COMPLETED"], counts["PENDING"]) == (7, 0)
    assert all(deps.records.items[i].status == Status.COMPLETED for i in ids)
    _run_batch(deps, retry=1)  # a retried task (the first settled its tab) adds nothing twice
    assert deps.tallies.read("billing", False, minute, minute) == {minute: {"onTime": 7}}
    assert deps.queries.count(Selection(group="billing"))["COMPLETED"] == 7


@pytest.mark.parametrize("then", ["retried", "failed"])
def test_a_task_that_dies_after_its_writes_leaves_counts_that_add_up(deps, then: str) -> None:
    """The members' writes are counted as they are written (the fold of the stream); the task
    dies at its end. A retry of the task, or the reconciler after the batch failed, adds
    nothing again: every change is counted once."""
    ids = _due_together(deps, 5, group="crash")
    _pump_at_launch(deps)
    name, order = _only_batch(deps)
    opened = deps.tabs.open

    def dying(*args: Any) -> Any:
        tab = opened(*args)
        tab.settle = lambda: (_ for _ in ()).throw(RuntimeError("killed"))  # type: ignore[method-assign]
        return tab

    deps.tabs.open = dying  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="killed"):
        _run_batch(deps)
    deps.tabs.open = opened  # type: ignore[method-assign]
    minute = int(SECOND.timestamp()) // 60
    assert all(deps.records.items[i].status == Status.COMPLETED for i in ids)

    if then == "retried":
        _run_batch(deps, retry=1)
    else:
        deps.batches.end(name, "FAILED", error="States.TaskFailed")
        deps.clock.current = order.second + timedelta(minutes=1)
        assert reconcile(deps)["settled"] == []  # no tab of this release is left open

    counts = deps.queries.count(Selection(group="crash"))
    assert (counts["PENDING"], counts["COMPLETED"]) == (0, 5)
    assert deps.tallies.read("crash", False, minute, minute) == {minute: {"onTime": 5}}


def test_a_retried_task_fires_nothing_twice_and_puts_no_tick_twice(deps, notifier) -> None:
    """A task retried after its first attempt put every tick (a timeout after the last call):
    each fire runs once, is recorded once, and its tick is on the bus once."""
    ids = _due_together(deps, 5)
    _pump_at_launch(deps)
    first = _run_batch(deps)

    again = _run_batch(deps, retry=1)

    assert [f["outcome"] for f in again] == ["FIRED"] * 5 == [f["outcome"] for f in first]
    assert all(notifier.sent_to(i) == 1 for i in ids)
    assert all(len(deps.records.items[i].history) == 1 for i in ids)
    ticks = deps.publisher.of_type(DetailType.TICK)
    assert sorted(t["id"] for t in ticks) == sorted(ids), "one tick per fire"
    minute = int(SECOND.timestamp()) // 60
    assert deps.tallies.read("default", False, minute, minute)[minute] == {"onTime": 5}


def test_a_tick_not_known_to_have_gone_out_is_put_again_with_the_same_key(deps, notifier) -> None:
    """A task that crashed between a PutEvents call and its note of it: the retry cannot know
    whether those ticks went out, and puts them again — at least once, the same key."""
    ids = _due_together(deps, 5)
    _pump_at_launch(deps)
    lost = deps.tabs.note_announced
    deps.tabs.note_announced = lambda *args: (_ for _ in ()).throw(OSError("crashed"))
    _run_batch(deps)
    deps.tabs.note_announced = lost

    _run_batch(deps, retry=1)
    _run_batch(deps, retry=2)  # noted by the second: the third puts none

    ticks = deps.publisher.of_type(DetailType.TICK)
    assert len(ticks) == 10 and all(notifier.sent_to(i) == 1 for i in ids)
    assert {t["idempotencyKey"] for t in ticks[:5]} == {t["idempotencyKey"] for t in ticks[5:]}


def test_a_fire_claimed_by_a_task_that_crashed_resumes_in_its_retry(deps, notifier) -> None:
    _due_together(deps, 5)
    _pump_at_launch(deps)
    name, order = _only_batch(deps)
    deps.clock.current = order.second + timedelta(seconds=1)
    # the crashed attempt claimed b000 and died before sending it
    victim = deps.records.items["b000"]
    claimed = victim.claimed(
        deps.clock.now(), deps.batches.execution_arn(name), deps.limits.transitions
    )
    deps.records.save(claimed, expected_version=victim.version)

    out = _run_batch(deps, retry=1)

    assert out[0]["outcome"] == "FIRED" and notifier.sent_to("b000") == 1
    assert deps.records.items["b000"].history[-1].execution == name


@pytest.mark.parametrize("change", ["cancel", "pause", "update"])
def test_a_fire_changed_after_its_batch_launched_does_not_fire_in_it(
    deps, notifier, change: str
) -> None:
    _due_together(deps, 5)
    _pump_at_launch(deps)

    if change == "cancel":
        cancel_action("b002", deps)
    elif change == "pause":
        pause_action("b002", "for the test", deps)
    else:
        _start(deps, "b002", SECOND + timedelta(seconds=30), template="UPDATED")

    # the batch runs on (a fire parked far has its own execution stopped, if it has one: here
    # none was started)
    started = {deps.executions.execution_arn(n) for n in deps.executions.started}
    assert deps.batches.stopped == [] and not set(deps.executions.stopped) & started
    out = _run_batch(deps)

    assert out[2]["outcome"] == "QUIET" and "reason" in out[2]
    assert [f["outcome"] for i, f in enumerate(out) if i != 2] == ["FIRED"] * 4
    assert notifier.sent_to("b002") == 0
    if change == "update":  # the new version fires alone, as a lone fire would
        record = deps.records.items["b002"]
        assert record.generation == 2 and record.status == Status.PENDING
        assert machine.fire_name(deps, "b002", 2, 1) in deps.executions.started


def test_a_transient_failure_is_retried_alone_with_its_attempt_counted(deps, notifier) -> None:
    _due_together(deps, 5)
    _start(deps, "flaky", SECOND + timedelta(milliseconds=500), template="FLAKY")
    _pump_at_launch(deps)

    out = {f["id"]: f for f in _run_batch(deps)}

    handed = out["flaky"]
    own = machine.fire_name(deps, "flaky", 1, 1, handed=True)
    assert handed["outcome"] == "HANDED_OFF" and handed["executionName"] == own
    assert "TransientFulfillmentError" in handed["reason"]
    assert all(f["outcome"] == "FIRED" for i, f in out.items() if i != "flaky")
    # the record names its own execution and holds the claim for it (before it started)
    own_arn = deps.executions.execution_arn(own)
    record = deps.records.items["flaky"]
    assert (record.status, record.claimed_by) == (Status.IN_PROGRESS, own_arn)
    assert record.execution_arn == own_arn
    order = deps.executions.started[own]
    retry_interval = deps.settings.retry_interval
    assert deps.clock.now() <= order.wait_until <= deps.clock.now() + retry_interval
    assert order.attempts_before == 1 and order.proof

    # its own execution retries it after the wait: the second attempt, recorded once
    deps.clock.current = order.wait_until
    tick = fulfill_fire(FireAttempt(order, own_arn), deps)
    record_tick(tick, deps)
    assert tick.attempts == 2 and notifier.sent_to("flaky") == 1
    assert deps.records.items["flaky"].history[-1].execution == own


def test_a_start_delivered_again_after_its_fire_joined_a_batch_starts_nothing_alone(
    deps, notifier
) -> None:
    """EventBridge delivers a Start at least once: a repeat that arrives once the pump put the
    fire in a batch finds the record naming the batch, and starts no lone execution beside it —
    whose name the batch would hand a transient failure over to."""
    _due_together(deps, 5)
    _start(deps, "flaky", SECOND + timedelta(milliseconds=500), template="FLAKY")
    _pump_at_launch(deps)

    _start(deps, "flaky", SECOND + timedelta(milliseconds=500), template="FLAKY")  # again

    assert deps.executions.started == {}
    out = {f["id"]: f for f in _run_batch(deps)}
    own = deps.executions.execution_arn(out["flaky"]["executionName"])
    order = deps.executions.started[out["flaky"]["executionName"]]
    deps.clock.current = order.wait_until
    record_tick(fulfill_fire(FireAttempt(order, own), deps), deps)
    record = deps.records.items["flaky"]
    assert record.status == Status.COMPLETED and record.history[-1].attempts == 2
    assert notifier.sent_to("flaky") == 1


def test_only_the_execution_a_hand_over_names_may_run_the_fire(deps, notifier) -> None:
    """The hand-over is the record's: it names the fire's own execution and holds the claim for
    it before that execution starts. Another execution with a proved order for the same fire
    (a repair, a replay under another name) is left out."""
    _due_together(deps, 5)
    _start(deps, "flaky", SECOND + timedelta(milliseconds=500), template="FLAKY")
    _pump_at_launch(deps)
    _run_batch(deps)
    own = machine.fire_name(deps, "flaky", 1, 1, handed=True)
    order = deps.executions.started[own]
    deps.clock.current = order.wait_until
    other = machine.fire_name(deps, "flaky", 1, 1, repair=7)
    start_lone(other, order, deps)  # the stack's proof, for another execution

    with pytest.raises(ActionSuperseded, match="another execution holds it"):
        fulfill_fire(FireAttempt(deps.executions.started[other], _fire_arn(deps, other)), deps)
    tick = fulfill_fire(FireAttempt(order, _fire_arn(deps, own)), deps)
    record_tick(tick, deps)

    assert tick.attempts == 2 and notifier.sent_to("flaky") == 1
    record = deps.records.items["flaky"]
    assert record.history[-1].execution == own and record.status is Status.COMPLETED


def test_a_hand_over_whose_execution_never_started_is_started_by_the_task_retry(
    deps, notifier
) -> None:
    # GIVEN a batch task that handed a fire over and crashed before its execution started
    _due_together(deps, 5)
    _start(deps, "flaky", SECOND + timedelta(milliseconds=500), template="FLAKY")
    _pump_at_launch(deps)
    _run_batch(deps)
    own = machine.fire_name(deps, "flaky", 1, 1, handed=True)
    del deps.executions.started[own]

    # WHEN the machine retries the task
    again = {f["id"]: f for f in _run_batch(deps, retry=1)}

    # THEN the fire's own execution is started, and it alone runs the fire
    assert again["flaky"]["outcome"] == "HANDED_OFF" and own in deps.executions.started
    order = deps.executions.started[own]
    deps.clock.current = order.wait_until
    record_tick(fulfill_fire(FireAttempt(order, _fire_arn(deps, own)), deps), deps)
    assert notifier.sent_to("flaky") == 1


def _fire_arn(deps: Dependencies, name: str) -> str:
    return deps.executions.execution_arn(name)


def test_a_permanent_failure_takes_the_failure_path_and_the_others_fire(deps, notifier) -> None:
    _due_together(deps, 5)
    _start(deps, "broken", SECOND, template="BROKEN")
    _pump_at_launch(deps)

    out = {f["id"]: f for f in _run_batch(deps)}

    assert out["broken"]["outcome"] == "FAILED"
    assert out["broken"]["error"] == "PermanentFulfillmentError"
    assert all(f["outcome"] == "FIRED" for i, f in out.items() if i != "broken")
    record = deps.records.items["broken"]
    assert record.status == Status.FAILED and record.history[-1].outcome is Outcome.FAILED
    [report] = deps.publisher.of_type(DetailType.FAILED)
    assert report["id"] == "broken" and report["proof"]
    minute = int(SECOND.timestamp()) // 60
    tallies = deps.tallies.read("default", False, minute, minute)[minute]
    assert tallies == {"onTime": 5, "failed": 1}


def _launched_twice(deps: Dependencies) -> str:
    """A fire parked far in a batch of six, launched again alone by a second run (runs that
    met on it: a held watermark, a late worker): its own execution's name."""
    _due_together(deps, 5)
    _start(
        deps,
        "flaky",
        SECOND + timedelta(milliseconds=500),
        template="FLAKY",
        maximumRetryAttempts=1,
    )
    _pump_at_launch(deps)
    assert launch_parked("flaky", deps.clock.now(), deps) == "launched"
    own = machine.fire_name(deps, "flaky", 1, 1)
    assert own in deps.executions.started
    return own


def test_a_fire_launched_in_a_batch_and_alone_runs_once_whichever_claims_first(
    deps, notifier
) -> None:
    own = _launched_twice(deps)
    notifier.flaky_left = 0
    # its own wakes first (the batch's task held back past the fire's whole second): it runs it
    deps.clock.current = deps.executions.started[own].wait_until
    assert machine.run(deps, own) is not None and notifier.sent_to("flaky") == 1
    out = {f["id"]: f for f in _run_batch(deps)}
    assert out["flaky"]["outcome"] == "QUIET" and notifier.sent_to("flaky") == 1


def test_a_member_another_execution_fired_meanwhile_is_not_announced_skipped(
    deps, notifier
) -> None:
    """The batch reads its members first; the fire's own execution (launched beside it) claims
    and fires it meanwhile; the batch's thread for it, later and missed under SKIP, ends it
    quietly: no Schedule Skipped for an occurrence that fired."""
    _due_together(deps, 5)
    _start(deps, "f", SECOND + timedelta(milliseconds=500), catchUp="SKIP", misfireThreshold="1s")
    _pump_at_launch(deps)
    assert launch_parked("f", deps.clock.now(), deps) == "launched"  # a run that met on it
    own = machine.current(deps, "f")
    name, order = _only_batch(deps)
    stale = deps.records.get("f")  # the batch task's first read
    assert stale is not None and stale.parked_far
    deps.clock.current = deps.executions.started[own].wait_until + timedelta(milliseconds=100)
    assert machine.run(deps, own) is not None and notifier.sent_to("f") == 1
    deps.clock.current = SECOND + timedelta(milliseconds=2600)  # the batch's thread, 2 s late
    member_order = replace(fire_order(stale, deps.clock.now(), deps), wait_until=order.second)

    with pytest.raises(ActionSuperseded):
        fulfill_claimed(FireAttempt(member_order, deps.batches.execution_arn(name)), deps, stale)

    assert str(DetailType.SKIPPED) not in [t for t, _ in deps.publisher.events]
    assert [h.outcome for h in deps.records.items["f"].history] == [Outcome.FIRED]


def test_a_batch_member_at_its_millisecond_is_judged_from_its_time_not_a_rounding(
    deps, notifier
) -> None:
    """Batch members wake at the batch's second and sleep to their own millisecond: run as
    late as each other, one at .000 and one at .100 are judged alike (no lone rounding)."""
    for n in range(6):
        _start(deps, f"z{n}", SECOND, catchUp="SKIP", misfireThreshold="1s")
    fire_at = SECOND + timedelta(milliseconds=100)
    _start(deps, "m100", fire_at, catchUp="SKIP", misfireThreshold="1s")
    _pump_at_launch(deps)
    deps.clock.current = SECOND + timedelta(milliseconds=2000)  # the task runs 2 s late

    out = {f["id"]: f["outcome"] for f in _run_batch(deps)}

    assert out["m100"] == out["z0"] == "QUIET"  # both skipped as missed


def test_a_retry_of_a_claim_this_execution_holds_is_not_skipped_as_missed(deps, notifier) -> None:
    """Its first attempt may have reached the target: a retry past misfireThreshold (the
    machine's backoff) resumes the claim and tries again, never records it SKIPPED."""
    at = SECOND - timedelta(minutes=20)
    deps.clock.current = at - timedelta(minutes=5)
    _start(deps, "flaky", at, template="FLAKY", catchUp="SKIP", misfireThreshold="2s")
    name = machine.current(deps, "flaky")
    order = deps.executions.started[name]
    arn = deps.executions.execution_arn(name)
    deps.clock.current = order.wait_until
    with pytest.raises(TransientFulfillmentError):
        fire_lone(FireAttempt(order, arn, 0), deps)
    deps.clock.advance(seconds=4)  # the machine's backoff: past the threshold

    tick = fire_lone(FireAttempt(order, arn, 1), deps).tick

    assert tick.outcome is Outcome.FIRED and notifier.sent_to("flaky") == 1
    assert deps.records.items["flaky"].history[-1].outcome is Outcome.FIRED


def test_a_fire_launched_in_a_batch_and_alone_is_handed_over_to_neither(deps, notifier) -> None:
    """The batch that claims it and fails hands it over under a name no launch takes: the
    fire's own execution, waking after, runs nothing; the handed one runs it, its attempts
    within its policy (1 + maximumRetryAttempts, the batch's counted)."""
    own = _launched_twice(deps)
    notifier.flaky_left = 2  # the batch's attempt and the next fail
    out = {f["id"]: f for f in _run_batch(deps)}  # the batch claims it at .500 and fails
    handed = machine.fire_name(deps, "flaky", 1, 1, handed=True)
    assert out["flaky"]["outcome"] == "HANDED_OFF" and out["flaky"]["executionName"] == handed

    deps.clock.current = max(deps.clock.current, deps.executions.started[own].wait_until)
    assert machine.run(deps, own) is None and notifier.flaky_left == 1  # its own: nothing
    order = deps.executions.started[handed]
    assert order.attempts_before == 1  # the batch's attempt counts
    deps.clock.current = order.wait_until
    with pytest.raises(RetriesExhausted):  # its one retry fails too: the policy is spent
        fulfill_fire(FireAttempt(order, _fire_arn(deps, handed)), deps)
    assert notifier.flaky_left == 0 and notifier.sent_to("flaky") == 0  # 2 calls in all


def test_a_hand_off_refused_by_step_functions_parks_the_fire_again(deps, notifier) -> None:
    _due_together(deps, 4)
    _start(deps, "flaky", SECOND, template="FLAKY")
    _pump_at_launch(deps)
    deps.executions.refusals = ["ExecutionLimitExceeded"]

    out = {f["id"]: f for f in _run_batch(deps)}

    assert out["flaky"]["outcome"] == "PARKED"
    record = deps.records.items["flaky"]
    assert record.status == Status.PENDING and record.claimed_by is None and record.is_parked
    # the pump's next run gives it its own execution, which fires it (the flake has passed)
    assert pump(deps)["launched"] == ["flaky"]
    own = machine.fire_name(deps, "flaky", 1, 1)
    order = deps.executions.started[own]
    record_tick(fulfill_fire(FireAttempt(order, _fire_arn(deps, own)), deps), deps)
    assert notifier.sent_to("flaky") == 1


# --- repairs -----------------------------------------------------------------------------------
def test_the_reconciler_runs_alone_the_fires_a_failed_batch_never_claimed(deps, notifier) -> None:
    ids = _due_together(deps, 5)
    _pump_at_launch(deps)
    name, order = _only_batch(deps)
    deps.batches.end(name, "FAILED", error="States.TaskFailed", cause="the task kept failing")
    deps.clock.current = order.second + timedelta(seconds=30)

    # (launched without a name, parked far: no running execution the run lists could hold them)
    repaired = reconcile(deps)

    assert sorted(repaired["restarted"]) == ids
    assert {o.action_id for o in deps.executions.started.values()} == set(ids)


def test_the_reconciler_settles_a_fire_a_lost_batch_left_claimed(deps) -> None:
    _due_together(deps, 5)
    _pump_at_launch(deps)
    name, order = _only_batch(deps)
    deps.clock.current = order.second
    victim = deps.records.items["b001"]
    held = victim.claimed(order.second, deps.batches.execution_arn(name), 50)
    deps.records.save(held, expected_version=victim.version)
    deps.batches.end(name, "TIMED_OUT")
    deps.clock.current = order.second + timedelta(minutes=20)

    repaired = reconcile(deps)

    # onUnknownOutcome FAIL, the default: the fulfillment may have happened
    assert "b001" in repaired["failed"]
    record = deps.records.items["b001"]
    assert record.status == Status.FAILED
    assert record.history[-1].error.startswith(f"FireOutcomeUnknown: its execution {name} ")


def test_a_running_batch_is_left_alone_by_the_reconciler(deps) -> None:
    _due_together(deps, 5)
    _pump_at_launch(deps)
    deps.clock.current = SECOND - timedelta(minutes=5)

    assert reconcile(deps)["restarted"] == []
    assert deps.executions.started == {}
    assert isinstance(deps.batches.describe(_only_batch(deps)[0]), ExecutionState)


@pytest.mark.parametrize("listing", ["lists", "too many to list", "listing fails"])
def test_the_reconciler_asks_about_a_running_batch_once_a_run_not_once_a_member(
    deps, monkeypatch, listing: str
) -> None:
    _due_together(deps, 40)
    _pump_at_launch(deps)
    deps.clock.current = SECOND - timedelta(minutes=5)
    batch = _only_batch(deps)[0]
    described: list[str] = []
    executions = type(deps.batches)
    describe, running_names = executions.describe, executions.running_names

    def counted(self, name):  # type: ignore[no-untyped-def]
        described.append(name)
        return describe(self, name)

    def listed(self, most):  # type: ignore[no-untyped-def]
        names = running_names(self, most)
        if listing == "listing fails":
            raise RuntimeError("ThrottlingException")
        return None if listing == "too many to list" else names

    monkeypatch.setattr(executions, "describe", counted)
    monkeypatch.setattr(executions, "running_names", listed)

    assert reconcile(deps)["restarted"] == []  # 40 members of a running batch: none alone
    asked = deps.batches.listed + len(described)
    assert asked <= 2 and described in ([], [batch])
    reconcile(deps)  # a new run asks again: the batch may have ended since
    assert deps.batches.listed + len(described) == 2 * asked
    assert deps.executions.started == {}


def test_a_retried_task_puts_a_recorded_failure_out_once_and_records_it_once(deps) -> None:
    _due_together(deps, 4)
    _start(deps, "broken", SECOND, template="BROKEN")
    _pump_at_launch(deps)
    first = {f["id"]: f for f in _run_batch(deps)}

    again = {f["id"]: f for f in _run_batch(deps, retry=1)}

    assert first["broken"]["outcome"] == again["broken"]["outcome"] == "FAILED"
    assert again["broken"]["error"] == "PermanentFulfillmentError"
    (report,) = deps.publisher.of_type(DetailType.FAILED)  # out once: the first noted it
    assert report["proof"]
    assert [h.outcome for h in deps.records.items["broken"].history] == [Outcome.FAILED]


# --- recurring fires go on together ------------------------------------------------------------
def _recurring_together(
    deps: Dependencies, count: int, rate: str = "rate(1 minute)", **more: Any
) -> list[str]:
    """Recurring actions whose fires fall in the same seconds (created at the same instant)."""
    ids = [f"r{n:03d}" for n in range(count)]
    start = SECOND - timedelta(minutes=30)
    for action_id in ids:
        detail = {"id": action_id, "rate": rate, "startTime": iso(start), **more}
        start_action(StartCommand(detail, f"ev-{action_id}"), deps)
    return ids


def _launched_together(
    deps: Dependencies, count: int, rate: str = "rate(1 minute)", **more: Any
) -> tuple[list[str], str, BatchOrder]:
    """Recurring actions whose first fires the pump launched as one batch, the clock at its
    second (where the batch machine's Wait ends)."""
    ids = _recurring_together(deps, count, rate, **more)
    deps.clock.current = deps.records.items[ids[0]].execution_time - AHEAD + timedelta(seconds=1)
    assert len(pump(deps)["batches"]) == 1
    name, order = _only_batch(deps)
    deps.clock.current = order.second
    return ids, name, order


def test_the_next_fires_of_a_batchs_recurrences_go_on_in_a_batch_of_their_own(deps) -> None:
    ids, name, order = _launched_together(deps, 6)

    fire_batch(order, deps.batches.execution_arn(name), 0, deps)

    # one chained batch, started by the task, holds every next fire: no execution of their own
    chained = {n: o for n, o in deps.batches.started.items() if n != name}
    [(next_name, next_order)] = chained.items()
    assert deps.executions.started == {}
    assert next_order.second == order.second + timedelta(minutes=1)
    assert [f.action_id for f in next_order.members] == ids
    assert {f.occurrence for f in next_order.members} == {2}
    arn = deps.batches.execution_arn(next_name)
    assert all(deps.records.items[i].execution_arn == arn for i in ids)
    # and it goes on: the chained batch's task chains the third fires in turn
    deps.clock.current = next_order.second
    fire_batch(next_order, deps.batches.execution_arn(next_name), 0, deps)
    assert len(deps.batches.started) == 3 and deps.executions.started == {}
    assert all(deps.records.items[i].occurrence == 3 for i in ids)


def test_a_next_fire_too_near_to_chain_gets_its_own_execution(deps) -> None:
    ids, name, order = _launched_together(deps, 5, rate="rate(5 seconds)")

    fire_batch(order, deps.batches.execution_arn(name), 0, deps)

    assert list(deps.batches.started) == [name]  # no chain: 5 s is within the task's reach
    assert {o.action_id for o in deps.executions.started.values()} == set(ids)


@pytest.mark.parametrize("late", [timedelta(seconds=6), timedelta(seconds=9)])
def test_a_batch_that_runs_late_still_chains_its_next_fires(
    deps, notifier, late: timedelta
) -> None:
    # Its task begins 6 or 9 s after the second: the chain's usual deadline (3 s before its
    # second, 11 s on) has passed or is near, yet the members recorded in the next moments
    # join it (their targets answer only once the task is under way), none runs alone.
    data = {"notificationType": "SMS", "templateType": "SLOW", "mobile": "60123456789"}
    slow = {"action": "SEND_NOTIFICATION", "data": data}
    ids, name, order = _launched_together(deps, 5, rate="rate(11 seconds)", **slow)
    deps.clock.current = order.second + late
    task = threading.Thread(
        target=fire_batch, args=(order, deps.batches.execution_arn(name), 0, deps)
    )
    task.start()
    threading.Timer(0.3, notifier.slow.set).start()
    task.join(timeout=60)

    chained = {n: o for n, o in deps.batches.started.items() if n != name}
    [next_order] = chained.values()
    assert deps.executions.started == {}
    assert next_order.second == order.second + timedelta(seconds=11)
    assert [f.action_id for f in next_order.members] == ids


def test_a_next_fire_due_within_a_second_of_a_late_task_runs_alone(deps) -> None:
    ids, name, order = _launched_together(deps, 5, rate="rate(11 seconds)")
    deps.clock.current = order.second + timedelta(seconds=10, milliseconds=500)

    fire_batch(order, deps.batches.execution_arn(name), 0, deps)

    assert list(deps.batches.started) == [name]  # no chain it could join in time
    assert {o.action_id for o in deps.executions.started.values()} == set(ids)


def test_a_retried_task_starts_the_same_chain_once_and_launches_nothing_alone(deps) -> None:
    ids, name, order = _launched_together(deps, 5)
    fire_batch(order, deps.batches.execution_arn(name), 0, deps)
    chained = dict(deps.batches.started)

    fire_batch(
        order, deps.batches.execution_arn(name), 1, deps
    )  # the machine's retry after a crash at the end

    assert deps.batches.started == chained and deps.executions.started == {}
    assert all(deps.records.items[i].occurrence == 2 for i in ids)


def test_a_member_a_retry_writes_into_a_chain_started_without_it_gets_its_own_execution(
    deps, monkeypatch
) -> None:
    # Attempt 0 records four members and starts their chain; the fifth's record write fails
    # (a DynamoDB error past the SDK's retries) and the task with it. The retry records the
    # fifth into the same chain, which the earlier start did not list: it would never fire it.
    ids, name, order = _launched_together(deps, 5)
    arn = deps.batches.execution_arn(name)
    save, failed = FakeTabbedRecords.save, []

    def failing_once(self, action, expected_version, recorded=None):  # type: ignore[no-untyped-def]
        if action.id == "r004" and recorded is not None and not failed:
            failed.append(action.id)
            raise RuntimeError("ProvisionedThroughputExceededException")
        return save(self, action, expected_version, recorded)

    monkeypatch.setattr(FakeTabbedRecords, "save", failing_once)
    with pytest.raises(RuntimeError):
        fire_batch(order, arn, 0, deps)
    [(chain, chained)] = ((n, o) for n, o in deps.batches.started.items() if n != name)
    assert [m.action_id for m in chained.members] == ids[:4]

    deps.clock.advance(seconds=2)  # the machine's retry
    fire_batch(order, arn, 1, deps)

    fifth = deps.records.items["r004"]
    assert fifth.occurrence == 2 and fifth.execution_arn != deps.batches.execution_arn(chain)
    [lone] = deps.executions.started
    assert fifth.execution_arn == deps.executions.execution_arn(lone)
    deps.clock.current = chained.second
    machine.run(deps, lone)
    fire_batch(chained, deps.batches.execution_arn(chain), 0, deps)
    fired = [(1, Outcome.FIRED), (2, Outcome.FIRED)]  # each of the two fires, once
    for action_id in ids:
        record = deps.records.items[action_id]
        assert [(h.occurrence, h.outcome) for h in record.history] == fired
        assert record.occurrence == 3


def test_a_reconciler_run_while_a_chain_waits_for_its_members_starts_none_alone(deps) -> None:
    ids, name, order = _launched_together(deps, 5)
    start, repaired = deps.batches.start, {}

    def reconciler_first(chain: str, chained: BatchOrder) -> str:
        if chain != name:  # the members' records name the chain; it has not started yet
            repaired.update(reconcile(deps))
        return start(chain, chained)

    deps.batches.start = reconciler_first  # type: ignore[method-assign]
    fire_batch(order, deps.batches.execution_arn(name), 0, deps)

    assert repaired["restarted"] == [] and deps.executions.started == {}
    [chained] = (o for n, o in deps.batches.started.items() if n != name)
    assert [m.action_id for m in chained.members] == ids


def test_a_refused_chain_parks_its_fires_again_for_the_pump(deps) -> None:
    ids, name, order = _launched_together(deps, 5)
    deps.batches.refusals = ["ThrottlingException"]

    fire_batch(order, deps.batches.execution_arn(name), 0, deps)

    assert all(deps.records.items[i].is_parked for i in ids)
    assert all(deps.records.items[i].occurrence == 2 for i in ids)
    again = pump(deps)
    assert sorted(again["launched"]) == ids and len(again["batches"]) == 1


def test_a_chain_never_started_is_repaired_by_the_reconciler(deps) -> None:
    ids, name, order = _launched_together(deps, 5)
    start = deps.batches.start
    deps.batches.start = lambda n, o: (_ for _ in ()).throw(RuntimeError("task died here"))
    with pytest.raises(RuntimeError):
        fire_batch(
            order, deps.batches.execution_arn(name), 0, deps
        )  # and every retry died too: the batch FAILED
    deps.batches.start = start
    deps.batches.end(name, "FAILED", error="States.TaskFailed")
    assert reconcile(deps)["restarted"] == []  # named lately: its starter may be at work

    deps.clock.advance(seconds=31)  # past the grace, the fires still to come
    repaired = reconcile(deps)

    assert sorted(repaired["restarted"]) == ids
    assert {o.action_id for o in deps.executions.started.values()} == set(ids)


@pytest.mark.parametrize(("events", "per_fire"), [("all", 3), ("essential", 1)])
def test_a_stack_may_send_only_the_essential_events(notifier, events: str, per_fire: int) -> None:
    bus = FakePublisher()
    deps = fake_dependencies(
        NOW, notifier=notifier, publisher=bus, launch_ahead=AHEAD, lifecycle_events=events,
        batch_state_machine_arn="arn:batch",
    )  # fmt: skip
    _due_together(deps, 5)
    _pump_at_launch(deps)

    _run_batch(deps)

    # a one-off sends Started when created, its Tick, and Completed when recorded; with
    # "essential", its Tick only
    kinds = [t for t, _ in bus.events]
    assert len(kinds) == 5 * per_fire and kinds.count(DetailType.TICK) == 5
    assert (DetailType.STARTED in kinds) is (events == "all")
    assert (DetailType.COMPLETED in kinds) is (events == "all")
