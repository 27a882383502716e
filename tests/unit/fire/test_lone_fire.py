"""GIVEN a fire in its own execution WHEN its Fulfill task runs THEN the fire is recorded before
its tick is put on the bus (the tick marked ``recorded``, the execution's happy path 2 states);
and however often the bus refuses the tick (its error carries it to the machine's Emit tick),
or the task is retried after recording it, the fire runs once, is recorded once, and the same
tick reaches the bus once the bus takes it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit import machine
from tests.unit.fakes import FakePublisher, fake_dependencies
from tickwork.answers import Done
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionSuperseded, PermanentFulfillmentError, TickUndelivered
from tickwork.domain.events import DetailType
from tickwork.domain.fire import CaughtFailure, FireAttempt, Outcome, Tick
from tickwork.fire import record
from tickwork.fire.launch import launch
from tickwork.fire.lone_fire import failure_of, fire_lone
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.ports import OutboundEvent
from tickwork.steering.intake import accept_report
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
FIRE = NOW + timedelta(minutes=10)


class _Bus(FakePublisher):
    """Refuses the first ``refusals`` ticks; notes what the record held when each was put."""

    def __init__(self, refusals: int = 0) -> None:
        super().__init__()
        self.refusals = refusals
        self.deps: Dependencies | None = None
        self.history_at_put: list[int] = []

    def publish(self, event: OutboundEvent) -> None:
        if event.detail_type == DetailType.TICK:
            if self.refusals:
                self.refusals -= 1
                raise RuntimeError("ThrottlingException: the bus refused the entry")
            assert self.deps is not None
            action = self.deps.records.get(event.to_wire()["id"])
            self.history_at_put.append(len(action.history) if action else -1)
        super().publish(event)


class _Counted:
    """The action type's fulfillment, counting its calls (the target's view)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.keys: list[str] = []

    def __getattr__(self, name: str) -> Any:  # the rest of the type: its data model, ...
        return getattr(self.inner, name)

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        self.keys.append(request.idempotency_key)
        result: dict[str, Any] = self.inner.fulfill(request)
        return result


def _stack(
    monkeypatch: pytest.MonkeyPatch, detail: dict[str, Any], refusals: int = 0
) -> tuple[Dependencies, _Bus, _Counted]:
    bus = _Bus(refusals)
    deps = fake_dependencies(NOW, publisher=bus)
    bus.deps = deps
    start_action(StartCommand({"id": "a:1", **detail}), deps)
    counted = _Counted(deps.registry.get("TICK"))
    monkeypatch.setattr(deps.registry, "get", lambda name: counted)
    deps.clock.current = FIRE + timedelta(milliseconds=40)  # type: ignore[attr-defined]
    return deps, bus, counted


def _attempt(deps: Dependencies, retry: int = 0) -> FireAttempt:
    name = machine.current(deps, "a:1")
    order = deps.executions.started[name]  # type: ignore[attr-defined]
    return FireAttempt(order, deps.executions.execution_arn(name), retry)


ONE_OFF = {"at": FIRE.isoformat()}
RECURRING = {"rate": "rate(10 minutes)"}


def test_the_fire_is_recorded_before_its_tick_is_put(monkeypatch: pytest.MonkeyPatch) -> None:
    deps, bus, counted = _stack(monkeypatch, ONE_OFF)

    fired = fire_lone(_attempt(deps), deps)

    action = deps.records.get("a:1")
    assert action is not None and action.status == Status.COMPLETED
    assert bus.history_at_put == [1]  # the record held the fire when its tick went out
    [tick] = bus.of_type(DetailType.TICK)
    assert tick == fired.tick.to_wire() and tick["recorded"] is True
    assert fired.recorded and fired.tick.outcome is Outcome.FIRED
    assert len(counted.keys) == 1
    assert [d["id"] for d in bus.of_type(DetailType.COMPLETED)] == ["a:1"]


def test_a_refused_tick_is_carried_to_the_machine_in_the_error_and_the_fire_never_runs_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deps, bus, counted = _stack(monkeypatch, RECURRING, refusals=1)

    with pytest.raises(TickUndelivered) as refused:
        fire_lone(_attempt(deps), deps)

    carried = json.loads(str(refused.value))  # what the machine's "The tick" state reads
    assert carried["recorded"] is True and carried["occurrence"] == 1
    assert carried["idempotencyKey"] == counted.keys[0]
    assert Tick.from_wire(carried).to_wire() == carried  # a whole tick, as the task made it
    action = deps.records.get("a:1")
    assert action is not None and action.occurrence == 2 and len(action.history) == 1
    assert bus.of_type(DetailType.TICK) == [] and len(counted.keys) == 1


