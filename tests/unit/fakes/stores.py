"""The stores of actions in memory, one fake per port, sharing one dict of records as the
DynamoDB adapters share one table. tests/contract runs each fake and its adapter through the
same cases, so what a unit test sees from these is what production answers.

The counters and fire totals are kept as the adapters keep them — changed by the writes that
change them, a batch's carried on its records under its tab until the tab is settled — so a
count read here is off exactly when production's would be (a change added twice, or lost)."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tickwork.adapters.dynamodb_record import to_item
from tickwork.adapters.dynamodb_records import fits
from tickwork.adapters.dynamodb_rejections import MOST_SOURCES, bounded
from tickwork.domain import page_cursor
from tickwork.domain.action import LIVE, Action, Occurrence, Status
from tickwork.domain.errors import ActionConflict, CalendarConflict
from tickwork.domain.fire_tally import fire_kind
from tickwork.domain.identifiers import is_own_item
from tickwork.domain.page_cursor import Position
from tickwork.domain.schedule.calendar import Calendar
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso, to_epoch_ms
from tickwork.ports.stores import ATTENTION

__all__ = [
    "FakeCountTabs",
    "FakeFireTallies",
    "FakeParkedFires",
    "FakeQueries",
    "FakeRecords",
    "FakeStore",
    "FakeTabbedRecords",
]

_HOUR_MS = 3_600_000
_WATERMARK_LAG = timedelta(minutes=5)

# A counter change: ("count", scope, field) or ("fire", scope, hourly, number, kind) -> amount.
Changes = Counter[tuple[object, ...]]


@dataclass
class FakeTab:
    open: bool
    opened_at: datetime
    members: frozenset[str]
    settled: set[str] = field(default_factory=set)


class FakeStore:
    """The records every fake store reads (one action per id, as last written), the counters
    and totals their writes keep, and the batches' tabs."""

    def __init__(self) -> None:
        self.items: dict[str, Action] = {}
        self.writes = 0
        self.counters: Counter[tuple[str, str]] = Counter()  # (scope, field) -> count
        self.fires: dict[tuple[str | None, bool, int], Counter[str]] = {}
        self.carried: dict[str, dict[str, Changes]] = {}  # id -> tab -> changes not added
        self.tabs: dict[str, FakeTab] = {}
        # Called after every write has landed (a test may have it raise: a process that died).
        self.after_write: Callable[[], None] = lambda: None
        # Called before a record's conditional write is tried (a test may write first: a race).
        self.before_save: Callable[[Action], None] = lambda action: None

    def apply(self, changes: Changes) -> None:
        for key, amount in changes.items():
            if key[0] == "count":
                self.counters[(str(key[1]), str(key[2]))] += amount
            else:
                _, scope, hourly, number, kind = key
                where = (None if scope is None else str(scope), bool(hourly), int(str(number)))
                counts = self.fires.setdefault(where, Counter())
                counts[str(kind)] += amount

    def open_tab(self, tab: str) -> FakeTab | None:
        found = self.tabs.get(tab)
        return found if found is not None and found.open else None


def _counted_as(action: Action | None) -> tuple[str, str, bool] | None:
    if action is None:
        return None
    status = Status.PENDING if action.status == Status.IN_PROGRESS else action.status
    return (action.group, str(status), action.needs_attention)


