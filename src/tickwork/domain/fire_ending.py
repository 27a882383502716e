"""What a fire's execution left when it ended, read the way the reconciler needs it.

Every ending of statemachines/fire.asl.json leaves one of these:

- **a tick** — SUCCEEDED with the tick as its output. When the bus kept refusing it ("Tick
  undelivered"), the output also holds ``undelivered`` (the error): the fire happened, its event
  did not reach the bus;
- **a failure report** — FAILED with ``FireFailed`` and, as its cause, the proved report as JSON
  (with ``undelivered`` when the bus refused the report too). When the report could not be made
  ("Failure unproved"), the cause is a sentence and the record's last error tells the rest;
- **nothing** — ended quietly (superseded, skipped): the output is the execution's input;
- **an unknown outcome** — anything else once the fire was claimed: an error no Catch can take
  (``States.Runtime``), an abort, a timeout of the execution, or an execution that is gone. The
  fulfillment may have happened; the action's ``onUnknownOutcome`` decides what follows.

Pure: it reads the status, output, error and cause that DescribeExecution returns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tickwork.domain.errors import MalformedFire
from tickwork.domain.fire import FireFailure, Tick

__all__ = [
    "FIRE_FAILED",
    "OUTCOME_UNKNOWN",
    "UNDELIVERED",
    "LeftFailure",
    "LeftTick",
    "UnknownOutcomePolicy",
    "failure_left",
    "tick_left",
]

FIRE_FAILED = "FireFailed"  # the error of every failed ending the machine plans
UNDELIVERED = "undelivered"  # set beside a tick or report the bus kept refusing
OUTCOME_UNKNOWN = "FireOutcomeUnknown"  # recorded for a claimed fire whose ending says nothing


class UnknownOutcomePolicy(StrEnum):
    """What the reconciler does with a claimed fire whose execution ended without a tick or a
    failure report, so that its fulfillment may or may not have happened."""

    FAIL = "FAIL"  # record it failed (retryable by hand with the same key): at most once
    RETRY = "RETRY"  # run it again with the same idempotency key: at least once


@dataclass(frozen=True)
class LeftTick:
    tick: Tick
    undelivered: bool  # the bus refused it: it must still be put there


@dataclass(frozen=True)
class LeftFailure:
    failure: FireFailure | None  # None: the report could not be made (cause is a sentence)
    undelivered: bool


def tick_left(status: str, output: Any) -> LeftTick | None:
    """The tick a SUCCEEDED execution emitted (or could not), None for any other ending."""
    if status != "SUCCEEDED" or not isinstance(output, dict):
        return None
    try:
        tick = Tick.from_wire(output, "output")
    except MalformedFire:
        return None  # it ended quietly: its output is its input
    return LeftTick(tick, UNDELIVERED in output)


def failure_left(status: str, error: str | None, cause: str | None) -> LeftFailure | None:
    """The report of an execution that ended in FireFailed, None for any other ending."""
    if status != "FAILED" or error != FIRE_FAILED:
        return None
    try:
        wire = json.loads(cause or "")
        return LeftFailure(FireFailure.from_wire(wire, "cause"), UNDELIVERED in wire)
    except (ValueError, MalformedFire):
        return LeftFailure(None, undelivered=False)
