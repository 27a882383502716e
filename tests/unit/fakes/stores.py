"""The stores of actions in memory, one fake per port, sharing one dict of records as the
DynamoDB adapters share one table. tests/contract runs each fake and its adapter through the
same cases, so what a unit test sees from these is what production answers."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta

from tickwork.domain import page_cursor
from tickwork.domain.action import Action, Status
from tickwork.domain.errors import ActionConflict
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.page_cursor import Position
from tickwork.domain.selection import Selection
from tickwork.domain.times import to_epoch_ms

__all__ = [
    "FakeCountingRecords",
    "FakeFireTallies",
    "FakeParkedFires",
    "FakeQueries",
    "FakeRecords",
    "FakeStore",
]

_HOUR_MS = 3_600_000
_WATERMARK_LAG = timedelta(minutes=5)


class FakeStore:
    """The records every fake store reads: one action per id, as last written."""

    def __init__(self) -> None:
        self.items: dict[str, Action] = {}
        self.writes = 0
        self.due_on: dict[str, str] = {}  # id -> the tab its last write left a count change on
        self.counted: dict[tuple[str, int], set[str]] = {}  # (tab, attempt) -> ids it added


class FakeRecords:
    def __init__(self, store: FakeStore | None = None) -> None:
        self.store = store or FakeStore()

    @property
    def items(self) -> dict[str, Action]:
        return self.store.items

    @property
    def writes(self) -> int:
        return self.store.writes

    def get(self, action_id: str) -> Action | None:
        return copy.deepcopy(self.items.get(action_id))

    def create(self, action: Action) -> None:
        if action.id in self.items:
            raise ActionConflict(action.id, "exists")
        self._write(action)

    def save(self, action: Action, expected_version: int) -> None:
        current = self.items.get(action.id)
        if current is None or current.version != expected_version:
            raise ActionConflict(action.id, "version moved")
        self._write(action)

    def delete(self, action_id: str) -> None:
        self.items.pop(action_id, None)
        self.store.writes += 1

    def _write(self, action: Action) -> None:
        self.items[action.id] = copy.deepcopy(action)
        self.store.writes += 1
        self.store.due_on.pop(action.id, None)

    def counting_later(self, tab: str, attempt: int) -> FakeCountingRecords:
        return FakeCountingRecords(self.store, tab, attempt)


class FakeCountingRecords(FakeRecords):
    """Counts are read from the records themselves here, so they are always exact; this keeps
    the adapter's bookkeeping (what a tab holds, what each attempt added) to answer as it
    does."""

    def __init__(self, store: FakeStore, tab: str, attempt: int) -> None:
        super().__init__(store)
        self.tab = tab
        self.attempt = attempt
        self.due: set[str] = set()

    def save(self, action: Action, expected_version: int) -> None:
        before = self.items.get(action.id)
        super().save(action, expected_version)
        if before is not None and _counted_as(before) != _counted_as(action):
            self.due.add(action.id)
            self.store.due_on[action.id] = self.tab

    def recover(self, action_id: str) -> None:
        if self.store.due_on.get(action_id) == self.tab:
            self.due.add(action_id)

    def add_counts(self) -> int:
        counted = set().union(
            *(self.store.counted.get((self.tab, a), set()) for a in range(self.attempt))
        )
        waiting = self.due - counted
        self.store.counted.setdefault((self.tab, self.attempt), set()).update(waiting)
        self.due -= waiting
        return len(waiting)


def _counted_as(action: Action) -> tuple[str, str, bool, int]:
    status = Status.PENDING if action.status == Status.IN_PROGRESS else action.status
    day = action.ttl // 86_400 if action.ttl is not None else 0
    return (action.group, str(status), action.needs_attention, day)


class FakeQueries:
    """Answers as the table's indexes do: by status in fire order (actions without a next fire
    time are in no such index), by name or need of attention in id order."""

    def __init__(self, store: FakeStore) -> None:
        self.store = store

    def in_fire_order(
        self, status: Status, limit: int = 100, until: datetime | None = None
    ) -> list[Action]:
        chosen = self._chosen(Selection(status), by_id=False)
        due = [a for a in chosen if until is None or (a.execution_time or until) <= until]
        return [copy.deepcopy(a) for a in due[:limit]]

    def with_manual_fires(self, limit: int = 1000) -> list[Action]:
        chosen = sorted(
            (a for a in self.store.items.values() if a.manual.in_flight), key=lambda a: a.id
        )
        return [copy.deepcopy(a) for a in chosen[:limit]]

    def page(
        self, selection: Selection, limit: int, cursor: str | None = None
    ) -> tuple[list[Action], str | None]:
        by_id = selection.named or selection.attention or selection.status is None
        after = page_cursor.decode(cursor, in_fire_order=not by_id)
        chosen = self._chosen(selection, by_id)
        if after is not None:
            mark = (0 if by_id else after.fire_ms or 0, after.action_id)
            chosen = [a for a in chosen if _key(a, by_id) > mark]
        page = [copy.deepcopy(a) for a in chosen[:limit]]
        if len(chosen) <= limit:
            return page, None
        last = page[-1]
        return page, page_cursor.encode(Position(last.id, None if by_id else _fire_ms(last)))

    def count(self, selection: Selection) -> dict[str, int]:
        if selection.status is not None:
            raise ValueError("a count is by status already: count a selection without one")
        chosen = self._chosen(selection, by_id=True)
        return {
            **{str(s): sum(a.status == s for a in chosen) for s in Status},
            "NEEDS_ATTENTION": sum(a.needs_attention for a in chosen),
        }

    def _chosen(self, selection: Selection, by_id: bool) -> list[Action]:
        chosen = [
            a
            for a in self.store.items.values()
            if (selection.status is None or a.status == selection.status)
            and (selection.group is None or a.group == selection.group)
            and selection.matches_id(a.id)
            and (not selection.attention or a.needs_attention)
            and (by_id or a.execution_time is not None)
        ]
        return sorted(chosen, key=lambda a: _key(a, by_id))


class FakeParkedFires:
    """Parked fires due for launch, with the adapter's watermark: once a call has looked up to
    ``until``, a later one does not look further back than five minutes before it (nor than
    the earliest hour that still held a due fire)."""

    def __init__(self, store: FakeStore) -> None:
        self.store = store
        self.from_hour: int | None = None

    def due(self, until: datetime, limit: int = 1000) -> list[str]:
        until_ms = to_epoch_ms(until)
        first = self.from_hour if self.from_hour is not None else until_ms // _HOUR_MS - 24
        due = sorted(
            (to_epoch_ms(a.launch_at), a.id)
            for a in self.store.items.values()
            if a.is_parked
            and a.launch_at is not None
            and first * _HOUR_MS <= to_epoch_ms(a.launch_at) <= until_ms
        )
        settled = to_epoch_ms(until - _WATERMARK_LAG) // _HOUR_MS
        earliest = due[0][0] // _HOUR_MS if due else settled
        self.from_hour = max(min(earliest, settled), first)
        return [action_id for _, action_id in due[:limit]]


class FakeFireTallies:
    def __init__(self) -> None:
        self.fires: dict[tuple[str | None, bool, int], dict[str, int]] = {}

    def add(self, group: str, at: datetime, kind: FireKind, count: int = 1) -> None:
        minute = to_epoch_ms(at) // 60_000
        for scope in (None, group):
            for hourly, number in ((False, minute), (True, minute // 60)):
                counts = self.fires.setdefault((scope, hourly, number), {})
                counts[str(kind)] = counts.get(str(kind), 0) + count

    def read(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        return {
            n: dict(self.fires[(group, hourly, n)])
            for n in range(first, last + 1)
            if (group, hourly, n) in self.fires
        }


def _fire_ms(action: Action) -> int:
    return to_epoch_ms(action.execution_time) if action.execution_time else 0


def _key(action: Action, by_id: bool) -> tuple[int, str]:
    return (0, action.id) if by_id else (_fire_ms(action), action.id)
