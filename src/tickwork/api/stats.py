"""Fires and failures over recent time.

All actions or a group: from the fire tallies (``FireTallies``: each recorded fire is counted in
its minute and its hour), so a read is bounded whatever the table holds: the last hour is 60
minute items, the last day 24 hour items plus the minutes of its first, partial hour. By id
prefix: from the occurrence histories of the records of that prefix (read through the id
index), each of which keeps a bounded history (``HISTORY_LIMIT``).

An occurrence is "on time" when it fired at most 1 s after its scheduled time, "late" when
later, "failed" when it failed after its retries; NO_ACTION and SKIPPED occurrences (nothing
ran) are counted in none (``domain.fire_tally``). Windows and buckets go by when the occurrence
happened (its actual time), to the minute.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from tickwork.domain.action import Action
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.fire_tally import FireKind, fire_kind
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso, to_epoch_ms
from tickwork.ports import ATTENTION, ActionQueries, FireTallies

__all__ = ["MAX_BUCKETS", "fire_buckets", "fire_counts", "stats_of"]

MAX_BUCKETS = 500
_PAGE = 200
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_WINDOWS = {"lastHour": 60, "lastDay": 1440}  # minutes


def stats_of(
    queries: ActionQueries, tallies: FireTallies, selection: Selection, now: datetime
) -> dict[str, Any]:
    """What ``GET /stats`` answers, and ``tickwork stats --json``: the actions by status
    (``byStatus``: each action once), those that need attention apart (``needsAttention``: a
    part of the statuses, not one of them), and the fires of the last hour and day."""
    counts = dict(queries.count(selection))
    attention = counts.pop(ATTENTION, 0)
    fires = fire_counts(queries, tallies, selection, now)
    return {"byStatus": counts, "needsAttention": attention, **fires}


def fire_counts(
    queries: ActionQueries, tallies: FireTallies, selection: Selection, now: datetime
) -> dict[str, Any]:
    """{"lastHour": {fired, late, failed}, "lastDay": {...}}; late is a part of fired."""
    minute = _minute(now)
    if selection.prefix is not None:
        counted = _tallies_of(_actions(queries, selection), minute - _WINDOWS["lastDay"] + 1)
        return {
            name: _totals(c for m, c in counted.items() if m > minute - span)
            for name, span in _WINDOWS.items()
        }
    group = selection.group
    hour_minutes = tallies.read(group, False, minute - 59, minute)
    first = minute - _WINDOWS["lastDay"] + 1
    whole_from = -(-first // 60)  # the first hour that starts inside the window
    day = [
        *tallies.read(group, False, first, whole_from * 60 - 1).values(),
        *tallies.read(group, True, whole_from, minute // 60).values(),
    ]
    return {"lastHour": _totals(hour_minutes.values()), "lastDay": _totals(day)}


def fire_buckets(tallies: FireTallies, now: datetime, minutes: int, bucket: int) -> dict[str, Any]:
    """The last ``minutes`` in ``bucket``-minute buckets aligned to UTC, the last one holding
    ``now``: {"buckets": [{"start", "onTime", "late", "failed"}, ...]} oldest first."""
    if minutes < bucket or -(-minutes // bucket) > MAX_BUCKETS:
        raise ValidationFailed.of(
            "bucket",
            f"{minutes} minutes in {bucket}-minute buckets is not 1 to {MAX_BUCKETS} buckets",
            f"give a bucket of at most {minutes} and at least {-(-minutes // MAX_BUCKETS)} minutes",
        )
    count = -(-minutes // bucket)
    last = _minute(now) // bucket * bucket
    first = last - (count - 1) * bucket
    hourly = bucket % 60 == 0
    unit = 60 if hourly else 1
    counted = tallies.read(None, hourly, first // unit, (last + bucket) // unit - 1)
    sums = [Counter[str]() for _ in range(count)]
    for number, tally in counted.items():
        sums[(number * unit - first) // bucket].update(tally)
    return {
        "buckets": [
            {
                "start": iso(_EPOCH + timedelta(minutes=first + n * bucket)),
                **{str(kind): total.get(str(kind), 0) for kind in FireKind},
            }
            for n, total in enumerate(sums)
        ]
    }


def _minute(moment: datetime) -> int:
    return to_epoch_ms(moment) // 60_000


def _totals(tallies: Iterable[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    for tally in tallies:
        total.update(tally)
    on_time, late = total[FireKind.ON_TIME], total[FireKind.LATE]
    return {"fired": on_time + late, "late": late, "failed": total[FireKind.FAILED]}


def _actions(queries: ActionQueries, selection: Selection) -> Iterator[Action]:
    cursor: str | None = None
    while True:
        actions, cursor = queries.page(selection, _PAGE, cursor)
        yield from actions
        if cursor is None:
            return


def _tallies_of(actions: Iterable[Action], since: int) -> dict[int, Counter[str]]:
    """The records' occurrences that happened from minute ``since`` on, counted by minute."""
    tallies: dict[int, Counter[str]] = {}
    for action in actions:
        for occurrence in action.history:
            kind = fire_kind(occurrence)
            minute = _minute(occurrence.actual_time)
            if kind is not None and minute >= since:
                tallies.setdefault(minute, Counter())[str(kind)] += 1
    return tallies