def test_a_task_retried_after_its_record_puts_the_same_tick_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crash between the record and the put (the function died): the machine retries the
    task, which rebuilds the tick from the record and puts it; the target is not called."""
    deps, bus, counted = _stack(monkeypatch, ONE_OFF)
    first = _attempt(deps)
    monkeypatch.setattr(_Bus, "publish", _dies_once(_Bus.publish))
    with pytest.raises(KeyboardInterrupt):  # the process died: no handler of the stack's ran
        fire_lone(first, deps)

    again = fire_lone(FireAttempt(first.order, first.execution_arn, 1), deps)

    [tick] = bus.of_type(DetailType.TICK)
    assert tick == again.tick.to_wire() and tick["recorded"] is True
    assert not again.recorded and len(counted.keys) == 1
    # Schedule Completed at least once: the retry records again, which announces it again
    assert {d["id"] for d in bus.of_type(DetailType.COMPLETED)} == {"a:1"}


def test_a_task_of_another_execution_puts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the execution that recorded the occurrence may put its tick again."""
    deps, bus, _ = _stack(monkeypatch, ONE_OFF)
    first = _attempt(deps)
    fire_lone(first, deps)
    other = FireAttempt(first.order, first.execution_arn.replace("-o1", "-o1-r1"), 0)

    with pytest.raises(ActionSuperseded):
        fire_lone(other, deps)
    assert len(bus.of_type(DetailType.TICK)) == 1


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    refusals=st.integers(min_value=0, max_value=8),
    recurring=st.booleans(),
    ms=st.integers(min_value=0, max_value=999),
    crash_after_record=st.booleans(),
)
def test_however_often_the_bus_refuses_the_fire_runs_and_is_recorded_once(
    monkeypatch: pytest.MonkeyPatch,
    refusals: int,
    recurring: bool,
    ms: int,
    crash_after_record: bool,
) -> None:
    """The task, then the machine as its definition says: a crash between the record and the
    put retries the task; a refused tick goes to Emit tick, which puts the carried tick until
    the bus takes it."""
    detail = RECURRING if recurring else {"at": (FIRE + timedelta(milliseconds=ms)).isoformat()}
    deps, bus, counted = _stack(monkeypatch, detail, refusals)
    deps.clock.current = FIRE + timedelta(milliseconds=999)  # type: ignore[attr-defined]
    first = _attempt(deps)
    if crash_after_record:
        monkeypatch.setattr(_Bus, "publish", _dies_once(_Bus.publish))

    carried = None
    for retry in range(2):  # Lambda.Unknown: the machine's Retry runs the task again
        try:
            fire_lone(FireAttempt(first.order, first.execution_arn, retry), deps)
            break
        except KeyboardInterrupt:
            continue
        except TickUndelivered as refused:
            carried = json.loads(str(refused))
            break
    while carried is not None:  # Emit tick and its retries
        try:
            bus.publish(Tick.from_wire(carried))
            carried = None
        except RuntimeError:
            continue

    assert len(counted.keys) == 1  # the target reached once
    ticks = bus.of_type(DetailType.TICK)
    assert len(ticks) == 1 and ticks[0]["recorded"] is True
    assert ticks[0]["actualTime"] >= ticks[0]["scheduledTime"]  # never early
    assert ticks[0]["idempotencyKey"] == counted.keys[0]
    action = deps.records.get("a:1")
    assert action is not None
    assert [(h.occurrence, h.outcome) for h in action.history] == [(1, Outcome.FIRED)]
    assert action.status == (Status.PENDING if recurring else Status.COMPLETED)
    if recurring:  # the next fire started once
        nexts = [o for o in deps.executions.started.values() if o.occurrence == 2]  # type: ignore[attr-defined]
        assert len(nexts) == 1
    else:
        assert len(bus.of_type(DetailType.COMPLETED)) >= 1


def _dies_once(publish: Any) -> Any:
    died: list[bool] = []

    def once(self: Any, event: OutboundEvent) -> None:
        if event.detail_type == DetailType.TICK and not died:
            died.append(True)
            raise KeyboardInterrupt  # the process dies between the record and the put
        publish(self, event)

    return once


