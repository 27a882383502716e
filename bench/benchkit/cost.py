"""Cost per fire, counted on the real definition in an in-process stack.

For each scenario the actions go through their whole life (Start, waits, fires, ticks; or a
cancel) while a Recorder counts what AWS would bill: state transitions (from the executions'
histories: each state entered, and each retry of a task), Lambda invocations and GB-seconds
(the handler's wall time here times the function's MemorySize, at the arm64 rate), DynamoDB
request units as benchkit/cost_rates.py counts them (each write on its items before and after,
with its index writes; each read on what it returned), EventBridge events (PutEvents entries)
and the logs each invocation wrote. Dollars come from prices.py. Wall times are this
machine's, with the AWS calls served in process.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from moto import mock_aws

from benchkit import prices
from benchkit.billing import ingested_log_bytes, tracing
from benchkit.indexes import TEMPLATE, table_indexes
from benchkit.recorder import Invocation, Recorder
from benchkit.units import call_units, item_size
from tickwork.domain.events import DetailType
from tickwork_local.receiver import Receiver
from tickwork_local.server import EMULATOR_CONFIG
from tickwork_local.stack import LocalStack

__all__ = ["SCENARIOS", "Usage", "measure_costs", "polling_design_per_million"]

PARAMETERS = {
    "RetryIntervalSeconds": "1",
    "RetryMaxDelaySeconds": "2",
    "RetryMaxAttempts": "3",
    "LogLevel": "WARNING",
}
PUBLISHER = "publisher"  # the user's own Start and Stop events: on their bill too


@dataclass
class Usage:
    scenario: str
    actions: int
    fires: int
    transitions: int = 0
    invocations: Counter[str] = field(default_factory=Counter)
    gb_seconds: float = 0.0
    read_units: float = 0.0
    write_units: float = 0.0
    events: int = 0
    calls: Counter[str] = field(default_factory=Counter)
    index_write_units: float = 0.0
    log_bytes: float = 0.0

    @property
    def per(self) -> int:
        """What the figures are divided by: fires, or actions when none fire (cancelled)."""
        return self.fires or self.actions

    def each(self, value: float) -> float:
        return value / self.per

    def dollars(self) -> dict[str, float]:
        """Dollars per million fires (per million actions for a cancelled one), by service."""
        return prices.per_million(
            self.per,
            transitions=self.transitions,
            requests=sum(self.invocations.values()),
            gb_seconds=self.gb_seconds,
            read_units=self.read_units,
            write_units=self.write_units,
            events=self.events,
            index_write_units=self.index_write_units,
            log_bytes=self.log_bytes,
        )


@dataclass(frozen=True)
class Scenario:
    name: str
    actions: int
    fires: int
    run: Callable[[LocalStack, Recorder, Any], None]


def _once(local: LocalStack, recorder: Recorder, _receiver: Any) -> None:
    for n in range(5):
        local.publish(DetailType.START, {"id": f"once-{n}", "duration": "2s"})
    _wait_status(local, recorder, [f"once-{n}" for n in range(5)], "COMPLETED")


def _recurring(local: LocalStack, recorder: Recorder, _receiver: Any) -> None:
    for n in range(2):
        local.publish(
            DetailType.START,
            {
                "id": f"every-{n}",
                "rate": "rate(2 seconds)",
                "repeat": True,
                "executionRemainder": 3,
            },
        )
    _wait_status(local, recorder, ["every-0", "every-1"], "COMPLETED")


def _one_retry(local: LocalStack, recorder: Recorder, receiver: Receiver) -> None:
    receiver.failures = 3  # the first attempt of each of the three fails, its retry succeeds
    for n in range(3):
        detail = {
            "id": f"retry-{n}",
            "duration": "2s",
            "action": "HTTP_REQUEST",
            "data": {"url": receiver.url, "method": "POST", "body": {"n": n}},
        }
        local.publish(DetailType.START, detail)
    _wait_status(local, recorder, [f"retry-{n}" for n in range(3)], "COMPLETED")


def _cancelled(local: LocalStack, recorder: Recorder, _receiver: Any) -> None:
    ids = [f"cancel-{n}" for n in range(5)]
    for action_id in ids:
        local.publish(DetailType.START, {"id": action_id, "duration": "1h"})
    _wait_status(local, recorder, ids, "PENDING")
    for action_id in ids:
        local.publish(DetailType.STOP, {"id": action_id})
    _wait_status(local, recorder, ids, "CANCELLED")


SCENARIOS = (
    Scenario("one-off", 5, 5, _once),
    Scenario("recurring (3 fires)", 2, 6, _recurring),
    Scenario("one retry", 3, 3, _one_retry),
    Scenario("cancelled before its fire", 5, 0, _cancelled),
)


def measure_costs(progress: Callable[[str], None]) -> tuple[list[Usage], list[Invocation]]:
    """The usage of each scenario, and every function invocation (for warm CPU figures)."""
    recorder = Recorder()
    receiver = Receiver()
    usages = []
    invocations: list[Invocation] = []
    try:
        with mock_aws(config=EMULATOR_CONFIG):
            stack = LocalStack.from_repo(parameters=PARAMETERS)
            names = {spec.name: spec.logical_id for spec in stack.functions}
            memory = {spec.name: spec.memory_mb for spec in stack.functions}
            with stack.running() as local, recorder.installed(names, memory):
                for scenario in SCENARIOS:
                    progress(f"cost: {scenario.name} ...")
                    with recorder.unrecorded():
                        local.wait_idle(timeout=30)
                        before = _execution_arns(local)
                    recorder.clear()
                    with recorder.calling_as(PUBLISHER):
                        scenario.run(local, recorder, receiver)
                    with recorder.unrecorded():
                        local.wait_idle(timeout=60)
                        usages.append(_usage(scenario, local, recorder, before))
                        invocations.extend(recorder.invocations)
    finally:
        receiver.close()
    return usages, invocations


def _wait_status(local: LocalStack, recorder: Recorder, ids: list[str], status: str) -> None:
    ddb = local.client("dynamodb")
    table = local.outputs["ActionsTableName"]
    deadline = time.monotonic() + 60
    with recorder.unrecorded():
        while time.monotonic() < deadline:
            items = [ddb.get_item(TableName=table, Key={"id": {"S": i}}).get("Item") for i in ids]
            if all(item and item["status"]["S"] == status for item in items):
                return
            time.sleep(0.1)
    raise TimeoutError(f"{ids} did not all reach {status}")


def _execution_arns(local: LocalStack) -> set[str]:
    sfn = local.client("stepfunctions")
    pages = sfn.get_paginator("list_executions").paginate(
        stateMachineArn=local.outputs["StateMachineArn"]
    )
    return {e["executionArn"] for page in pages for e in page["executions"]}


def _usage(scenario: Scenario, local: LocalStack, recorder: Recorder, before: set[str]) -> Usage:
    usage = Usage(scenario.name, scenario.actions, scenario.fires)
    sfn = local.client("stepfunctions")
    for arn in _execution_arns(local) - before:
        history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
        usage.transitions += _billed_transitions(history)
    for invocation in recorder.invocations:
        usage.invocations[invocation.function] += 1
        # Lambda bills each invocation's duration rounded up to the millisecond.
        billed = math.ceil(invocation.wall_seconds * 1000) / 1000
        usage.gb_seconds += billed * invocation.memory_mb / 1024
    actions_table = local.outputs["ActionsTableName"]
    table_keys, indexes = table_indexes()
    system_lines = tracing(TEMPLATE, PARAMETERS).system_lines
    for invocation in recorder.invocations:
        usage.log_bytes += ingested_log_bytes(invocation, system_lines=system_lines)
    for call in recorder.calls:
        usage.calls[f"{call.caller}: {call.service}.{call.operation}"] += 1
        if call.service == "dynamodb":
            reads, writes, by_index = call_units(
                call, actions_table, indexes, item_size, table_keys
            )
            usage.read_units += reads
            usage.write_units += writes
            usage.index_write_units += sum(by_index.values())
        elif call.service == "events" and call.operation == "PutEvents":
            usage.events += len(call.params.get("Entries", []))
    return usage


def _billed_transitions(history: list[dict[str, Any]]) -> int:
    """Each state entered, plus each retry of a task (AWS bills a retry as a transition)."""
    entered = sum(1 for e in history if e["type"].endswith("StateEntered"))
    scheduled = sum(1 for e in history if e["type"] in ("TaskScheduled", "LambdaFunctionScheduled"))
    task_states = sum(1 for e in history if e["type"] == "TaskStateEntered")
    return entered + max(0, scheduled - task_states)


def polling_design_per_million(fires_per_month: int = prices.MILLION) -> dict[str, float]:
    """A Lambda every minute querying a table for due rows, per million fires a month.

    Assumed: 128 MB, 200 ms a run; one 1 RRU query a run plus one read per due row; one write
    to create a row and one to mark it done; one event to deliver it. Fires up to 60 s late.
    """
    runs = 60 * 24 * 30
    fixed = runs * (
        prices.LAMBDA_PER_REQUEST
        + 0.2 * 128 / 1024 * prices.LAMBDA_PER_GB_SECOND
        + prices.DYNAMODB_PER_READ_REQUEST_UNIT
    )
    per_fire = (
        prices.DYNAMODB_PER_READ_REQUEST_UNIT
        + 2 * prices.DYNAMODB_PER_WRITE_REQUEST_UNIT
        + prices.EVENTBRIDGE_PER_CUSTOM_EVENT
    )
    scale = prices.MILLION / fires_per_month
    return {"fixed": fixed * scale, "per fire": per_fire * prices.MILLION}
