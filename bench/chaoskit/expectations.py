"""What each action should have fired, from the plan and the answers tickwork gave.

A fire is keyed ``(version, occurrence)``: version 1 is the data as created, 2 the data of an
accepted update (which replaces the action, so its occurrences count from 1 again). Each key
has its scheduled time, so a delivery before it is early.

- one-off: ``(1, 1)`` at its ``at``; recurrence: ``(1, k)`` for k = 1..count, interval apart,
  from the first fire time read back after creation (``permanent`` too: each of its fires
  fails, and the recurrence goes on, as onFailure CONTINUE says);
- accepted cancel or pause: the fires recorded before it (the record's history), none after
  (the action ends CANCELLED or PAUSED);
- accepted update: the version-1 fires before it (history in the PATCH answer), then every
  fire of the new version from the ``executionTime`` in that answer;
- deferred (202, a recurrence inside its lock) cancel, pause or update: the version-1 fires up
  to the imminent one it waited for; then none (cancel, pause: a pause that waited for the
  last fire leaves the action COMPLETED), or every fire of the new version from the
  schedule the record has at the end (its rate's anchor);
- refused (409, a one-off inside its lock) cancel, pause or update: the plan unchanged.

An accepted request whose raced fire was already inside the lock, a deferred one whose fire
was not, or a refusal with no fire inside the lock, is a broken lock: counted as "wrong", as
is any unexpected answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chaoskit.plan import Kind, PlannedAction
from chaoskit.races import RaceOutcome

__all__ = ["Expected", "expected_fires", "first_fire_time"]

Key = tuple[int, int]  # (version, occurrence)
_EPSILON = 0.01  # seconds: the API's times are kept to the millisecond
_STOPPED = {"cancel": "CANCELLED", "pause": "PAUSED"}  # what an accepted one leaves


@dataclass
class Expected:
    action: PlannedAction
    fires: dict[Key, float]  # key -> scheduled time (epoch seconds)
    final_status: str
    problems: list[str] = field(default_factory=list)


def epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def first_fire_time(action: PlannedAction, summary: dict[str, Any] | None) -> float:
    """Occurrence 1's time: a rate counts from its creation, so read it back."""
    if summary is None or not summary.get("executionTime"):
        return action.not_before + (action.interval or 0)
    shown = epoch(summary["executionTime"])
    return shown - (int(summary.get("occurrence", 1)) - 1) * action.interval


def _chain(version: int, first: float, interval: int, count: int) -> dict[Key, float]:
    return {(version, k): first + (k - 1) * interval for k in range(1, count + 1)}


def expected_fires(
    action: PlannedAction,
    first: float,
    race: RaceOutcome | None,
    record: dict[str, Any] | None,
    lock: float,
) -> Expected:
    """``record``: the action's view at the end of the run (for an accepted or deferred race)."""
    count = action.count
    planned = _chain(1, first, action.interval, count)
    # A failed fire ends a one-off FAILED; a recurrence goes on (onFailure CONTINUE, its
    # default): every occurrence of a permanent-* (or reportlost-*) action is tried, and
    # fails, once.
    failed_one_off = action.kind in (Kind.PERMANENT, Kind.REPORT_LOST) and not action.recurring
    final = "FAILED" if failed_one_off else "COMPLETED"
    expected = Expected(action, planned, final)
    if action.not_before and first + _EPSILON < action.not_before:
        expected.problems.append(
            f"first fire {first:.3f} is before the planned {action.not_before:.3f}"
        )
    if race is None or race.status == 0:
        return expected
    if race.status not in (200, 202, 409):
        expected.problems.append(f"{race.operation} answered {race.status}: {race.body}")
        return expected
    if race.deferred:
        return _deferred(expected, race, record or {}, planned, count, lock)
    if not race.accepted:
        # a cancel or pause is refused only once its fire is under way (claimed, so due);
        # an update, inside the lock
        _check_refusal(expected, race, 0.0 if race.operation in _STOPPED else lock)
        if race.status == 200:  # the cancel or pause found the action already finished
            expected.problems.append(f"{race.operation} found it {race.body.get('status')} already")
        return expected
    if race.operation in _STOPPED:
        # accepted whenever its fire was not claimed yet (inside the lock too): nothing fires
        # after the fires recorded by then
        fired_before = len((record or {}).get("history") or [])
        expected.final_status = _STOPPED[race.operation]
        expected.fires = {key: at for key, at in planned.items() if key[1] <= fired_before}
    else:
        fired_before = len(race.body.get("history") or [])
        again = epoch(race.body["executionTime"])
        expected.fires = {
            **{key: at for key, at in planned.items() if key[1] <= fired_before},
            **_chain(2, again, action.interval, count),
        }
        if not action.recurring and abs(again - first) > _EPSILON:
            expected.problems.append(f"the update moved the fire from {first:.3f} to {again:.3f}")
    # an update is accepted only outside the lock; a cancel or pause until the claim
    ahead = 0.0 if race.operation in _STOPPED else lock
    _check_acceptance(expected, race, planned.get((1, fired_before + 1)), ahead)
    return expected


def _deferred(
    expected: Expected,
    race: RaceOutcome,
    record: dict[str, Any],
    planned: dict[Key, float],
    count: int,
    lock: float,
) -> Expected:
    imminent = race.applies_after
    expected.fires = {key: at for key, at in planned.items() if key[1] <= imminent}
    due = planned.get((1, imminent))
    # a cancel or pause waits only for a fire under way (claimed: due); an update, for a fire
    # inside its lock
    ahead = 0.0 if race.operation in _STOPPED else lock
    if due is None or due - ahead > race.answered + _EPSILON:
        expected.problems.append(
            f"{race.operation} deferred at {race.answered:.3f}, but occurrence {imminent} "
            f"was not {'under way' if race.operation in _STOPPED else 'inside its lock'}"
        )
    if race.operation in _STOPPED:
        expected.final_status = _STOPPED[race.operation]
        if race.operation == "pause" and imminent >= count:
            # A pause has nothing left to pause once the last fire is recorded: it completes
            # (a cancel still ends it CANCELLED, as its answer said).
            expected.final_status = "COMPLETED"
        return expected
    spec = record.get("scheduleSpec") or {}
    if spec.get("kind") != "rate" or not spec.get("anchor"):
        expected.problems.append(f"the deferred update left the schedule {spec}")
        return expected
    first = epoch(spec["anchor"]) + expected.action.interval  # a rate fires one interval on
    expected.fires.update(_chain(2, first, expected.action.interval, count))
    return expected


def _check_acceptance(
    expected: Expected, race: RaceOutcome, superseded_at: float | None, lock: float
) -> None:
    """Accepted: the fire it superseded must still have been outside its lock (``lock`` 0: a
    cancel or pause, which wins until the claim — the fire not yet due when it was sent)."""
    if superseded_at is None:
        expected.problems.append(f"{race.operation} accepted after every fire had happened")
    elif lock and superseded_at - lock <= race.sent - _EPSILON:
        expected.problems.append(
            f"{race.operation} accepted at {race.sent:.3f}, inside the lock of the fire due "
            f"{superseded_at:.3f}"
        )


def _check_refusal(expected: Expected, race: RaceOutcome, lock: float) -> None:
    """Refused (409): some fire must have been inside its lock by the time of the answer."""
    if race.status == 409 and not any(
        at - lock <= race.answered + _EPSILON for at in expected.fires.values()
    ):
        expected.problems.append(
            f"{race.operation} refused at {race.answered:.3f} with no fire inside the lock "
            f"({race.body.get('error', 'no error named')}: {race.body.get('message', '')})"
        )
