"""What a Start becomes: checked whole, then made into the record it writes — a new action, or
the next generation of the one it replaces — named for its first execution and sealed.

Run by a Start (``steering.start``), and by a change that waited inside the lock for the
imminent fire (``fire.deferred``), at the write that records that fire.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tickwork.domain.action import Action
from tickwork.domain.announcements import Started
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.identifiers import check_action_id
from tickwork.domain.start_request import StartRequest, check_payload_size, parse_start_detail
from tickwork.fire.calendar_reads import with_calendar
from tickwork.fire.needs import Admits
from tickwork.fire.planning import plan
from tickwork.fire.sealing import seal_of
from tickwork.fulfillment.access import check_access, check_dead_letter

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "CheckedStart",
    "announce_started",
    "check_start",
    "same_spec",
    "scheduled_action",
    "spec_hash",
]


@dataclass(frozen=True)
class CheckedStart:
    request: StartRequest
    action_id: str
    first_fire: datetime
    data: BaseModel  # the data as its action type's model parsed it


def check_start(
    detail: dict[str, Any],
    event_id: str | None,
    now: datetime,
    deps: Admits,
    *,
    admit: bool = True,
) -> CheckedStart:
    """Everything the Start ``detail`` (the bus event ``event_id``'s) must pass before anything
    is written (also run by the CLI, and by a deferred update at its fire). With ``admit``, the
    checks that read the stack too (a notification's template: ``admit``)."""
    request = parse_start_detail(detail, now, deps.settings.past_grace)
    request = replace(request, schedule=with_calendar(request.schedule, deps))
    action_id = _action_id(request, event_id)
    check_payload_size(request)
    data = deps.registry.validate(request.action, request.data)
    check_access(data, request.role_arn, deps.settings)
    check_dead_letter(request.policy.dead_letter_arn, deps.settings)
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


def scheduled_action(
    checked: CheckedStart,
    existing: Action | None,
    now: datetime,
    digest: str,
    event_id: str | None,
    deps: Admits,
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
    action = plan(action, now, deps, gather=True)
    return action.sealed(seal_of(action, deps))


def announce_started(action: Action, deps: Admits) -> None:
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


def same_spec(stored: str | None, digest: str) -> bool:
    """A stored hash names the same request; one written before the cut is whole (64 digits)."""
    return bool(stored) and str(stored)[:_SPEC_HEX] == digest
