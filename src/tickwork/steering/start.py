"""Schedule Start: validate, write the record, start the execution for the first fire.

Nothing is written unless the whole request is valid. A repeated delivery of the same Start
(same event id, or the same detail while the action is still active) changes nothing beyond
making sure its execution is running.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tickwork.answers import ChangeAnswer, Done
from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE, LIVE, Action, Status
from tickwork.domain.announcements import Started
from tickwork.domain.errors import ActionConflict, ActionExists, ValidationFailed
from tickwork.domain.identifiers import check_action_id
from tickwork.domain.start_request import (
    MAX_PAYLOAD_BYTES,
    StartRequest,
    check_payload_size,
    parse_start_detail,
)
from tickwork.domain.steering import ChangeKind, Deferred
from tickwork.domain.times import iso
from tickwork.fire.launch import launch, plan, stop_own_execution
from tickwork.fire.sealing import seal_of
from tickwork.fire.writes import Rule, update
from tickwork.fulfillment.access import check_access
from tickwork.steering.calendars import with_calendar
from tickwork.steering.lock import defer, is_locked, refuse_if_locked_one_off

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "MAX_PAYLOAD_BYTES",
    "CheckedStart",
    "StartCommand",
    "StartResult",
    "announce_started",
    "check_start",
    "scheduled_action",
    "spec_hash",
    "start_action",
]


# Step Functions caps an execution's input and state data at 256 KiB and EventBridge an event
# at 256 KB; the tick event carries data and metadata plus ~2 KiB of envelope and result.
@dataclass(frozen=True)
class StartCommand:
    detail: dict[str, Any]
    event_id: str | None = None
    create_only: bool = False  # refuse an existing id (ActionExists) instead of replacing it


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


def start_action(command: StartCommand, deps: Dependencies) -> StartResult:
    """Decide against the record as read; if a concurrent write wins, read again and
    decide again (a concurrent duplicate delivery then reads as a repeat)."""
    for _ in range(_WRITE_ATTEMPTS - 1):
        try:
            return _start_once(command, deps)
        except ActionConflict:
            continue
    return _start_once(command, deps)


@dataclass(frozen=True)
class CheckedStart:
    request: StartRequest
    action_id: str
    first_fire: datetime
    data: BaseModel  # the data as its action type's model parsed it


def check_start(
    command: StartCommand, now: datetime, deps: Dependencies, *, admit: bool = True
) -> CheckedStart:
    """Everything a Start must pass before anything is written (also run by the CLI). With
    ``admit``, the checks that read the stack too (a notification's template: ``admit``)."""
    request = parse_start_detail(command.detail, now, deps.settings.past_grace)
    request = replace(request, schedule=with_calendar(request.schedule, deps))
    action_id = _action_id(request, command.event_id)
    check_payload_size(request)
    data = deps.registry.validate(request.action, request.data)
    check_access(data, request.role_arn, deps.settings)
    if admit:
        deps.registry.admit(request.action, data)
    first = request.schedule.first_fire(now, action_id)
    if first is None and request.schedule.calendar is not None:
        raise ValidationFailed.of(
            "calendar",
            f"{request.schedule.calendar.name!r} excludes every fire of the schedule ahead",
            "give a calendar that allows some of its fires, or change the schedule",
        )
    if first is None:
        raise ValidationFailed.of(
            "endTime", "the schedule has no fire before its end", "move endTime later or drop it"
        )
    return CheckedStart(request, action_id, first[1], data)


def _start_once(command: StartCommand, deps: Dependencies) -> StartResult:
    now = deps.clock.now()
    checked = check_start(command, now, deps, admit=False)
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
        deps.records.create(action)
    else:
        deps.records.save(action, expected_version=existing.version)
        if existing.status in ACTIVE:
            stop_own_execution(existing, f"replaced by generation {action.generation}", deps)
    if action.status == Status.PENDING:
        launch(action, now, deps)
    announce_started(action, deps)
    return _result(action, Done.REPLACED if existing else Done.CREATED)


def scheduled_action(
    checked: CheckedStart,
    existing: Action | None,
    now: datetime,
    digest: str,
    event_id: str | None,
    deps: Dependencies,
) -> Action:
    """The record a checked Start makes: new, or the next generation of ``existing``; named
    for its first execution and sealed, ready to write."""
    action = Action.scheduled(
        checked.action_id,
        checked.request,
        checked.first_fire,
        now,
        digest,
        event_id,
        deps.limits,
        replacing=existing,
    )
    action = plan(action, now, deps)
    return action.sealed(seal_of(action, deps))


def announce_started(action: Action, deps: Dependencies) -> None:
    deps.publisher.publish(Started(action))


def _action_id(request: StartRequest, event_id: str | None) -> str:
    action_id = request.action_id or (f"evt-{event_id}" if event_id else None)
    if action_id is None:
        raise ValidationFailed.of(
            "id", "is missing", 'give the action an "id" (e.g. "invoice:42:downgrade")'
        )
    return check_action_id(action_id)


_SPEC_HEX = 32  # 128 bits tell two requests apart; the record pays for every byte it holds


def spec_hash(detail: dict[str, Any]) -> str:
    canonical = json.dumps(detail, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:_SPEC_HEX]


def _same_spec(stored: str | None, digest: str) -> bool:
    """A stored hash names the same request; one written before the cut is whole (64 digits)."""
    return bool(stored) and str(stored)[:_SPEC_HEX] == digest


def _is_repeat_delivery(existing: Action, digest: str, event_id: str | None) -> bool:
    """The same Start again: by its event id (the latest, a waiting one, or one a later Start
    replaced, delivered late), or the same detail while nothing else waits."""
    if event_id is not None and existing.knows_start(event_id):
        return True
    waiting = existing.deferred
    if waiting is not None:
        return waiting.kind is ChangeKind.UPDATE and _same_spec(waiting.spec_hash, digest)
    return _same_spec(existing.spec_hash, digest) and existing.status in LIVE


def _known(existing: Action, event_id: str | None, now: datetime, deps: Dependencies) -> Action:
    """A repeat under an event id the record does not know yet (a publisher's retry of the
    same request) is remembered, so that it changes nothing however late it comes again."""
    if event_id is None:
        return existing
    written = update(
        deps.records,
        existing.id,
        Rule.KNOW_START,
        lambda current: current.knowing_start(now, event_id),
        first=existing,
    )
    return written.after if written is not None else existing


def _result(action: Action, outcome: Done) -> StartResult:
    return StartResult(
        action_id=action.id,
        outcome=outcome,
        status=str(action.status),
        fire_at=iso(action.execution_time) if action.execution_time else None,
        execution_arn=action.execution_arn,
    )
