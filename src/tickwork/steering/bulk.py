"""Pause, resume or cancel every action of a group or id prefix, one page per call.

A page is read from the group or id index (in id order, never a table scan); each action in it
is changed on its own, fenced on its version, exactly as a single pause, resume or cancel would
be (a recurrence inside its lock defers, a one-off there is refused), and retried when a fire
or an update races it. The caller passes ``nextCursor`` back until it is null; actions created
meanwhile with ids before the cursor are not in this sweep.
"""

from __future__ import annotations

from collections.abc import Callable

from tickwork.answers import BulkAnswer, BulkItem, ChangeAnswer, Done
from tickwork.domain.errors import ActionConflict, TickworkError, ValidationFailed
from tickwork.domain.selection import Selection
from tickwork.steering.needs import Steers, Sweeps
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.stop import cancel_action

__all__ = ["OPERATIONS", "bulk_change"]

_ATTEMPTS = 3
OPERATIONS: dict[str, Callable[[str, str | None, Steers], ChangeAnswer]] = {
    "pause": pause_action,
    "resume": resume_action,
    "cancel": lambda action_id, _note, deps: cancel_action(action_id, deps),
}


def bulk_change(
    operation: str,
    selection: Selection,
    deps: Sweeps,
    note: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
) -> BulkAnswer:
    if operation not in OPERATIONS:
        raise ValidationFailed.of(
            "operation", f"{operation!r} is not a bulk change", f"use {', '.join(OPERATIONS)}"
        )
    if not selection.named:
        raise ValidationFailed.of(
            "group",
            "neither group nor prefix is given",
            "name the actions to change: a group, an id prefix, or both",
        )
    change = OPERATIONS[operation]
    actions, next_cursor = deps.queries.page(selection, limit, cursor)
    return BulkAnswer([_one(change, action.id, note, deps) for action in actions], next_cursor)


def _one(
    change: Callable[[str, str | None, Steers], ChangeAnswer],
    action_id: str,
    note: str | None,
    deps: Sweeps,
) -> BulkItem:
    for attempt in range(_ATTEMPTS):
        try:
            answer = change(action_id, note, deps)
            return BulkItem(action_id, answer.outcome, answer.status)
        except ActionConflict as raced:
            if attempt == _ATTEMPTS - 1:
                return BulkItem(action_id, Done.REFUSED, error=str(raced))
        except TickworkError as refused:
            return BulkItem(action_id, Done.REFUSED, error=str(refused))
    raise AssertionError("unreachable")