def _changes(before: Action | None, after: Action | None, recorded: Occurrence | None) -> Changes:
    """What a write moving ``before`` to ``after`` (and recording ``recorded``) adds."""
    changes: Changes = Counter()
    for counted, sign in ((_counted_as(before), -1), (_counted_as(after), 1)):
        if counted is None:
            continue
        group, status, attention = counted
        for scope in ("*", f"g:{group}"):
            changes[("count", scope, status)] += sign
            if attention:
                changes[("count", scope, ATTENTION)] += sign
    kind = None if recorded is None else fire_kind(recorded)
    if recorded is not None and kind is not None and after is not None:
        minute = to_epoch_ms(recorded.actual_time) // 60_000
        for fire_scope in (None, after.group):
            for hourly, number in ((False, minute), (True, minute // 60)):
                changes[("fire", fire_scope, hourly, number, str(kind))] += 1
    return Counter({key: amount for key, amount in changes.items() if amount})


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
        if is_own_item(action_id):
            return None  # as the adapter: the stack's own items are no actions
        return copy.deepcopy(self.items.get(action_id))

    def create(self, action: Action) -> None:
        if action.id in self.items:
            raise ActionConflict(action.id, "exists")
        fits(to_item(action))
        self.store.apply(_changes(None, action, None))
        self._write(action)

    def save(
        self, action: Action, expected_version: int, recorded: Occurrence | None = None
    ) -> None:
        self.store.before_save(action)
        current = self._replaced(action, expected_version)
        self._settle_carried(action.id)
        self.store.apply(_changes(current, action, recorded))
        self._write(action)

    def delete(self, action_id: str) -> None:
        if action_id in self.items:
            self._settle_carried(action_id)
            self.store.apply(_changes(self.items[action_id], None, None))
        self.items.pop(action_id, None)
        self.store.writes += 1

    def _settle_carried(self, action_id: str) -> None:
        """What the stored version carries: added now for a tab still open, else dropped."""
        for tab, changes in self.store.carried.pop(action_id, {}).items():
            open_tab = self.store.open_tab(tab)
            if open_tab is not None and action_id not in open_tab.settled:
                self.store.apply(changes)
                open_tab.settled.add(action_id)

    def _replaced(self, action: Action, expected_version: int) -> Action:
        """The stored version ``action`` may replace: still ``expected_version``, and the new
        one no larger than DynamoDB holds (as the adapter refuses)."""
        current = self.items.get(action.id)
        if current is None or current.version != expected_version:
            raise ActionConflict(action.id, "version moved")
        fits(to_item(action))
        return current

    def _write(self, action: Action) -> None:
        self.items[action.id] = copy.deepcopy(action)
        self.store.writes += 1
        self.store.after_write()


class FakeTabbedRecords(FakeRecords):
    """A batch attempt's writes: counted as every write is (the adapter's fold of the stream,
    caught up at once here); its tab carries nothing."""

    def settle(self) -> int:
        return 0


class FakeCountTabs:
    def __init__(self, store: FakeStore) -> None:
        self.store = store
        self.put_on_bus: dict[str, set[int]] = {}

    def note_announced(self, batch: str, members: list[int], now: datetime) -> None:
        self.put_on_bus.setdefault(batch, set()).update(members)

    def announced(self, batch: str) -> set[int]:
        return set(self.put_on_bus.get(batch, set()))

    def open(self, tab: str, attempt: int, members: list[str], now: datetime) -> FakeTabbedRecords:
        return FakeTabbedRecords(self.store)

    def open_tabs(self, opened_by: datetime, limit: int = 1000) -> list[str]:
        return sorted(
            tab
            for tab, state in self.store.tabs.items()
            if state.open and state.opened_at <= opened_by
        )[:limit]

    def settle(self, tab: str) -> int:
        state = self.store.tabs.get(tab)
        if state is None:
            return 0
        carried = {
            action_id: self.store.carried.get(action_id, {}).get(tab, Counter())
            for action_id in state.members
        }
        return _settle(self.store, tab, carried)


def _settle(store: FakeStore, tab: str, due: dict[str, Changes]) -> int:
    state = store.open_tab(tab)
    if state is None:
        return 0
    waiting = {i: c for i, c in due.items() if i not in state.settled and c}
    for action_id, changes in waiting.items():
        store.apply(changes)
        state.settled.add(action_id)
    state.open = False
    return len(waiting)


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

    def naming_calendar(self, name: str) -> list[Action]:
        chosen = sorted(
            (
                a
                for a in self.store.items.values()
                if a.status in LIVE and a.schedule.calendar and a.schedule.calendar.name == name
            ),
            key=lambda a: a.id,
        )
        return [copy.deepcopy(a) for a in chosen]

    def with_manual_fires(self, limit: int = 1000) -> list[Action]:
        chosen = sorted(
            (a for a in self.store.items.values() if a.manual.in_flight or a.backfill),
            key=lambda a: a.id,
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
        """All or a group: from the counters, as the adapter counts (IN_PROGRESS from the
        records, counted as PENDING by the counters); by id prefix or need of attention: from
        the records, as the adapter reads its index."""
        if selection.status is not None:
            raise ValueError("a count is by status already: count a selection without one")
        chosen = self._chosen(selection, by_id=True)
        if selection.prefix is not None or selection.attention:
            return {
                **{str(s): sum(a.status == s for a in chosen) for s in Status},
                ATTENTION: sum(a.needs_attention or selection.attention for a in chosen),
            }
        scope = "*" if selection.group is None else f"g:{selection.group}"
        in_flight = sum(a.status == Status.IN_PROGRESS for a in chosen)
        totals = {str(s): self.store.counters[(scope, str(s))] for s in Status}
        totals[Status.PENDING] -= in_flight
        totals[Status.IN_PROGRESS] = in_flight
        counts = {name: max(0, value) for name, value in totals.items()}
        return {**counts, ATTENTION: max(0, self.store.counters[(scope, ATTENTION)])}

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
    """Parked fires due for launch, with the adapter's watermarks: a fire parked near (in the
    Parked index) is found from an hour watermark — once a call has looked up to ``until``, a
    later one does not look further back than five minutes before it (nor than the earliest
    hour that still held a due fire); a fire parked far (``Action.parked_far``, found by its
    fire time) from a watermark per shard that ``advance`` moves past what a run finished
    (here in launch moments, which follow fire times in order)."""

    def __init__(self, store: FakeStore) -> None:
        self.store = store
        self.from_hour: int | None = None
        self.launched_to: dict[int, int] = {}  # shard -> launch moment (ms) passed

    def due(self, until: datetime, limit: int = 1000) -> list[str]:
        return [action_id for _, action_id in self.due_moments(until, limit)]

    shards = range(4)

    def _shard(self, action_id: str) -> int:
        return sum(action_id.encode()) % len(self.shards)

    def advance(
        self, until: datetime, held: list[tuple[int, str | None]], shard: int | None = None
    ) -> None:
        shards = list(self.shards) if shard is None else [shard]
        marks = dict.fromkeys(shards, to_epoch_ms(until) + 1)
        for moment, action_id in held:
            for k in shards if action_id is None else [self._shard(action_id)]:
                if k in marks:
                    marks[k] = min(marks[k], moment)
        for k, mark in marks.items():
            self.launched_to[k] = max(self.launched_to.get(k, mark), mark)

    def passed(self, parked: list[Action]) -> set[str]:
        return {
            a.id
            for a in parked
            if a.parked_far
            and a.launch_at is not None
            and to_epoch_ms(a.launch_at) < self.launched_to.get(self._shard(a.id), 0)
        }

    def due_moments(
        self, until: datetime, limit: int = 1000, shard: int | None = None
    ) -> list[tuple[int, str]]:
        until_ms = to_epoch_ms(until)
        first = self.from_hour if self.from_hour is not None else until_ms // _HOUR_MS - 1

        def found(a: Action) -> bool:
            launch = to_epoch_ms(a.launch_at) if a.launch_at is not None else None
            if not a.is_parked or launch is None or launch > until_ms:
                return False
            if shard is not None and self._shard(a.id) != shard:
                return False
            if a.parked_far:  # (a new pump's first look: from the hour before, as near)
                return launch >= self.launched_to.get(self._shard(a.id), first * _HOUR_MS)
            return first * _HOUR_MS <= launch

        due = sorted(
            (to_epoch_ms(a.launch_at), a.id)
            for a in self.store.items.values()
            if found(a) and a.launch_at is not None
        )
        if shard is not None:  # a worker's: the watermark stays
            return due[:limit]
        near = [moment for moment, i in due if not self.store.items[i].parked_far]
        settled = to_epoch_ms(until - _WATERMARK_LAG) // _HOUR_MS
        earliest = near[0] // _HOUR_MS if near else settled
        self.from_hour = max(min(earliest, settled), first)
        return due[:limit]


class FakeFireTallies:
    """The fire totals the records' writes keep (``FakeStore.fires``)."""

    def __init__(self, store: FakeStore) -> None:
        self.store = store

    def read(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        fires = self.store.fires
        return {
            n: {kind: count for kind, count in fires[(group, hourly, n)].items() if count}
            for n in range(first, last + 1)
            if (group, hourly, n) in fires and any(fires[(group, hourly, n)].values())
        }


def _fire_ms(action: Action) -> int:
    return to_epoch_ms(action.execution_time) if action.execution_time else 0


def _key(action: Action, by_id: bool) -> tuple[int, str]:
    return (0, action.id) if by_id else (_fire_ms(action), action.id)


class FakeRejections:
    """RejectionLog in memory: the last ``keep`` of each sender, numbered as its ring kept them;
    the unfiltered view reads the ``MOST_SOURCES`` senders refused last, as the adapter does."""

    def __init__(self, keep: int = 100) -> None:
        self._keep = keep
        self.rings: dict[str | None, list[dict[str, Any]]] = {}
        self.seen: dict[str, str] = {}  # source -> when it was last refused

    @property
    def kept(self) -> list[dict[str, Any]]:
        """Every entry kept, oldest first."""
        entries = [e for ring in self.rings.values() for e in ring]
        return sorted(entries, key=lambda e: (e["at"], e["number"]))

    def keep(self, rejection: dict[str, Any], at: datetime) -> None:
        if self._keep <= 0:
            return
        source = rejection.get("source") or None
        ring = self.rings.setdefault(source, [])
        entry = {k: v for k, v in bounded(rejection).items() if v is not None and v != []}
        ring.append({"number": len(ring) + 1, "at": iso(at), **entry})
        if source is not None:
            self.seen[source] = iso(at)

    def latest(self, limit: int, source: str | None = None) -> list[dict[str, Any]]:
        if self._keep <= 0 or limit <= 0:
            return []
        if source is not None:
            rings = [self.rings.get(source, [])]
        else:
            recent = sorted(self.seen, key=lambda s: self.seen[s], reverse=True)[:MOST_SOURCES]
            rings = [self.rings.get(None, []), *(self.rings[s] for s in recent)]
        newest = [e for ring in rings for e in ring[-self._keep :]]
        return sorted(newest, key=lambda e: (e["at"], e["number"]), reverse=True)[:limit]


class FakeCalendars:
    """CalendarStore in memory, with the adapter's versioned writes."""

    def __init__(self) -> None:
        self.calendars: dict[str, Calendar] = {}

    def get(self, name: str) -> Calendar | None:
        return self.calendars.get(name)

    def put(self, calendar: Calendar) -> None:
        before = self.calendars.get(calendar.name)
        if (before.version if before else 0) != calendar.version - 1:
            raise CalendarConflict(calendar.name)
        self.calendars[calendar.name] = calendar

    def delete(self, name: str) -> bool:
        return self.calendars.pop(name, None) is not None

    def all(self) -> list[Calendar]:
        return [self.calendars[name] for name in sorted(self.calendars)]
