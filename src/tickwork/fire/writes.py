"""The one way a use case changes an action record: read it, apply a pure change, write the
result fenced on the version read; on a lost race read again and apply the change again.

Each call names the protocol rule it enforces (``Rule``, one per row of docs/protocol.md's
"Who writes what"), so a conflict that outlasts its attempts says which rule could not be
applied, and a reader finds every writer of a rule by its name. A write under a record rule
counts the fire it records in the fire totals, with the record (``ActionRecords.save``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from tickwork.domain.action import Action, Occurrence
from tickwork.domain.errors import ActionConflict
from tickwork.ports import ActionRecords

__all__ = ["ATTEMPTS", "Rule", "Written", "decided_again", "update"]

ATTEMPTS = 3  # reads and writes of one update before it gives up (ActionConflict)


class Rule(StrEnum):
    """The writes of the fire protocol (docs/protocol.md, "Who writes what")."""

    CLAIM = "claim"  # PENDING → IN_PROGRESS by an execution with a proved order
    CLAIM_MANUAL = "claim a manual fire"
    HAND_OVER = "hand over"  # a batch's claim to the fire's own lone execution
    RELEASE = "release"  # a claim given up: its execution ended unrecorded (RETRY) or refused
    RECORD = "record"  # a tick or failure report, once per fire key
    RECORD_MANUAL = "record a manual fire"
    NOTE_FAILURE = "note an attempt's error"
    PARK_AGAIN = "park again"  # an execution could not be started: the pump retries it
    MARK_LAUNCHED = "mark launched"  # the pump started the parked fire's execution
    NAME_EXECUTION = "name the execution"  # a leg, a repair, a member a follow-on left out
    KNOW_START = "know a Start"  # a repeated Start's event id, so that it never applies late
    NOTE_MISSED = "note a missed fire"  # the watchdog: the fire the record is at is overdue
    BACKFILL = "backfill"  # past occurrences asked as manual fires, added to the spans run


_RECORDING = frozenset({Rule.RECORD, Rule.RECORD_MANUAL})


def _recorded(rule: Rule, after: Action) -> Occurrence | None:
    """The fire a write under a record rule records (its history's newest entry), which the
    write counts in the fire totals with the record."""
    return after.history[-1] if rule in _RECORDING and after.history else None


@dataclass(frozen=True)
class Written:
    before: Action  # the version the write was fenced on
    after: Action  # the version written


def update(
    records: ActionRecords,
    action_id: str,
    rule: Rule,
    change: Callable[[Action], Action | None],
    first: Action | None = None,
    attempts: int = ATTEMPTS,
) -> Written | None:
    """Apply ``change`` to the record and write it, fenced on the version it was applied to.

    ``change`` is pure: given the record as read it returns the next version; the record itself
    when the rule is already applied (nothing to write: ``Written(action, action)``); or None
    when the rule does not apply to it (the record moved on): nothing is written and None is
    returned, as for a record that does not exist. ``change`` may raise to refuse. ``first``:
    the record as the caller just read it (saves a read; a stale one costs a retry). After
    ``attempts`` lost races: ``ActionConflict``."""
    current = first
    for _ in range(attempts):
        action = current or records.get(action_id)
        current = None
        if action is None:
            return None
        after = change(action)
        if after is None:
            return None
        if after is action:
            return Written(action, action)
        try:
            records.save(after, expected_version=action.version, recorded=_recorded(rule, after))
        except ActionConflict:
            continue
        return Written(action, after)
    raise ActionConflict(action_id, f"{rule}: the record kept changing ({attempts} attempts)")


def decided_again[Answer](steer: Callable[[], Answer], attempts: int = ATTEMPTS) -> Answer:
    """A user's change (pause, resume) whose first write is fenced on the record it read, and
    which does nothing before that write: on a lost race — a fire recorded meanwhile, as after
    a Run Now — it reads the record again and decides again, as ``update`` does. After
    ``attempts`` lost races the last ``ActionConflict`` is raised."""
    for _ in range(attempts - 1):
        try:
            return steer()
        except ActionConflict:
            continue
    return steer()
