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
from tickwork_local.process import FAST_PARAMETERS
from tickwork_local.stack import EventTap, LocalStack

# Seconds, not minutes: a short lock, fast retries, and the real waits of the emulator.
FAST = FAST_PARAMETERS


class Stack:
    """One running stack plus what a test observes it by."""

    def __init__(self, local: LocalStack) -> None:
        self.local = local
        self.ticks: EventTap = local.tap([DetailType.TICK])
        self.lifecycle: EventTap = local.tap(
            [t for t in DetailType if t not in INBOUND and t is not DetailType.TICK]
        )
        table = local.outputs["ActionsTableName"]
        self.records = DynamoDBRecords(table)
        self.queries = DynamoDBQueries(table)
        self.parked = DynamoDBParkedFires(table)
        self.tallies = DynamoDBFireTallies(table)

    @property
    def deps(self) -> Dependencies:
        return bootstrap.from_environment()

    def start(self, detail: dict[str, Any]) -> str:
        return self.local.publish(DetailType.START, detail)

    def stop(self, action_id: str) -> str:
        return self.local.publish(DetailType.STOP, {"id": action_id})

    def record(self, action_id: str) -> Action:
        action = self.records.get(action_id)
        assert action is not None, f"no record for {action_id}"
        return action

    def wait_record(
        self, action_id: str, predicate: Callable[[Action], bool], timeout: float = 15
    ) -> Action:
        deadline = time.monotonic() + timeout
        while True:
            action = self.records.get(action_id)
            if action is not None and predicate(action):
                return action
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{action_id} never reached the expected state; last: {action}"
                )
            time.sleep(0.1)

    def ticks_for(self, action_id: str, count: int = 0, timeout: float = 0) -> list[dict[str, Any]]:
        events = self.ticks.wait_for(
            lambda evs: sum(e["detail"]["id"] == action_id for e in evs) >= count, timeout
        )
        return [e["detail"] for e in events if e["detail"]["id"] == action_id]

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
        deadline = time.monotonic() + timeout
        while True:
            executions = self.executions()
            if any(e["executionArn"] == arn for e in executions):
                return executions
            if time.monotonic() > deadline:
                raise AssertionError(f"execution {arn} never started")
            time.sleep(0.1)

    def pause_delivery(self, function_logical_id: str) -> None:
        """Stop delivering events to a function (its events wait in its queue): a lost tick."""
        for poller in self.local.pollers:
            if f"-{function_logical_id}-" in poller.queue_url:
                poller.stop()

    def invocations(self, function_logical_id: str) -> list[Any]:
        name = next(f.name for f in self.local.functions if f.logical_id == function_logical_id)
        return [i for i in self.local.runtime.invocations if i.function == name]


def wait_until(condition: Callable[[], bool], timeout: float = 30, what: str = "") -> None:
    """Wait for the state a test needs (never a fixed sleep); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never came true within {timeout:g}s: {what or condition}")
        time.sleep(0.1)


def assert_never_early(ticks: list[dict[str, Any]]) -> None:
    for tick in ticks:
        assert parse_iso(tick["actualTime"]) >= parse_iso(tick["scheduledTime"]), tick


def in_seconds(seconds: float) -> str:
    return iso(datetime.now(UTC) + timedelta(seconds=seconds))
