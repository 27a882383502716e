"""Skip or move one occurrence of a recurrence, or undo that, without touching its schedule.

An occurrence is named by its number (``tickwork next ID`` and the history count them) or by
its time as the schedule has it. Inside the lock the imminent occurrence is fixed: a skip or
move of it is refused (``OccurrenceLocked``), as a change to a one-off is. A skip is kept on
the record and taken when its occurrence comes due: its execution records it SKIPPED and the
recurrence goes on. A move lands strictly between the occurrence's neighbours; a move of the
fire the record is at supersedes its waiting execution and starts the moved one, as a resume
does. Each write is fenced on the version read, and read and decided again if a fire was
recorded meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tickwork.answers import ChangeAnswer, Done
from tickwork.domain.action import FINISHED, Action, Status
from tickwork.domain.errors import (
    ActionFinished,
    ActionNotFound,
    NotRecurring,
    OccurrenceLocked,
    ValidationFailed,
)
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.occurrence_changes import (
    MAX_CHANGES,
    MAX_LOOKAHEAD,
    OccurrenceChange,
    occurrence_at,
)
from tickwork.domain.start_request import MAX_HORIZON
from tickwork.domain.steering import check_note
from tickwork.domain.times import ceil_ms, iso, iso_exact
from tickwork.fire.own_occurrence import write_occurrence_change
from tickwork.fire.writes import decided_again
from tickwork.steering.lock import is_locked, lock_of
from tickwork.steering.needs import Steers

__all__ = [
    "Which",
    "move_occurrence",
    "restore_occurrence",
    "skip_occurrence",
]


@dataclass(frozen=True)
class Which:
    """An occurrence, by its number or by its scheduled time (exactly one)."""

    number: int | None = None
    at: datetime | None = None

    def __post_init__(self) -> None:
        if (self.number is None) == (self.at is None):
            raise ValidationFailed.of(
                "occurrence",
                "give exactly one of the occurrence's number and its time",
                'give "occurrence": 3 or "at": "2030-01-06T09:00:00Z"',
            )


def skip_occurrence(
    action_id: str,
    which: Which,
    note: str | None,
    deps: Steers,
    event_id: str | None = None,
) -> ChangeAnswer:
    """Skip the occurrence: it comes due and is recorded SKIPPED, and nothing runs.
    ``event_id``: the steering event asking (one delivered again changes nothing)."""
    action_id = check_steered_id(action_id)
    note = check_note(note)
    return decided_again(lambda: _change(action_id, which, None, note, deps, event_id))


def move_occurrence(
    action_id: str,
    which: Which,
    to: datetime,
    note: str | None,
    deps: Steers,
    event_id: str | None = None,
) -> ChangeAnswer:
    """Fire the occurrence at ``to`` instead: strictly between its neighbours, in the future."""
    action_id = check_steered_id(action_id)
    note = check_note(note)
    if to.utcoffset() is None:
        raise ValidationFailed.of("to", "has no UTC offset", 'give one, e.g. "...T09:30:00Z"')
    _within_reach(to, deps.clock.now(), "to")
    return decided_again(lambda: _change(action_id, which, ceil_ms(to), note, deps, event_id))


def _within_reach(moment: datetime, now: datetime, field: str) -> None:
    """No time further than a Start may schedule (ten years): beyond, refused naming it."""
    if moment - now > MAX_HORIZON:
        raise ValidationFailed.of(
            field,
            f"{iso_exact(moment)} is more than 10 years ahead",
            f"give a time before {iso_exact(now + MAX_HORIZON)}",
        )


def restore_occurrence(
    action_id: str,
    which: Which,
    note: str | None,
    deps: Steers,
    event_id: str | None = None,
) -> ChangeAnswer:
    """Undo the skip or move of the occurrence: it fires as its schedule says."""
    action_id = check_steered_id(action_id)
    note = check_note(note)
    return decided_again(lambda: _restore(action_id, which, note, deps, event_id))


@dataclass(frozen=True)
class _Found:
    number: int
    scheduled: datetime
    before: datetime | None  # the scheduled time of the occurrence before it, if known
    after: datetime | None  # the scheduled time of the occurrence after it, if any


def _change(
    action_id: str,
    which: Which,
    to: datetime | None,
    note: str | None,
    deps: Steers,
    event_id: str | None,
) -> ChangeAnswer:
    action = _recurring(action_id, "skip or move" if to is None else "move", deps)
    if event_id and action.knows_start(event_id):  # delivered again: applied once already
        return ChangeAnswer(action.id, Done.UNCHANGED, str(action.status), action.execution_time)
    now = deps.clock.now()
    found = _find(action, which)
    _refuse_if_locked(action, found, now, deps)
    named = "to" if to is not None else _named(which)
    # a skip comes due at the occurrence's own fire time (a flexible window or a calendar's
    # shift may carry it past its scheduled time); a move fires at the time asked
    fire_at = action.unmoved_fire_time(found.scheduled) if to is None else to
    _check_between(action, found, fire_at, now, named)
    earlier = action.change_of(found.scheduled)
    if earlier is not None and earlier.to == to:
        return _answer(action, found, Done.UNCHANGED)
    if earlier is None and len(action.coming_changes) >= MAX_CHANGES:
        raise ValidationFailed.of(
            _named(which),
            f"the action has {MAX_CHANGES} coming occurrences skipped or moved already",
            "restore one of them first (GET /actions/{id}/occurrences lists them)",
        )
    change = OccurrenceChange(found.scheduled, now, to, note)
    what = "skipped" if to is None else f"moved to {iso(to)}"
    reason = f"occurrence {found.number} ({iso(found.scheduled)}) {what}"
    changed = action.occurrence_changed(now, change, _noted(reason, note), deps.limits)
    write_occurrence_change(action, changed.remembering(event_id), reason, now, deps)
    return _answer(changed, found, Done.SKIPPED if to is None else Done.MOVED)


def _restore(
    action_id: str, which: Which, note: str | None, deps: Steers, event_id: str | None
) -> ChangeAnswer:
    action = _recurring(action_id, "restore", deps)
    if event_id and action.knows_start(event_id):  # delivered again: applied once already
        return ChangeAnswer(action.id, Done.UNCHANGED, str(action.status), action.execution_time)
    now = deps.clock.now()
    found = _find(action, which)
    if action.change_of(found.scheduled) is None:
        return _answer(action, found, Done.UNCHANGED)
    _refuse_if_locked(action, found, now, deps)
    unmoved = action.unmoved_fire_time(found.scheduled)
    _check_between(action, found, unmoved, now, _named(which))
    reason = f"occurrence {found.number} ({iso(found.scheduled)}) restored"
    changed = action.occurrence_restored(now, found.scheduled, _noted(reason, note), deps.limits)
    write_occurrence_change(action, changed.remembering(event_id), reason, now, deps)
    return _answer(changed, found, Done.RESTORED)


def _named(which: Which) -> str:
    """The field the request named its occurrence by."""
    return "occurrence" if which.number is not None else "at"


def _noted(reason: str, note: str | None) -> str:
    return f"{reason}: {note}" if note else reason


def _recurring(action_id: str, wanted: str, deps: Steers) -> Action:
    action = deps.records.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    if action.status in FINISHED:
        raise ActionFinished(action_id, str(action.status), wanted)
    if not action.repeat:
        raise NotRecurring(action_id, wanted)
    return action


def _find(action: Action, which: Which) -> _Found:
    """The occurrence ``which`` names, counted on from the one the record is at."""
    assert action.execution_time is not None
    number, moment = action.occurrence, action.origin_of(action.execution_time)
    if which.at is not None:
        _within_reach(which.at, moment, "at")
    wanted = None if which.at is None else occurrence_at(action.schedule, which.at)
    if wanted is not None and wanted < moment:
        raise ValidationFailed.of(
            "at",
            f"{iso_exact(wanted)} has already come (occurrence {number} is at {iso_exact(moment)})",
            "give an occurrence at or after the next one",
        )
    if which.number is not None and which.number < number:
        raise ValidationFailed.of(
            "occurrence", f"{which.number} has already come (the next is {number})",
            f"give {number} or later",
        )  # fmt: skip
    before: datetime | None = None
    for _ in range(MAX_LOOKAHEAD + 1):
        following = action.schedule.next_fire_time(moment, number)
        after = None if following is None else ceil_ms(following)
        if number == which.number or moment == wanted:
            return _Found(number, moment, before, after)
        if after is None:
            raise ValidationFailed.of(
                "occurrence" if wanted is None else "at",
                f"the schedule ends with occurrence {number} at {iso_exact(moment)}",
                f"give an occurrence from {action.occurrence} to {number}",
            )
        before, moment, number = moment, after, number + 1
    raise ValidationFailed.of(
        "occurrence" if wanted is None else "at",
        f"is more than {MAX_LOOKAHEAD:,} occurrences ahead of occurrence {action.occurrence}",
        f"give one of the next {MAX_LOOKAHEAD:,}",
    )


def _refuse_if_locked(action: Action, found: _Found, now: datetime, deps: Steers) -> None:
    """The imminent occurrence inside its lock (or firing) is fixed."""
    if found.number != action.occurrence or action.status is Status.PAUSED:
        return
    if is_locked(action, now, deps):
        raise OccurrenceLocked(
            action.id,
            found.number,
            iso(action.execution_time or now),
            int(lock_of(action, deps).total_seconds()),
        )


def _check_between(
    action: Action, found: _Found, fire_at: datetime, now: datetime, field: str
) -> None:
    """The occurrence's fire time after the change (``fire_at``) is in the future and strictly
    between its neighbours' fire times (moved or not), so occurrences keep their order and
    never meet."""
    low = None if found.before is None else action.fire_time_of(found.before)
    high = None if found.after is None else action.fire_time_of(found.after)
    between = (
        f"between {iso_exact(low) if low else 'now'} and {iso_exact(high)}"
        if high
        else f"after {iso_exact(low) if low else 'now'}"
    )
    if fire_at <= now:
        raise ValidationFailed.of(
            field,
            f"occurrence {found.number} would fire at {iso_exact(fire_at)}, which has passed",
            f"give a future time strictly {between} (the occurrences around it)"
            if field == "to"
            else "move it to a future time instead",
        )
    if (low is not None and fire_at <= low) or (high is not None and fire_at >= high):
        raise ValidationFailed.of(
            field,
            f"occurrence {found.number} would fire at {iso_exact(fire_at)}, not between the "
            "occurrences around it",
            f"give a time strictly {between}, or move those first",
        )


def _answer(action: Action, found: _Found, outcome: Done) -> ChangeAnswer:
    change = action.change_of(found.scheduled)
    fires_at = (
        None if change is not None and change.to is None else action.fire_time_of(found.scheduled)
    )
    return ChangeAnswer(
        action.id,
        outcome,
        str(action.status),
        execution_time=action.execution_time,
        occurrence=found.number,
        scheduled_time=found.scheduled,
        fires_at=fires_at,
    )
