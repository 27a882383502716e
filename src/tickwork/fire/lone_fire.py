"""The fire machine's Fulfill task: one fire in its own execution, run, recorded and announced
in one step, as a batch's task does for each of its members. docs/protocol.md, "A lone fire".

- the order is proved (``orders.check_lone``), then the fire runs as ``fire.fulfill`` says
  (the record at the order's fire, named for this execution, claimed by it, never early);
- a fire that ran is **recorded before its tick is put on the bus** (``record_tick``, the tick
  marked ``recorded``): the execution's happy path is its Wait and this one task — 2 billed
  state transitions, not 3 — and the tick function, which records the ticks of executions
  started before, has nothing to do;
- a tick the bus refuses is handed to the machine **in the error** (``TickUndelivered``, whose
  message is the proved tick): the machine reads it back and puts it with retries of its own
  ("Emit tick"), so the fire is never run again and the tick is never rebuilt. A tick too
  large for an error (``TickPending``), or a task retried after a crash between the record and
  the put, is rebuilt from the record by the retry (``fire.recorded_ending``);
- a record that cannot be written — or whose write landed but what follows it (the next
  fire's start, ``Schedule Completed``) failed — leaves the tick **unmarked**: the tick function
  records it, or, finding it recorded, finishes what followed, as it does for the tick of an
  execution started before. Never a retry that would call the target again.

A fire that fails is not recorded here: the machine's Catch makes its proved report ("Prove
failure", refused for a fire this execution recorded as fired: ``failure_of``) and puts it on
the bus, and the tick function records it, as before.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace

from tickwork.answers import Done
from tickwork.dependencies import Dependencies
from tickwork.domain.errors import (
    ActionSuperseded,
    TickPending,
    TickUndelivered,
    TransientFulfillmentError,
)
from tickwork.domain.fire import CaughtFailure, FireAttempt, FireFailure, Tick
from tickwork.fire.calendar_reads import calendars_read_once
from tickwork.fire.fulfill import fulfill_claimed
from tickwork.fire.needs import Fires
from tickwork.fire.orders import check_lone
from tickwork.fire.overlap import hand_on
from tickwork.fire.proofs import prove_failure, with_proof
from tickwork.fire.record import record_tick
from tickwork.fire.recorded_ending import ending_recorded_by

__all__ = ["CARRIED_MOST", "LoneFire", "failure_of", "fire_lone"]

log = logging.getLogger("tickwork")

# The characters of a tick's JSON an error carries to the machine: Step Functions keeps 32,768
# of an error's cause, which holds the message escaped (a quote takes two) and a stack trace.
CARRIED_MOST = 12_000


@dataclass(frozen=True)
class LoneFire:
    tick: Tick  # the execution's output
    recorded: bool  # recorded by this attempt (not a retry putting a recorded tick again)


def fire_lone(fire: FireAttempt, deps: Dependencies) -> LoneFire:
    """Run the fire, record it, then put its proved tick on the bus. (The whole bundle: its
    calendars are read once for the fire.)"""
    check_lone(fire.order, fire.execution_arn, deps)
    deps = calendars_read_once(deps)
    try:
        tick, claimed = fulfill_claimed(fire, deps)
    except TransientFulfillmentError:
        try:
            hand_on(fire, deps)  # overlapPolicy ALLOW_ALL: the next occurrence runs at its time
        except Exception:  # the retry goes on all the same (the reconciler starts a next fire)
            log.warning("hand-on failed", exc_info=True, extra={"id": fire.order.action_id})
        raise
    except ActionSuperseded:
        again = ending_recorded_by(fire.order, fire.execution_arn, deps)
        if not isinstance(again, Tick):
            raise
        _finish(again, deps)
        _put(again, deps)
        return LoneFire(again, recorded=False)
    tick = with_proof(replace(tick, recorded=True), deps)
    try:
        recorded = record_tick(tick, deps, current=claimed).outcome is Done.RECORDED
    except Exception:
        # Not written, or written and what follows failed: the tick function records it, or
        # finds it recorded and finishes the rest (a repeat), as for an older execution's tick.
        tick, recorded = with_proof(replace(tick, recorded=False), deps), False
    _put(tick, deps)
    return LoneFire(tick, recorded)


def failure_of(report: CaughtFailure, execution_arn: str, deps: Fires) -> FireFailure:
    """The fire machine's "Prove failure": the proved report of a fire that failed past its
    retries — refused (``ActionSuperseded``: the machine ends in "Failure unproved") when this
    execution recorded the fire as having run, so that no report contradicts the record."""
    failure = prove_failure(report, execution_arn, deps, deps.clock.now())
    order = report.order
    if isinstance(ending_recorded_by(order, execution_arn, deps), Tick):
        raise ActionSuperseded(order.action_id, "this execution recorded the fire as run")
    return failure


def _finish(tick: Tick, deps: Fires) -> None:
    """A fire this execution recorded: what a crash after the record's write may have left
    undone — the next fire's start, the Schedule Completed — is done by recording it again (a
    repeat changes no record)."""
    try:
        record_tick(tick, deps)
    except Exception as failed:
        raise TickPending(tick.action_id, tick.occurrence, _why(failed)) from failed


def _put(tick: Tick, deps: Fires) -> None:
    try:
        deps.publisher.publish(tick)
    except Exception as refused:
        carried = json.dumps(tick.to_wire(), separators=(",", ":"), default=str)
        if len(carried) <= CARRIED_MOST:
            raise TickUndelivered(carried) from refused
        raise TickPending(tick.action_id, tick.occurrence, _why(refused)) from refused


def _why(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"[:300]
