"""Backfill a recurrence (Temporal's backfill): run the occurrences of a past range, once each,
as fires asked for by hand (trigger BACKFILL), each with its own idempotency key and its tick
carrying the occurrence's own scheduled time (``domain.backfill`` holds the rules).

The request is checked here; what runs, and when, is the fire wing's backfill step
(``fire.backfill_step``), which each backfilled fire recorded runs again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tickwork.answers import BackfillAnswer
from tickwork.domain.backfill import BackfillRequest, Overlap, check_range
from tickwork.domain.errors import ActionNotFound, ValidationFailed
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.steering import check_note
from tickwork.domain.times import ceil_ms, require_utc
from tickwork.fire.backfill_step import step_backfill
from tickwork.steering.needs import Steers

__all__ = ["backfill"]


def backfill(
    action_id: str,
    start: datetime,
    end: datetime,
    overlap: Overlap | str,
    deps: Steers,
    request_id: str | None = None,
    note: str | None = None,
) -> BackfillAnswer:
    """Run the occurrences of ``action_id``'s schedule from ``start`` to ``end`` (inclusive,
    both past), once each. Asked again (the same range), it goes on where it is: nothing
    backfilled is run again, so a repeated request is harmless."""
    action_id = check_steered_id(action_id)
    note = check_note(note)
    request_id = check_note(request_id, "requestId")
    try:
        policy = Overlap(str(overlap).strip().upper())
    except ValueError as error:
        raise ValidationFailed.of(
            "overlap", f"{overlap!r} is not an overlap policy", "give REFUSE (default) or SKIP"
        ) from error
    now = deps.clock.now()
    # in UTC (an offset that leaves the calendar there is refused, naming the field), to the
    # millisecond, as occurrences are kept: inward, so the range holds the same ones
    start = ceil_ms(require_utc(start, "startTime"))
    end = require_utc(end, "endTime")
    end = end - timedelta(microseconds=end.microsecond % 1000)
    check_range(start, end, now)
    asked = BackfillRequest(start, end, policy, now, request_id, note)
    answer = step_backfill(action_id, asked, deps, first=True)
    if answer is None:
        raise ActionNotFound(action_id)
    return answer
