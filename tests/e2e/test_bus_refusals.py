"""GIVEN a bus that refuses a fire's tick, or its failure report, for a while WHEN the fire runs
through the real definition THEN the tick, recorded first, comes back to the machine in the
task's error and its Emit tick puts it there; a report refused on every attempt of the
machine's PutEvents task leaves FireFailed with the report, and the reconciler puts it on the
bus and records the fire once: the target is reached once, never twice."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.e2e.support import Stack, assert_never_early, in_seconds
from tickwork.domain.action import Status
from tickwork.domain.events import DetailType
from tickwork.fire.reconcile import reconcile
from tickwork_local.receiver import Receiver

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from chaoskit.bus_refusals import PUT_ATTEMPTS, BusRefusals, tick_or_report_of

# Its waits are on wall-clock seconds still (batches form on the pump's real runs).
pytestmark = pytest.mark.real_time


@pytest.fixture
def refusing() -> Iterator[list[BusRefusals]]:
    installed: list[BusRefusals] = []
    yield installed
    for refusals in installed:
        refusals.uninstall()


def _hook(action_id: str, receiver: Receiver) -> dict:
    return {
        "id": action_id,
        "at": in_seconds(2),
        "action": "HTTP_REQUEST",
        "data": {"url": receiver.url, "method": "POST", "body": {"n": 1}},
    }


def _ended(stack: Stack, prefix: str, timeout: float = 90) -> dict:
    """The first execution named ``prefix…`` once it has ended (its PutEvents retries back off
    for about 15 s, 31 s at most)."""
    sfn = stack.local.client("stepfunctions")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for execution in stack.executions():
            if execution["name"].startswith(prefix) and execution["status"] != "RUNNING":
                return sfn.describe_execution(executionArn=execution["executionArn"])
        time.sleep(0.25)
    raise AssertionError(f"no execution of {prefix} ended in {timeout:g}s")


def test_a_tick_the_bus_refuses_is_put_there_by_emit_tick_and_the_target_runs_once(
    stack: Stack, receiver: Receiver, refusing: list[BusRefusals]
) -> None:
    # GIVEN a bus that refuses this fire's tick on the Fulfill task's put and 5 more puts
    refusals = BusRefusals(tick_or_report_of("busdown:", DetailType.TICK)).install()
    refusing.append(refusals)
    stack.start(_hook("busdown:1", receiver))

    # WHEN the fire runs: the task records it, the bus refuses its tick, which the task's error
    # (TickUndelivered) carries to the machine; its Emit tick puts it, retried
    execution = _ended(stack, "busdown_1")

    # THEN the execution succeeds with the tick as its output, the tick reached the bus once
    # (the record held the fire before), and the target ran once
    assert execution["status"] == "SUCCEEDED"
    output = json.loads(execution["output"])
    assert output["outcome"] == "FIRED" and output["recorded"] is True
    assert "undelivered" not in output
    assert sum(refusals.refused.values()) == PUT_ATTEMPTS
    assert stack.record("busdown:1").status == Status.COMPLETED
    ticks = stack.ticks_for("busdown:1", count=1, timeout=10)
    assert len(ticks) == 1 and ticks[0]["proof"] == output["proof"]
    assert_never_early(ticks)
    assert len(receiver.requests) == 1
    # AND the reconciler has nothing to repair
    repaired = reconcile(stack.deps, stuck_after=timedelta(0))
    assert (repaired["recorded"], repaired["released"], repaired["restarted"]) == ([], [], [])
    assert len(receiver.requests) == 1 and len(stack.ticks_for("busdown:1")) == 1


def test_a_failure_report_the_bus_refuses_is_recorded_failed_and_never_run_again(
    stack: Stack, refusing: list[BusRefusals]
) -> None:
    # GIVEN a fire whose target refuses it for good, and a bus that refuses its failure report
    # on every attempt of the Report failure task
    refusals = BusRefusals(tick_or_report_of("reportlost:", DetailType.FAILED)).install()
    refusing.append(refusals)
    receiver = Receiver(failures=100)  # 500s past every retry
    try:
        stack.start(_hook("reportlost:1", receiver))

        # WHEN the fire fails past its retries: the execution ends in FireFailed with the
        # proved report (and why it was refused) as its cause
        execution = _ended(stack, "reportlost_1")
        attempts = len(receiver.requests)
    finally:
        receiver.close()
    assert (execution["status"], execution["error"]) == ("FAILED", "FireFailed")
    report = json.loads(execution["cause"])
    assert report["error"] == "RetriesExhausted" and report["proof"]
    assert "TransientFulfillmentError" in report["cause"]
    assert "undelivered" in report
    assert stack.record("reportlost:1").status == Status.IN_PROGRESS

    # AND the reconciler runs (twice)
    first = reconcile(stack.deps, stuck_after=timedelta(0))
    second = reconcile(stack.deps, stuck_after=timedelta(0))

    # THEN the failure is recorded once from the report, which reaches the bus; the fire is
    # never run again (the claim is not released)
    assert first["failed"] == ["reportlost:1"] and second["failed"] == []
    assert first["released"] == [] and first["restarted"] == []
    failed = stack.wait_record("reportlost:1", lambda a: a.status == Status.FAILED)
    assert "TransientFulfillmentError" in (failed.history[-1].error or "")
    reported = stack.lifecycle.wait_for(
        lambda evs: any(e["detail-type"] == "Schedule Failed" for e in evs), timeout=10
    )
    assert [e["detail"]["id"] for e in reported if e["detail-type"] == "Schedule Failed"] == [
        "reportlost:1"
    ]
    assert len(receiver.requests) == attempts == 3  # the first attempt and its 2 retries
