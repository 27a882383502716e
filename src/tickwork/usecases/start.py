"""Schedule Start: validate, write the record, start the execution for the first fire.

Nothing is written unless the whole request is valid. A repeated delivery of the same Start
(same event id, or the same detail while the action is still active) changes nothing beyond
making sure its execution is running.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE, Action, Status
from tickwork.domain.errors import ActionConflict, ActionExists, ActionLocked, ValidationFailed
from tickwork.domain.events import DetailType
from tickwork.domain.start_request import StartRequest, parse_start_detail
from tickwork.domain.times import iso
from tickwork.usecases.launch import launch, planned_execution
from tickwork.usecases.sealing import seal_of

__all__ = [
    "ID_PATTERN",
    "MAX_ID_LENGTH",
    "MAX_PAYLOAD_BYTES",
    "CheckedStart",
    "StartCommand",
    "StartResult",
    "check_start",
    "spec_hash",
    "start_action",
]

MAX_ID_LENGTH = 200
# Step Functions caps an execution's input and state data at 256 KiB and EventBridge an event
# at 256 KB; the tick event carries data and metadata plus ~2 KiB of envelope and result.
MAX_PAYLOAD_BYTES = 192 * 1024
# No "/": API Gateway decodes %2F before routing, so such an id could not be addressed at
# /actions/{id}.
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:_\-.@+=]*$")


@dataclass(frozen=True)
class StartCommand:
    detail: dict[str, Any]
    event_id: str | None = None
    create_only: bool = False  # refuse an existing id (ActionExists) instead of replacing it


@dataclass(frozen=True)
class StartResult:
    action_id: str
    outcome: str  # created | replaced | unchanged
    status: str
    fire_at: str | None
    execution_arn: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.action_id,
            "outcome": self.outcome,
            "status": self.status,
            "executionTime": self.fire_at,
            "executionArn": self.execution_arn,
        }


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


def check_start(command: StartCommand, now: datetime, deps: Dependencies) -> CheckedStart:
    """Everything a Start must pass before anything is written (also run by the CLI)."""
    request = parse_start_detail(command.detail, now, deps.settings.past_grace)
    action_id = _action_id(request, command.event_id)
    _check_payload_size(request)
    deps.registry.validate(request.action, request.data)
    first = request.schedule.first_fire_time(now)
    if first is None:
        raise ValidationFailed.of(
            "endTime", "the schedule has no fire before its end", "move endTime later or drop it"
        )
    return CheckedStart(request, action_id, first)


def _start_once(command: StartCommand, deps: Dependencies) -> StartResult:
    now = deps.clock.now()
    checked = check_start(command, now, deps)
    request, action_id, first = checked.request, checked.action_id, checked.first_fire
    digest = spec_hash(command.detail)
    existing = deps.repository.get(action_id)
    if existing is not None and command.create_only:
        raise ActionExists(action_id)

    if existing is not None and _is_repeat_delivery(existing, digest, command.event_id):
        if existing.status == Status.PENDING:
            launch(existing, now, deps)
        return _result(existing, "unchanged")

    if (
        existing is not None
        and existing.status in ACTIVE
        and existing.is_locked(now, deps.settings.lock)
    ):
        raise ActionLocked(
            action_id, iso(existing.execution_time or now), int(deps.settings.lock.total_seconds())
        )

    action = Action.scheduled(
        action_id,
        request,
        first,
        now,
        digest,
        command.event_id,
        deps.limits,
        replacing=existing,
    )
    action = action.planned(planned_execution(action, deps)[1])
    action = action.sealed(seal_of(action, deps))
    if existing is None:
        deps.repository.create(action)
    else:
        deps.repository.save(action, expected_version=existing.version)
        if existing.status in ACTIVE and existing.execution_arn:
            deps.executions.stop(
                existing.execution_arn, f"replaced by generation {action.generation}"
            )
    launch(action, now, deps)
    deps.publisher.publish(
        DetailType.STARTED,
        {
            "id": action.id,
            "generation": action.generation,
            "executionTime": iso(first),
            "schedule": action.schedule.describe(),
            "action": action.action,
        },
    )
    return _result(action, "replaced" if existing else "created")


def _action_id(request: StartRequest, event_id: str | None) -> str:
    action_id = request.action_id or (f"evt-{event_id}" if event_id else None)
    if action_id is None:
        raise ValidationFailed.of(
            "id", "is missing", 'give the action an "id" (e.g. "invoice:42:downgrade")'
        )
    if len(action_id) > MAX_ID_LENGTH or not ID_PATTERN.match(action_id):
        raise ValidationFailed.of(
            "id",
            f"{action_id[:40]!r} is not a valid id",
            f"use 1-{MAX_ID_LENGTH} characters: letters, digits and : _ - . @ + =, "
            "starting with a letter or digit",
        )
    return action_id


def _check_payload_size(request: StartRequest) -> None:
    size = len(
        json.dumps({"data": request.data, "metadata": request.metadata}, default=str).encode()
    )
    if size > MAX_PAYLOAD_BYTES:
        raise ValidationFailed.of(
            "data",
            f"data and metadata take {size} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit",
            "store large payloads elsewhere (e.g. S3) and schedule a reference to them",
        )


def spec_hash(detail: dict[str, Any]) -> str:
    canonical = json.dumps(detail, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _is_repeat_delivery(existing: Action, digest: str, event_id: str | None) -> bool:
    if event_id is not None and existing.start_event_id == event_id:
        return True
    return existing.spec_hash == digest and existing.status in ACTIVE


def _result(action: Action, outcome: str) -> StartResult:
    return StartResult(
        action_id=action.id,
        outcome=outcome,
        status=str(action.status),
        fire_at=iso(action.execution_time) if action.execution_time else None,
        execution_arn=action.execution_arn,
    )
