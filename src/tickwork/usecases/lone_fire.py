"""The fire machine's Fulfill task: one fire in its own execution, run, recorded and announced
in one step, as a batch's task does for each of its members. docs/protocol.md, "A lone fire".

- the order is proved (``orders.check_lone``), then the fire runs as ``usecases.fulfill`` says
  (the record at the order's fire, named for this execution, claimed by it, never early);
- a fire that ran is **recorded before its tick is put on the bus** (``record_tick``, the tick
  marked ``recorded``): the execution's happy path is its Wait and this one task — 2 billed
  state transitions, not 3 — and the tick function, which records the ticks of executions
  started before, has nothing to do;
- a task retried after it recorded the fire (a crash, or the bus refusing the tick:
  ``TickUndelivered``, retried by the machine for as long as an outage of the bus lasts) finds
  the occurrence this execution recorded and puts the same tick again: the fire never runs
  twice, and its tick is late rather than lost.

A fire whose record cannot be written is left to the tick function, as before: its tick goes
on the bus unmarked and is recorded there (never a retry that would run the fire again). A fire
that fails is not recorded here either: the machine's Catch makes its proved report ("Prove
failure") and puts it on the bus, and the tick function records it, as before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.errors import ActionSuperseded, TickUndelivered
from tickwork.domain.fire import FireAttempt, Tick
from tickwork.domain.fire_ending import UNDELIVERED
from tickwork.usecases.answers import Done
from tickwork.usecases.fire_proofs import with_proof
from tickwork.usecases.fulfill import fulfill_claimed
from tickwork.usecases.orders import check_lone
from tickwork.usecases.record import record_tick
from tickwork.usecases.recorded_ending import ending_recorded_by

__all__ = ["LoneFire", "fire_lone"]


@dataclass(frozen=True)
class LoneFire:
    tick: Tick  # the execution's output
    recorded: bool  # recorded by this attempt (not a retry putting a recorded tick again)
    # Why the bus refused a tick left to the tick function to record (the record's write
    # failed): the execution's output carries it, and the reconciler puts the tick there.
    undelivered: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire = self.tick.to_wire()
        if self.undelivered is not None:
            wire[UNDELIVERED] = {"Error": "TickUndelivered", "Cause": self.undelivered}
        return wire


def fire_lone(fire: FireAttempt, deps: Dependencies) -> LoneFire:
    """Run the fire, record it, then put its proved tick on the bus."""
    check_lone(fire.order, fire.execution_arn, deps)
    try:
        tick, claimed = fulfill_claimed(fire, deps)
    except ActionSuperseded:
        again = ending_recorded_by(fire.order, fire.execution_arn, deps)
        if not isinstance(again, Tick):
            raise
        _again(again, deps)
        return LoneFire(again, recorded=False)
    tick = with_proof(replace(tick, recorded=True), deps)
    try:
        answer = record_tick(tick, deps, current=claimed)
    except Exception as failed:
        return _left_to_record(fire, tick, failed, deps)
    _put(tick, deps)
    return LoneFire(tick, recorded=answer.outcome is Done.RECORDED)


def _again(tick: Tick, deps: Dependencies) -> None:
    """A fire this execution recorded: what a crash after the record's write may have left
    undone — the next fire's start, the Schedule Completed — is done by recording it again (a
    repeat changes no record), then its tick is put on the bus again."""
    try:
        record_tick(tick, deps)
    except Exception as failed:
        raise TickUndelivered(tick.action_id, tick.occurrence, _why(failed)) from failed
    _put(tick, deps)


def _left_to_record(
    fire: FireAttempt, tick: Tick, failed: Exception, deps: Dependencies
) -> LoneFire:
    """Recording the fire failed. Written after all (what follows the write failed): the task
    is retried, and the retry finishes it and puts the tick. Not written, or not known: the
    tick goes on the bus unmarked and the tick function records it, as it records the tick of
    an execution started before — never a retry that would run the fire again. A tick the bus
    refuses then is the execution's output, with why: the reconciler puts it there."""
    try:
        written = ending_recorded_by(fire.order, fire.execution_arn, deps) is not None
    except Exception:
        written = False  # unknown: the tick function records it, or finds it recorded
    if written:
        raise TickUndelivered(tick.action_id, tick.occurrence, _why(failed)) from failed
    plain = with_proof(replace(tick, recorded=False), deps)
    try:
        deps.publisher.publish(plain)
    except Exception as refused:
        return LoneFire(plain, recorded=False, undelivered=_why(refused))
    return LoneFire(plain, recorded=False)


def _put(tick: Tick, deps: Dependencies) -> None:
    try:
        deps.publisher.publish(tick)
    except Exception as refused:
        raise TickUndelivered(tick.action_id, tick.occurrence, _why(refused)) from refused


def _why(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"[:300]
