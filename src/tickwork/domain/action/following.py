"""After a fire ends, which occurrence is next: the catch-up policy passes over those missed in
an outage (``domain.catch_up``), the overlap policy decides for those that came due while the
fire was being attempted (``overlapPolicy``: ``domain.fire_policy.OverlapPolicy``).

An occurrence **came due while the fire was being attempted** when its fire time lies after the
fire's claim (its first attempt) and at or before its ending: when its last attempt ended, not
when that was recorded. (Those due before the claim were missed while the fire itself waited —
an outage: the catch-up policy's; so are those due while its ending waited to be recorded.)
For those:

- ``SKIP`` (the default): each is recorded SKIPPED, with the reason, in the write that records
  the fire; the fires go on at the first occurrence after the ending. Nothing runs beside a fire.
- ``BUFFER_ONE``: the first of them is next, at once (``buffered``: it runs late by design, and
  its catch-up policy does not count it missed); those that come due before it is claimed are
  skipped when it is recorded (one is buffered at most), as Temporal's BUFFER_ONE does.
- ``BUFFER_ALL``: each of them runs, one after another, at once (each ``buffered``).
- ``ALLOW_ALL``: a fire that is retried hands its place to the next occurrence at its first
  failure (``fire.overlap``), so each runs at its own time; those that came due during a
  single long attempt run as under ``BUFFER_ALL``.

A skipped occurrence takes its number, as a skip asked for one does (it is one of
``maxOccurrences``). At most ``MOST_SKIPS_RECORDED`` entries are written for one ending: past
that, the first entry kept says how many earlier ones it stands for. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tickwork.domain.action.record import ActionRecord, Occurrence
from tickwork.domain.fire import Outcome
from tickwork.domain.fire_policy import OverlapPolicy
from tickwork.domain.times import ceil_ms

__all__ = [
    "MOST_SKIPS_RECORDED",
    "NO_OVERLAP",
    "OVERLAP_REASON",
    "Overlap",
    "after_fire",
    "following_fire",
]

MOST_SKIPS_RECORDED = 10  # history entries one ending writes for the occurrences it skipped
_MOST_WALKED = 10_000  # occurrences looked at: past them, the catch-up policy passes over
OVERLAP_REASON = "overlap"  # how a skip by the overlap policy's reason begins


@dataclass(frozen=True)
class Overlap:
    """What the overlap policy made of the occurrences that came due during a fire."""

    skipped: tuple[Occurrence, ...] = ()  # SKIPPED entries, after the fire's own
    passed: int = 0  # the occurrences they stand for (more than the entries past the bound)
    buffered: bool = False  # the next fire came due during the fire: it runs at once


NO_OVERLAP = Overlap()


def after_fire(
    action: ActionRecord,
    scheduled: datetime,
    occurrence: int,
    now: datetime,
    ended: datetime | None = None,
) -> tuple[datetime | None, Overlap]:
    """The fire time of the occurrence after the one scheduled at ``scheduled`` (number
    ``occurrence``), recorded at ``now``, and what its overlap policy passed over on the way.
    ``action`` is the record as the fire left it (its claim is the fire's). ``ended``: when
    its last attempt ended (a tick's actual time, a failure report's ``failedAt``), if known —
    an occurrence due after it, while the ending waited to be recorded (a report the bus
    refused, a crashed function), did not come due during the fire: it was missed, and is its
    catch-up policy's, as in any outage."""
    ending = now if ended is None else min(ended, now)
    due = _came_due(action, scheduled, occurrence, ending)
    catching = following_fire(action, scheduled, occurrence, now)
    if not due or (catching is not None and catching < due[0][1]):
        # none came due during the fire; or one due before its claim (while it waited: an
        # outage) is still worth a fire to its catch-up policy: that one first, as before
        return catching, NO_OVERLAP
    policy = action.policy.overlap
    if policy is OverlapPolicy.SKIP:
        last_scheduled, _ = due[-1]
        skipped = _skipped(action, due, occurrence, now)
        following = following_from(action, last_scheduled, occurrence + len(due), now)
        return following, skipped
    # BUFFER_ONE: one buffered at most — while a buffered fire waited, those that came due
    # were dropped; BUFFER_ALL and ALLOW_ALL: each runs.
    begun = action.claimed_at
    waited = (
        [d for d in due if begun is not None and d[1] <= begun]
        if policy is OverlapPolicy.BUFFER_ONE and action.buffered
        else []
    )
    if len(waited) == len(due):  # all came due while it waited: dropped, none buffered
        last_scheduled, _ = due[-1]
        following = following_from(action, last_scheduled, occurrence + len(due), now)
        return following, _skipped(action, due, occurrence, now)
    _, at = due[len(waited)]
    skipped = _skipped(action, due[: len(waited)], occurrence, now)
    return at, Overlap(skipped.skipped, skipped.passed, buffered=True)


def _came_due(
    action: ActionRecord, scheduled: datetime, occurrence: int, now: datetime
) -> list[tuple[datetime, datetime]]:
    """(scheduled time, fire time) of the occurrences after this one that came due while it
    was being attempted — after its claim (for a buffered fire: after its own fire time, the
    wait it was buffered for), at or before ``now`` — in order, stopping at the first that is
    not due yet."""
    begun = action.claimed_at
    if begun is None or action.execution_time is None:
        return []  # never attempted (skipped, or recorded without a claim): nothing overlapped
    if action.buffered:
        begun = min(begun, action.execution_time)
    found: list[tuple[datetime, datetime]] = []
    origin = action.origin_of(scheduled)
    moment = action.schedule.next_fire_time(origin, occurrence)
    for _ in range(_MOST_WALKED):
        if moment is None:
            break
        moment = ceil_ms(moment)
        at = action.fire_time_of(moment)
        if at > now:
            break
        if at > begun:
            found.append((moment, at))
        moment = action.schedule.next_fire_time(moment, occurrence + len(found))
    return found


def _skipped(
    action: ActionRecord,
    due: list[tuple[datetime, datetime]],
    occurrence: int,
    now: datetime,
) -> Overlap:
    """The SKIPPED entries of the occurrences ``due`` (numbered after ``occurrence``): the last
    ``MOST_SKIPS_RECORDED``, the first of them saying how many earlier ones it stands for."""
    policy = str(action.policy.overlap)
    entries: list[Occurrence] = []
    kept = due[-MOST_SKIPS_RECORDED:]
    first_number = occurrence + 1 + len(due) - len(kept)
    for index, (moment, at) in enumerate(kept):
        number = first_number + index
        reason = (
            f"{OVERLAP_REASON}: came due while occurrence {occurrence} was being attempted "
            f"(overlapPolicy {policy})"
        )
        earlier = len(due) - len(kept)
        if index == 0 and earlier:
            reason += f"; so did occurrences {occurrence + 1} to {number - 1}, skipped too"
        entries.append(
            Occurrence(
                occurrence=number,
                scheduled_time=moment,
                actual_time=now,
                attempts=0,
                outcome=Outcome.SKIPPED,
                late_ms=max(0, int((now - at).total_seconds() * 1000)),
                reason=reason,
            )
        )
    return Overlap(tuple(entries), len(due))


def following_fire(
    action: ActionRecord, scheduled: datetime, occurrence: int, now: datetime
) -> datetime | None:
    """The next occurrence after this one (its fire time ``scheduled``). Occurrences missed in
    an outage that the catch-up policy does not run are passed over: the action's fires resume
    at the first one still worth a fire. A moved occurrence counts from its own scheduled time,
    and the next fires at its moved time if it was moved."""
    return following_from(action, action.origin_of(scheduled), occurrence, now)


def following_from(
    action: ActionRecord, origin: datetime, occurrence: int, now: datetime
) -> datetime | None:
    """As ``following_fire``, from the occurrence scheduled at ``origin``."""
    not_before = action.catch_up.resume_from(now)  # a fire before it is passed over: by its
    since = action.earliest_firing(not_before)  # fire time (a window, a shift), not its own
    following = action.schedule.next_fire_time(origin, occurrence, not_before=since)
    following = following and ceil_ms(following)
    # An occurrence the catch-up passes over by its scheduled time, moved to a time still
    # worth a fire, fires at that time.
    passed_over = action.moved_fire(origin, following, not_before)
    if passed_over and action.schedule.next_fire_time(origin, occurrence) is not None:
        return passed_over
    return following and action.fire_time_of(following)