def test_a_failure_report_is_refused_for_a_fire_its_execution_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Prove failure (an older definition's Catch, or an error on a retry) never contradicts
    the record: no Schedule Failed for a fire that ran."""
    deps, _, _ = _stack(monkeypatch, ONE_OFF)
    first = _attempt(deps)
    fire_lone(first, deps)
    report = CaughtFailure(first.order, "TickUndelivered", "{}")

    with pytest.raises(ActionSuperseded, match="recorded the fire as run"):
        failure_of(report, first.execution_arn, deps)


def test_a_record_that_cannot_be_written_is_left_to_the_tick_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Never a retry that runs the fire again: the tick goes out unmarked, as an execution
    started before put it, and the tick function records it."""
    deps, bus, counted = _stack(monkeypatch, RECURRING)
    save = deps.records.save

    def refused(action: Any, expected_version: int, recorded: Any = None) -> None:
        if recorded is None:  # the claim goes through; the write recording the fire does not
            return save(action, expected_version=expected_version)
        raise RuntimeError("ProvisionedThroughputExceededException")

    monkeypatch.setattr(deps.records, "save", refused)
    fired = fire_lone(_attempt(deps), deps)
    monkeypatch.setattr(deps.records, "save", save)

    [tick] = bus.of_type(DetailType.TICK)
    assert "recorded" not in tick and not fired.recorded
    assert deps.records.get("a:1").status == Status.IN_PROGRESS  # claimed, not recorded
    answer = accept_report(DetailType.TICK, tick, "ev-1", deps)  # the tick function
    assert answer.outcome is Done.RECORDED  # type: ignore[union-attr]
    assert deps.records.get("a:1").occurrence == 2 and len(counted.keys) == 1


def test_what_fails_after_the_record_is_finished_by_the_tick_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Written, then the next fire's start failed: the tick goes out unmarked, and the tick
    function, finding the fire recorded, starts the next fire; the fire never runs again."""
    deps, bus, counted = _stack(monkeypatch, RECURRING)
    crashed = []

    def launch_once(*args: Any, **kwargs: Any) -> Any:
        if not crashed:
            crashed.append(True)
            raise RuntimeError("planted crash in the launch of the next occurrence")
        return launch(*args, **kwargs)

    monkeypatch.setattr(record, "launch", launch_once)
    fired = fire_lone(_attempt(deps), deps)

    [tick] = bus.of_type(DetailType.TICK)
    assert "recorded" not in tick and not fired.recorded
    assert not _started(deps, occurrence=2)
    answer = accept_report(DetailType.TICK, tick, "ev-1", deps)  # the tick function
    assert answer.outcome is Done.IGNORED  # type: ignore[union-attr]
    assert len(_started(deps, occurrence=2)) == 1 and len(counted.keys) == 1


def _started(deps: Dependencies, occurrence: int) -> list[Any]:
    started = deps.executions.started.values()  # type: ignore[attr-defined]
    return [o for o in started if o.occurrence == occurrence]


class _Refusing:
    """The target answers 400 to every fire (the fulfillment fails for good)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        raise PermanentFulfillmentError("POST https://x.test answered 400")


def test_a_failure_recorded_late_skips_nothing_that_came_due_after_it_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 10 s rate (overlapPolicy SKIP) whose fire failed at once, its report recorded 35 s
    later (the bus refused it; the reconciler put it): the occurrences due meanwhile came due
    after the fire ended — missed, not overlapped — so none is recorded SKIPPED, and the next
    runs at once, late, as its catch-up (ONCE within 60 s) says. The report says when the fire
    failed (``failedAt``), and so does its history entry."""
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "r", "rate": "rate(10 seconds)"}), deps)
    refusing = _Refusing(deps.registry.get("TICK"))
    monkeypatch.setattr(deps.registry, "get", lambda name: refusing)
    action = deps.records.get("r")
    assert action is not None and action.execution_time is not None
    deps.clock.current = action.execution_time + timedelta(milliseconds=40)  # type: ignore[attr-defined]
    name = machine.current(deps, "r")
    order = deps.executions.started[name]  # type: ignore[attr-defined]
    first = FireAttempt(order, deps.executions.execution_arn(name), 0)
    with pytest.raises(PermanentFulfillmentError):
        fire_lone(first, deps)
    failed_at = deps.clock.now()
    report = CaughtFailure(order, "PermanentFulfillmentError", "{}")
    failure = failure_of(report, first.execution_arn, deps)
    assert failure.failed_at == failed_at and failure.to_wire()["failedAt"]

    deps.clock.advance(seconds=35)  # type: ignore[attr-defined]
    assert record.record_failure(failure, deps).outcome is Done.RECORDED

    after = deps.records.get("r")
    assert after is not None and after.status == Status.PENDING
    assert [h.outcome for h in after.history] == [Outcome.FAILED]
    assert after.history[0].actual_time == failed_at  # when it failed, not when recorded
    assert after.execution_time is not None and after.execution_time <= deps.clock.now()
    assert after.occurrence > 1
    assert not deps.publisher.of_type("Schedule Skipped")  # type: ignore[attr-defined]
