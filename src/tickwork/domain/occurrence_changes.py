"""One occurrence of a recurrence under the user's control: skipped, or moved to another time,
without touching the schedule.

An occurrence is named by its time as the schedule has it (``scheduled``), never by a position
that an outage or a catch-up could shift. A skipped occurrence still comes due: its execution
records it SKIPPED ("skipped by request") at its time, and the recurrence goes on, as a
catch-up skip does. A moved occurrence fires at ``to`` instead, which lies strictly between
its neighbours' fire times (moved or not), so no two occurrences ever meet and the next one is
computed from the moved one's own scheduled time (a move earlier never fires the original time
again).

Pure: the use case (``steering.occurrences``) reads the record, asks the questions here, and
writes the change fenced on the record's version.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.times import ceil_ms, iso_exact

if TYPE_CHECKING:
    from tickwork.domain.schedule import Schedule

__all__ = [
    "MAX_CHANGES",
    "MAX_LOOKAHEAD",
    "ChangeOfOccurrence",
    "OccurrenceChange",
    "occurrence_at",
]

MAX_CHANGES = 50  # skipped or moved occurrences a record holds at once
MAX_LOOKAHEAD = 1_000  # how far ahead (in occurrences) one may be named by number
_MS = timedelta(milliseconds=1)


class ChangeOfOccurrence(StrEnum):
    SKIP = "SKIP"
    MOVE = "MOVE"


@dataclass(frozen=True)
class OccurrenceChange:
    """``scheduled``: the occurrence's time as its schedule has it; ``to``: the time it fires
    instead (None: it is skipped); ``requested_at`` and ``note``: when and why it was asked."""

    scheduled: datetime
    requested_at: datetime
    to: datetime | None = None
    note: str | None = None

    @property
    def kind(self) -> ChangeOfOccurrence:
        return ChangeOfOccurrence.SKIP if self.to is None else ChangeOfOccurrence.MOVE


def occurrence_at(schedule: Schedule, moment: datetime, field: str = "at") -> datetime:
    """``moment`` as an occurrence of ``schedule`` (to the millisecond), or refused naming
    ``field``."""
    wanted = ceil_ms(moment)
    found = schedule.next_fire_time(wanted - _MS, 0)
    if found is None or ceil_ms(found) != wanted:
        near = f"; the first at or after it is {iso_exact(ceil_ms(found))}" if found else ""
        raise ValidationFailed.of(
            field,
            f"{iso_exact(wanted)} is not an occurrence of the schedule{near}",
            "give a time the schedule fires at (`tickwork next ID` lists them), or an "
            "occurrence number",
        )
    return wanted
