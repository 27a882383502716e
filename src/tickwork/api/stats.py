"""Fires and failures over recent time, counted from the occurrence history on the records.

Every record is read (paged through the id index, and loaded by key) and its history counted,
so the cost grows with the table — fine for a dashboard over thousands of actions, not millions;
at that scale count fires as they are recorded (metrics, or a counter item) instead. Each
record keeps a bounded history (``HISTORY_LIMIT``), so an action that fires more often
than that within the window is undercounted.

An occurrence is "on time" when it fired at most 1 s after its scheduled time, "late" when
later, "failed" when it failed after its retries; NO_ACTION occurrences (nothing to run) are
counted in none. Windows and buckets go by when the occurrence happened (its actual time).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any, Protocol

from tickwork.domain.action import Action, Occurrence
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.fire import Outcome
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso

__all__ = ["MAX_BUCKETS", "all_actions", "fire_buckets", "fire_counts"]

LATE_AFTER = timedelta(seconds=1)
MAX_BUCKETS = 500
_SCAN_PAGE = 200


class PagedActions(Protocol):
    def page(
        self, selection: Selection, limit: int, cursor: str | None = None
    ) -> tuple[list[Action], str | None]: ...


def all_actions(repository: PagedActions, selection: Selection | None = None) -> Iterator[Action]:
    """Every action (the id index), or those of a group or id prefix (their index)."""
    cursor: str | None = None
    while True:
        actions, cursor = repository.page(selection or Selection(), _SCAN_PAGE, cursor)
        yield from actions
        if cursor is None:
            return


def fire_counts(actions: Iterable[Action], now: datetime) -> dict[str, Any]:
    """{"lastHour": {fired, late, failed}, "lastDay": {...}}; late is a part of fired."""
    windows = {"lastHour": timedelta(hours=1), "lastDay": timedelta(days=1)}
    counts = {name: {"fired": 0, "late": 0, "failed": 0} for name in windows}
    for happened, kind in _occurrences(actions):
        for name, span in windows.items():
            if now - span <= happened <= now:
                if kind == "failed":
                    counts[name]["failed"] += 1
                else:
                    counts[name]["fired"] += 1
                    counts[name]["late"] += kind == "late"
    return counts


def fire_buckets(
    actions: Iterable[Action], now: datetime, minutes: int, bucket: int
) -> dict[str, Any]:
    """The last ``minutes`` in ``bucket``-minute buckets aligned to UTC, the last one holding
    ``now``: {"buckets": [{"start", "onTime", "late", "failed"}, ...]} oldest first."""
    if minutes < bucket or -(-minutes // bucket) > MAX_BUCKETS:
        raise ValidationFailed.of(
            "bucket",
            f"{minutes} minutes in {bucket}-minute buckets is not 1 to {MAX_BUCKETS} buckets",
            f"give a bucket of at most {minutes} and at least {-(-minutes // MAX_BUCKETS)} minutes",
        )
    size = timedelta(minutes=bucket)
    count = -(-minutes // bucket)
    epoch = datetime(1970, 1, 1, tzinfo=now.tzinfo)
    last = epoch + ((now - epoch) // size) * size
    first = last - (count - 1) * size
    tallies = [{"onTime": 0, "late": 0, "failed": 0} for _ in range(count)]
    key = {"on_time": "onTime", "late": "late", "failed": "failed"}
    for happened, kind in _occurrences(actions):
        if first <= happened < last + size:
            tallies[(happened - first) // size][key[kind]] += 1
    return {
        "buckets": [{"start": iso(first + n * size), **tally} for n, tally in enumerate(tallies)]
    }


def _occurrences(actions: Iterable[Action]) -> Iterator[tuple[datetime, str]]:
    for action in actions:
        for occurrence in action.history:
            kind = _kind(occurrence)
            if kind is not None:
                yield occurrence.actual_time, kind


def _kind(occurrence: Occurrence) -> str | None:
    if occurrence.outcome is Outcome.FAILED:
        return "failed"
    if occurrence.outcome is not Outcome.FIRED:
        return None
    lateness = occurrence.actual_time - occurrence.scheduled_time
    return "late" if lateness > LATE_AFTER else "on_time"
