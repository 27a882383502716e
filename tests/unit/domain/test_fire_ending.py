"""GIVEN what DescribeExecution returns for each ending of the fire state machine WHEN the
reconciler reads it THEN a tick, a failure report (and whether the bus refused it) or nothing is
found — never a tick or report where the execution left none."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tickwork.domain.fire import FireFailure, Outcome, Tick
from tickwork.domain.fire_ending import failure_left, tick_left

AT = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
TICK = Tick("a:1", 1, 2, AT, AT, 1, "TICK", Outcome.FIRED, "a_1-g1-o2", "key", proof="v1=ab")
REPORT = FireFailure(
    "a:1", 1, 2, AT, "a_1-g1-o2", "PermanentFulfillmentError", "400", proof="v1=cd"
)
REFUSED = {"Error": "EventBridge.FailedEntry", "Cause": '{"FailedEntryCount": 1}'}


def test_a_succeeded_execution_left_its_tick() -> None:
    left = tick_left("SUCCEEDED", TICK.to_wire())
    assert left is not None and left.tick == TICK and not left.undelivered


def test_a_tick_the_bus_refused_is_found_and_marked_undelivered() -> None:
    left = tick_left("SUCCEEDED", {**TICK.to_wire(), "undelivered": REFUSED})
    assert left is not None and left.tick == TICK and left.undelivered


@pytest.mark.parametrize(
    ("status", "output"),
    [
        ("SUCCEEDED", {"id": "a:1", "generation": 1, "occurrence": 2, "fireAt": "x"}),  # quiet
        ("SUCCEEDED", None),
        ("FAILED", TICK.to_wire()),
        ("ABORTED", None),
    ],
    ids=["ended-quietly", "no-output", "failed", "aborted"],
)
def test_no_tick_where_the_execution_left_none(status: str, output: object) -> None:
    assert tick_left(status, output) is None


def test_fire_failed_with_a_report_as_its_cause_left_the_report() -> None:
    left = failure_left("FAILED", "FireFailed", json.dumps(REPORT.to_wire()))
    assert left is not None and left.failure == REPORT and not left.undelivered


def test_a_report_the_bus_refused_is_found_and_marked_undelivered() -> None:
    cause = json.dumps({**REPORT.to_wire(), "undelivered": REFUSED})
    left = failure_left("FAILED", "FireFailed", cause)
    assert left is not None and left.failure == REPORT and left.undelivered


def test_fire_failed_without_a_report_says_so() -> None:
    left = failure_left("FAILED", "FireFailed", "The fulfillment failed past its retries; …")
    assert left is not None and left.failure is None and not left.undelivered


@pytest.mark.parametrize(
    ("status", "error"),
    [("FAILED", "States.Runtime"), ("FAILED", "EventBridge.FailedEntry"), ("ABORTED", None)],
)
def test_any_other_ending_is_no_failure_report(status: str, error: str | None) -> None:
    assert failure_left(status, error, json.dumps(REPORT.to_wire())) is None
