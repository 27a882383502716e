"""Sealing action records and calendars with the stack's key, and checking the seals: a
record's before a fire runs, a calendar's each time it is read."""

from __future__ import annotations

from dataclasses import replace

from tickwork.domain.action import Action
from tickwork.domain.catch_up import DEFAULT_CATCH_UP
from tickwork.domain.schedule.calendar import Calendar
from tickwork.domain.times import iso
from tickwork.fire.needs import Keys
from tickwork.integrity.calendar_seal import calendar_seal, calendar_seal_matches
from tickwork.integrity.seal import SealedFields, compute_seal, seal_matches

__all__ = ["calendar_seal_holds", "seal_holds", "seal_of", "sealed_calendar", "sealed_fields"]


def sealed_fields(action: Action) -> SealedFields:
    """Everything that decides what the action's fires do."""
    return SealedFields(
        action_id=action.id,
        action=action.action,
        data=action.data,
        metadata=action.metadata,
        schedule=action.schedule.to_dict(),
        catch_up=None if action.catch_up == DEFAULT_CATCH_UP else action.catch_up.to_dict(),
        on_failure=None if action.on_failure is None else str(action.on_failure),
        role_arn=action.role_arn,
        on_unknown_outcome=(
            None if action.on_unknown_outcome is None else str(action.on_unknown_outcome)
        ),
        occurrence_changes=[
            [iso(change.scheduled), None if change.to is None else iso(change.to)]
            for change in action.occurrence_changes
        ]
        or None,
        policy=action.policy.to_dict() or None,
    )


def seal_of(action: Action, deps: Keys) -> str | None:
    key = deps.secret(deps.settings.seal_secret_id)
    return None if key is None else compute_seal(key, sealed_fields(action))


def seal_holds(action: Action, deps: Keys) -> bool:
    """True if the record is as tickwork wrote it (always, when no seal key is configured)."""
    key = deps.secret(deps.settings.seal_secret_id)
    return key is None or seal_matches(key, action.seal, sealed_fields(action))


def sealed_calendar(calendar: Calendar, deps: Keys) -> Calendar:
    """The calendar with the stack's seal over its content, ready to store."""
    key = deps.secret(deps.settings.seal_secret_id)
    return (
        calendar if key is None else replace(calendar, seal=calendar_seal(key, calendar.to_dict()))
    )


def calendar_seal_holds(calendar: Calendar, deps: Keys) -> bool:
    """True if the stored calendar is as tickwork wrote it (always, when no seal key is
    configured). One stored before calendars were sealed carries none: it does not hold until
    it is put again (``tickwork calendar put``)."""
    key = deps.secret(deps.settings.seal_secret_id)
    return key is None or calendar_seal_matches(key, calendar.seal, calendar.to_dict())
