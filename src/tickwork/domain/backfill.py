"""Backfill (Temporal's): run the occurrences of a past range of a recurrence, once each.

A backfill names a range of scheduled times (``start`` and ``end``, both inclusive, both in
the past). Each occurrence the schedule has in it is run now, as a fire asked for by hand
(trigger ``BACKFILL``): its tick carries the occurrence's own scheduled time, its idempotency
key is its own (never a live fire's), and the history records it as backfilled.

Once each: the record keeps the spans of scheduled times it has backfilled (``Backfilled``);
an occurrence inside one is never run again, by this backfill or a later one. An occurrence
at or after the action's creation was the live schedule's to fire (fired, skipped or missed
then): that is an overlap, which the request's ``overlap`` policy REFUSEs (nothing is run) or
SKIPs (the others run).

A backfill runs as many occurrences at a time as the manual fires in flight allow (``free``);
the rest wait on the record (``BackfillRequest``), and each recorded backfilled fire, or the
reconciler, runs the next. Pure: the use case (``steering.backfill``) reads and writes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import Schedule
from tickwork.domain.times import ceil_ms, iso_exact

__all__ = [
    "MAX_BACKFILL",
    "MAX_SPANS",
    "BackfillPlan",
    "BackfillRequest",
    "Backfilled",
    "Overlap",
    "passed_while_paused",
    "plan_backfill",
    "with_span",
    "without",
]

MAX_BACKFILL = 1_000  # occurrences one backfill's range may hold
MAX_SPANS = 50  # separate spans of backfilled times one record keeps
MAX_REACH = timedelta(days=3_653)  # ten years back at most, as a first fire ahead
_MICROSECOND = timedelta(microseconds=1)
_MS = timedelta(milliseconds=1)


class Overlap(StrEnum):
    """What a backfill does with occurrences the live schedule had (at or after creation):
    REFUSE the backfill, or SKIP them and run the others."""

    REFUSE = "REFUSE"
    SKIP = "SKIP"


@dataclass(frozen=True)
class Backfilled:
    """A span of scheduled times every occurrence in which has been backfilled (its ends are
    occurrences, or the edges of one taken out of it)."""

    first: datetime
    last: datetime

    def holds(self, moment: datetime) -> bool:
        return self.first <= moment <= self.last


@dataclass(frozen=True)
class BackfillRequest:
    """A backfill still running on the record: its range and policy, and who asked."""

    start: datetime
    end: datetime
    overlap: Overlap
    requested_at: datetime
    request_id: str | None = None
    note: str | None = None
    # a resume catching up on the occurrences that came due while the action was paused
    # (catchUpOnResume): the live schedule's own, never run, so none of them is an overlap
    catch_up: bool = False


@dataclass(frozen=True)
class BackfillPlan:
    """What a backfill runs now (``launch``, in order), what it passes over as the live
    schedule's (``overlapping``), how many it finds backfilled before (``already``), and how
    many wait for a free slot (``remaining``)."""

    launch: tuple[datetime, ...]
    overlapping: tuple[datetime, ...]
    already: int
    remaining: int
    total: int  # the occurrences in the range

    @property
    def done(self) -> bool:
        return self.remaining == 0


def check_range(start: datetime, end: datetime, now: datetime) -> None:
    """Refuse a range that is not in the past, is backwards, or reaches over ten years back."""
    if end > now:
        raise ValidationFailed.of(
            "endTime",
            f"{iso_exact(end)} is in the future: a backfill runs past occurrences",
            f"give an endTime at or before now ({iso_exact(now)}); the schedule runs the rest",
        )
    if start > end:
        raise ValidationFailed.of(
            "startTime",
            f"{iso_exact(start)} is after endTime {iso_exact(end)}",
            "give a startTime at or before endTime",
        )
    if start < now - MAX_REACH:
        raise ValidationFailed.of(
            "startTime",
            f"{iso_exact(start)} is more than ten years ago",
            f"give a startTime after {iso_exact(now - MAX_REACH)}",
        )


def occurrences_in(schedule: Schedule, start: datetime, end: datetime) -> list[datetime]:
    """The schedule's occurrences from ``start`` to ``end`` (inclusive), by its own rules and
    bounds (its startTime and endTime; not its count, which counts live fires); refused past
    ``MAX_BACKFILL``."""
    found: list[datetime] = []
    moment = schedule.first_fire_time(start)
    while moment is not None and moment <= end:
        if len(found) == MAX_BACKFILL:
            raise ValidationFailed.of(
                "endTime",
                f"the range holds more than {MAX_BACKFILL:,} occurrences",
                f"backfill at most {MAX_BACKFILL:,} at a time: end the range at or before "
                f"{iso_exact(found[-1])}, then backfill from after it",
            )
        found.append(ceil_ms(moment))
        moment = schedule.next_fire_time(moment, 0)
    return found


_MOST_WALKED = 10_000  # a schedule with more left is looked for back from now


def passed_while_paused(
    schedule: Schedule, first: datetime, now: datetime, most: int, left: int | None = None
) -> list[datetime]:
    """The scheduled times of the schedule's occurrences from ``first`` (the one due when it
    was paused) to ``now``, the latest ``most`` of them: looked for back from ``now`` in
    doubling spans, so that a long pause of a dense schedule is not walked whole. ``left``:
    how many occurrences the schedule has from ``first`` on (None: no end) — none after them."""
    if left is not None and left <= _MOST_WALKED:
        walked: list[datetime] = []
        moment: datetime | None = first
        while moment is not None and moment <= now and len(walked) < left:
            walked.append(ceil_ms(moment))
            moment = schedule.next_fire_time(moment, 0)
        return walked[-most:]
    span = timedelta(seconds=1)
    while True:
        since = max(first, now - span)
        found: list[datetime] = []
        moment = first if since == first else schedule.first_fire_time(since)
        while moment is not None and moment <= now:
            found.append(ceil_ms(moment))
            moment = schedule.next_fire_time(moment, 0)
        if len(found) >= most or since == first:
            return found[-most:]
        span *= 2


def plan_backfill(
    occurrences: list[datetime],
    live_from: datetime,
    backfilled: tuple[Backfilled, ...],
    overlap: Overlap,
    free: int,
) -> BackfillPlan:
    """Which of ``occurrences`` run now: those not backfilled before, not the live schedule's
    (at or after ``live_from``), at most ``free`` of them, the earliest first. With overlap
    REFUSE an occurrence of the live schedule refuses the whole backfill (``BackfillOverlap``
    is raised by the caller from ``overlapping``)."""
    fresh = [o for o in occurrences if not any(span.holds(o) for span in backfilled)]
    overlapping = tuple(o for o in fresh if o >= live_from)
    pending = [o for o in fresh if o < live_from]
    take = max(0, free)
    return BackfillPlan(
        launch=tuple(pending[:take]),
        overlapping=overlapping,
        already=len(occurrences) - len(fresh),
        remaining=max(0, len(pending) - take),
        total=len(occurrences),
    )


def with_span(
    spans: tuple[Backfilled, ...], launched: tuple[datetime, ...], schedule: Schedule
) -> tuple[Backfilled, ...]:
    """``spans`` with the occurrences ``launched`` (consecutive among those not backfilled)
    added, and spans that no occurrence separates merged. Refused past ``MAX_SPANS``."""
    if not launched:
        return spans
    merged: list[Backfilled] = []
    for span in sorted([*spans, Backfilled(launched[0], launched[-1])], key=lambda s: s.first):
        if merged and _touching(merged[-1], span, schedule):
            last = merged[-1]
            merged[-1] = replace(last, last=max(last.last, span.last))
        else:
            merged.append(span)
    if len(merged) > MAX_SPANS:
        raise ValidationFailed.of(
            "startTime",
            f"the action keeps {MAX_SPANS} separate backfilled spans already",
            "backfill a range next to one backfilled before, so that they join",
        )
    return tuple(merged)


def without(spans: tuple[Backfilled, ...], moments: list[datetime]) -> tuple[Backfilled, ...]:
    """``spans`` with ``moments`` taken out (backfilled fires asked for and dropped before they
    ran: a replace or a cancel ended them), so a later backfill runs them."""
    for moment in moments:
        kept: list[Backfilled] = []
        for span in spans:
            if not span.holds(moment):
                kept.append(span)
                continue
            if span.first < moment:
                kept.append(Backfilled(span.first, moment - _MS))
            if moment < span.last:
                kept.append(Backfilled(moment + _MS, span.last))
        spans = tuple(kept)
    return spans


def _touching(earlier: Backfilled, later: Backfilled, schedule: Schedule) -> bool:
    """Whether no occurrence lies between ``earlier`` and ``later`` (or they overlap)."""
    if later.first <= earlier.last:
        return True
    following = schedule.next_fire_time(earlier.last, 0)
    return following is not None and ceil_ms(following) >= later.first
