"""Schedule Start: validate, write the record, start the execution for the first fire.

Nothing is written unless the whole request is valid. A repeated delivery of the same Start
(same event id, or the same detail while the action is still active) changes nothing beyond
making sure its execution is running.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from tickwork.answers import ChangeAnswer, Done
from tickwork.domain.action import ACTIVE, LIVE, Action, Status
from tickwork.domain.errors import ActionConflict, ActionExists
from tickwork.domain.start_request import MAX_PAYLOAD_BYTES
from tickwork.domain.steering import ChangeKind, Deferred
from tickwork.domain.times import iso
from tickwork.fire import writes
from tickwork.fire.launch import launch, stop_own_execution
from tickwork.fire.start_record import (
    announce_started,
    check_start,
    same_spec,
    scheduled_action,
    spec_hash,
)
from tickwork.steering.lock import defer, is_locked, refuse_if_locked_one_off
from tickwork.steering.needs import Steers

__all__ = ["MAX_PAYLOAD_BYTES", "StartCommand", "StartResult", "start_action"]


# Step Functions caps an execution's input and state data at 256 KiB and EventBridge an event
# at 256 KB; the tick event carries data and metadata plus ~2 KiB of envelope and result.
@dataclass(frozen=True)
class StartCommand:
    detail: dict[str, Any]
    event_id: str | None = None
    create_only: bool = False  # refuse an existing id (ActionExists) instead of replacing it
    source: str | None = None  # the sender's EventBridge source, when it came on the bus


@dataclass(frozen=True)
class StartResult:
    action_id: str
    outcome: Done  # CREATED, REPLACED, UNCHANGED or DEFERRED
    status: str
    fire_at: str | None
    execution_arn: str | None
    deferred: ChangeAnswer | None = None  # the answer of a change inside the lock

    def to_wire(self) -> dict[str, Any]:
        answer = {
            "id": self.action_id,
            "outcome": str(self.outcome),
            "status": self.status,
            "executionTime": self.fire_at,
            "executionArn": self.execution_arn,
        }
        if self.deferred is not None:
            deferred = self.deferred.to_wire()
            answer["appliesAfter"] = deferred["appliesAfter"]
            answer["message"] = deferred["message"]
        return answer


_WRITE_ATTEMPTS = 3


def start_action(command: StartCommand, deps: Steers) -> StartResult:
    """Decide against the record as read; if a concurrent write wins, read again and
    decide again (a concurrent duplicate delivery then reads as a repeat)."""
    for _ in range(_WRITE_ATTEMPTS - 1):
        try:
            return _start_once(command, deps)
        except ActionConflict:
            continue
    return _start_once(command, deps)


def _start_once(command: StartCommand, deps: Steers) -> StartResult:
    now = deps.clock.now()
    checked = check_start(command.detail, command.event_id, now, deps, admit=False)
    digest = spec_hash(command.detail)
    existing = deps.records.get(checked.action_id)
    if existing is not None and command.create_only:
        raise ActionExists(checked.action_id)

    if existing is not None and _is_repeat_delivery(existing, digest, command.event_id):
        known = _known(existing, command.event_id, now, deps)
        if known.status == Status.PENDING:
            launch(known, now, deps)
        return _result(known, Done.UNCHANGED)

    # A Start delivered again was admitted when it was first taken: only a new or changed one
    # is checked against what it reads of the stack (a template changed since is the fire's).
    deps.registry.admit(checked.request.action, checked.data)
    if existing is not None and is_locked(existing, now, deps):
        refuse_if_locked_one_off(existing, now, deps)
        change = Deferred(ChangeKind.UPDATE, now, command.detail, digest, command.event_id)
        deferred = defer(existing, change, now, deps)
        return replace(_result(existing, Done.DEFERRED), deferred=deferred)

    action = scheduled_action(checked, existing, now, digest, command.event_id, deps)
    if existing is None:
        writes.create(deps.records, action)
    else:
        writes.replace_schedule(deps.records, existing, action)
        if existing.status in ACTIVE:
            stop_own_execution(existing, f"replaced by generation {action.generation}", deps)
    if action.status == Status.PENDING:
        launch(action, now, deps)
    announce_started(action, deps)
    return _result(action, Done.REPLACED if existing else Done.CREATED)


def _is_repeat_delivery(existing: Action, digest: str, event_id: str | None) -> bool:
    """The same Start again: by its event id (the latest, a waiting one, or one a later Start
    replaced, delivered late), or the same detail while nothing else waits."""
    if event_id is not None and existing.knows_start(event_id):
        return True
    waiting = existing.deferred
    if waiting is not None:
        return waiting.kind is ChangeKind.UPDATE and same_spec(waiting.spec_hash, digest)
    return same_spec(existing.spec_hash, digest) and existing.status in LIVE


def _known(existing: Action, event_id: str | None, now: datetime, deps: Steers) -> Action:
    """A repeat under an event id the record does not know yet (a publisher's retry of the
    same request) is remembered, so that it changes nothing however late it comes again."""
    if event_id is None:
        return existing
    written = writes.know_start(deps.records, existing, event_id, now)
    return written.after if written is not None else existing


def _result(action: Action, outcome: Done) -> StartResult:
    return StartResult(
        action_id=action.id,
        outcome=outcome,
        status=str(action.status),
        fire_at=iso(action.execution_time) if action.execution_time else None,
        execution_arn=action.execution_arn,
    )
