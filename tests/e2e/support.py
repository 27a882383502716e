"""What the end-to-end tests observe a running stack by."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from tickwork import bootstrap
from tickwork.adapters.dynamodb_parked import DynamoDBParkedFires
from tickwork.adapters.dynamodb_queries import DynamoDBQueries
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.adapters.dynamodb_tallies import DynamoDBFireTallies
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.events import INBOUND, DetailType
from tickwork.domain.times import iso, parse_iso
from tickwork.fire.planning import planned_execution
from tickwork_local.process import FAST_PARAMETERS
from tickwork_local.stack import EventTap, LocalStack

# Seconds, not minutes: a short lock, fast retries, and the real waits of the emulator.
FAST = FAST_PARAMETERS
# The stack of the test running in this process when it is on virtual time: the waits below
# move its clock on instead of sleeping (make_stack sets it).
VIRTUAL: list[LocalStack] = []
# On virtual time a wait ends when the state comes (the clock moves on as the stack settles):
# its wall timeout is for a hang, long enough for a machine loaded far past its cores.
_HANG = 120.0


def now() -> datetime:
    """The running stack's now: virtual time when it runs on it, else the wall clock."""
    return VIRTUAL[-1].clock.now() if VIRTUAL else datetime.now(UTC)


def advance(seconds: float) -> None:
    """Let ``seconds`` pass: on virtual time everything due meanwhile happens at once; on the
    wall clock a sleep (what a test that checks that nothing happens waits through)."""
    if VIRTUAL:
        VIRTUAL[-1].time.advance(seconds)
    else:
        time.sleep(seconds)


def advance_to(moment: datetime) -> None:
    """Let time reach ``moment``: on virtual time everything due by then happens, and the
    clock stops there (not at the next instant something waits for); on the wall clock a
    sleep until then."""
    if VIRTUAL:
        VIRTUAL[-1].time.advance_to(moment.timestamp())
    else:
        time.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()))


def _wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    """Until ``condition()``: on virtual time the clock moves on, instant by instant, each once
    the stack is idle; on the wall clock a poll. False after ``timeout`` wall seconds."""
    if VIRTUAL:  # the stack's own progress decides; the wall timeout only stops a hang
        return VIRTUAL[-1].time.advance_until(condition, timeout=max(timeout, _HANG))
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


class Stack:
    """One running stack plus what a test observes it by."""

    def __init__(self, local: LocalStack) -> None:
        self.local = local
        self.ticks: EventTap = local.tap([DetailType.TICK])
        self.lifecycle: EventTap = local.tap(
            [t for t in DetailType if t not in INBOUND and t is not DetailType.TICK]
        )
        table = local.outputs["ActionsTableName"]
        self.records = DynamoDBRecords(table, refs=local.refs)
        # counts by the stack's days
        self.queries = DynamoDBQueries(table, clock=local.clock, refs=local.refs)
        self.parked = DynamoDBParkedFires(table)
        self.tallies = DynamoDBFireTallies(table)

    @property
    def deps(self) -> Dependencies:
        return bootstrap.from_environment()

    def start(self, detail: dict[str, Any]) -> str:
        return self.local.publish(DetailType.START, detail)

    def stop(self, action_id: str) -> str:
        return self.local.publish(DetailType.STOP, {"id": action_id})

    def wait_counted(self, timeout: float = 30) -> None:
        """Until the count function has folded every action's write into the counts and fire
        totals (on AWS they follow the writes by up to ``CountLagSeconds`` plus ``CountSchedule``;
        here a second)."""
        wait_until(lambda: not self.local.unfolded(), timeout, "the counts to be folded")

    def record(self, action_id: str) -> Action:
        action = self.records.get(action_id)
        assert action is not None, f"no record for {action_id}"
        return action

    def wait_record(
        self, action_id: str, predicate: Callable[[Action], bool], timeout: float = 15
    ) -> Action:
        last: list[Action | None] = [None]

        def reached() -> bool:
            last[0] = self.records.get(action_id)
            return last[0] is not None and predicate(last[0])

        if not _wait_for(reached, timeout):
            raise AssertionError(f"{action_id} never reached the expected state; last: {last[0]}")
        assert last[0] is not None
        return last[0]

    def wait_launched(self, action_id: str, timeout: float = 15) -> Action:
        """Until the action's fire has its execution: named by the record, or — parked far —
        its own, started by the pump without a write (the record waits for it)."""

        def launched(action: Action) -> bool:
            if action.execution_arn is not None:
                return True
            if not action.parked_far:
                return False
            arn = planned_execution(action, self.deps)[1]
            return any(e["executionArn"] == arn for e in self.executions())

        return self.wait_record(action_id, launched, timeout)

    def ticks_for(self, action_id: str, count: int = 0, timeout: float = 0) -> list[dict[str, Any]]:
        def mine() -> list[dict[str, Any]]:
            return [e["detail"] for e in self.ticks.drain() if e["detail"]["id"] == action_id]

        if timeout:
            _wait_for(lambda: len(mine()) >= count, timeout)
        return mine()

    def executions(self) -> list[dict[str, Any]]:
        """Every execution of the stack's machines, lone fires' and batches'."""
        sfn = self.local.client("stepfunctions")
        return [
            execution
            for machine in self.local.machines
            for execution in sfn.list_executions(stateMachineArn=machine)["executions"]
        ]

    def wait_execution(self, arn: str, timeout: float = 15) -> list[dict[str, Any]]:
        """Wait until execution `arn` exists, and return every execution (a start's record names
        its execution before StartExecution returns)."""
        if not _wait_for(lambda: any(e["executionArn"] == arn for e in self.executions()), timeout):
            raise AssertionError(f"execution {arn} never started")
        return self.executions()

    def pause_delivery(self, function_logical_id: str) -> None:
        """Stop delivering events to a function (its events wait in its queue): a lost tick."""
        for poller in self.local.pollers:
            if f"-{function_logical_id}-" in poller.queue_url:
                poller.stop()

    def stop_schedule(self, function_logical_id: str) -> None:
        """Stop running a function on its schedule (the pump or the reconciler down)."""
        for runner in self.local.schedules:
            if runner.function == function_logical_id:
                runner.stop()

    def invocations(self, function_logical_id: str) -> list[Any]:
        name = next(f.name for f in self.local.functions if f.logical_id == function_logical_id)
        return [i for i in self.local.runtime.invocations if i.function == name]


def wait_until(condition: Callable[[], bool], timeout: float = 30, what: str = "") -> None:
    """Wait for the state a test needs (never a fixed sleep; on virtual time the stack's clock
    moves on meanwhile); fail after ``timeout`` wall seconds."""
    if not _wait_for(condition, timeout):
        raise AssertionError(f"never came true within {timeout:g}s: {what or condition}")


def assert_never_early(ticks: list[dict[str, Any]]) -> None:
    for tick in ticks:
        assert parse_iso(tick["actualTime"]) >= parse_iso(tick["scheduledTime"]), tick


def in_seconds(seconds: float) -> str:
    return iso(now() + timedelta(seconds=seconds))
