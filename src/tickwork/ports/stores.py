"""The stores of actions, one per job, all over one table in production
(adapters/dynamodb_*.py): the records themselves, the queries over many of them, the parked
fires the pump launches, and the tallies of recorded fires."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from tickwork.domain.action import Action, Occurrence, Status
from tickwork.domain.schedule.calendar import Calendar
from tickwork.domain.selection import Selection

# What ``ActionQueries.count`` names the actions that need attention, beside the statuses.
ATTENTION = "NEEDS_ATTENTION"

__all__ = [
    "ATTENTION",
    "ActionQueries",
    "ActionRecords",
    "CountTabs",
    "FireTallies",
    "ParkedFires",
    "RejectionLog",
    "TabbedRecords",
]


class ActionRecords(Protocol):
    """One action's record, read and written whole; every write fenced on the version read.

    A write changes the counters (what the action counts as: status, group, need of attention)
    and the fire totals (the fire it records) exactly once, with the record, whatever crashes
    where (docs/protocol.md, "Counts and fire totals")."""

    def get(self, action_id: str) -> Action | None:
        """The record as last written (a consistent read), or None — always None for an id of
        the stack's own items (``#…``: counters, tabs, calendars, the pump), which are no
        action's."""

    def create(self, action: Action) -> None:
        """Write a new record; raises ``ActionConflict`` if the id exists."""

    def save(
        self, action: Action, expected_version: int, recorded: Occurrence | None = None
    ) -> None:
        """Replace the record if its version is still ``expected_version``, else raise
        ``ActionConflict`` (it moved on, or is gone). ``recorded``: the fire this write records
        (its history's newest entry), counted in the fire totals."""

    def delete(self, action_id: str) -> None:
        """Remove the record (a purge); harmless if it is gone."""


class TabbedRecords(ActionRecords, Protocol):
    """Records whose counter changes are carried on a tab, added once for all (a batch's)."""

    def settle(self) -> int:
        """Settle the tab: add every change its writes carry that no one added yet; how many
        records it counted."""


class CountTabs(Protocol):
    """The tabs of batches: opened by a batch's task, found open after their batch ended, and
    settled (exactly once)."""

    def open(self, tab: str, attempt: int, members: list[str], now: datetime) -> TabbedRecords:
        """The records, as one attempt (0 first) of the batch ``tab`` (its execution's name)
        with ``members`` (their action ids) writes them, from ``now`` on: a write's counter and
        total changes are carried on the record under the tab instead of a transaction of its
        own, and ``settle`` adds them at once."""

    def open_tabs(self, opened_by: datetime, limit: int = 1000) -> list[str]:
        """Tabs opened at or before ``opened_by`` and still open (``<batch>#<attempt>``)."""

    def settle(self, tab: str) -> int:
        """Add what the tab's members still carry under it, once, and close the tab: how many
        records it counted (0: settled already)."""

    def note_announced(self, batch: str, members: list[int], now: datetime) -> None:
        """The events (ticks, failure reports) of these members of the batch (its execution's
        name; each member by its place in the batch's order, from 0) were put on the bus: kept
        for a week, so that a retried or redriven task of the batch does not put them again."""

    def announced(self, batch: str) -> set[int]:
        """The members of the batch (by place) whose events its tasks noted as put on the bus."""


class ActionQueries(Protocol):
    """Reads over many actions, each from an index: never a scan of the table."""

    def in_fire_order(
        self, status: Status, limit: int = 100, until: datetime | None = None
    ) -> list[Action]:
        """The first ``limit`` actions of ``status`` by next fire time, then id; only those
        due by ``until`` when given."""

    def page(
        self, selection: Selection, limit: int, cursor: str | None = None
    ) -> tuple[list[Action], str | None]:
        """One page of the selection and an opaque cursor for the next (None at the end): by
        status alone in fire order (then id), otherwise in id order. A cursor this store did
        not issue for that order is refused (``ValidationFailed`` naming ``cursor``)."""

    def count(self, selection: Selection) -> dict[str, int]:
        """How many of the selection (all, a group, an id prefix, or those needing attention)
        are in each status (every status named), and how many need attention
        (``ATTENTION``: ``NEEDS_ATTENTION``). A selection by status is refused (``ValueError``):
        the answer is already by status."""

    def naming_calendar(self, name: str) -> list[Action]:
        """The live actions whose schedule names the calendar ``name``, in id order (from the
        ByCalendar index: never a scan)."""
        ...

    def with_manual_fires(self, limit: int = 1000) -> list[Action]:
        """Actions with fires asked for by hand still in flight, or a backfill waiting, in id
        order."""


class ParkedFires(Protocol):
    """The fires further away than the horizon, waiting in the table for the pump."""

    def due(self, until: datetime, limit: int = 1000) -> list[str]:
        """Ids of the parked fires whose launch moment is at or before ``until``, earliest
        first. Each call moves a watermark: a fire parked for launch more than five minutes
        before ``until`` may not be found by later calls."""

    def due_moments(
        self, until: datetime, limit: int = 1000, shard: int | None = None
    ) -> list[tuple[int, str]]:
        """``due``, each id with its launch moment (ms since the epoch); ``shard`` (one of
        ``shards``): that shard's only, the watermark left where it is."""

    def advance(
        self, until: datetime, held: list[tuple[int, str | None]], shard: int | None = None
    ) -> None:
        """After launching what ``due_moments(until, shard=shard)`` found: the fires read and
        not finished (``held``: each launch moment with its id; None for every shard's) are
        found again by the next call; the others, launched or moved on, need not be."""

    def passed(self, parked: list[Action]) -> set[str]:
        """Of these records, the ids of those parked far (``Action.parked_far``) that the
        watermark of their shard has passed: the pump finished them (launched without naming
        an execution, or found moved on, or handed to a worker, which parks due now what it
        did not launch). One read of the watermarks."""

    @property
    def shards(self) -> range:
        """The shards the parked fires are spread over (a pump worker reads one)."""


class FireTallies(Protocol):
    """How many fires were recorded, on time, late or failed, per minute and per hour (counted
    by the record writes that record them: ``ActionRecords.save``)."""

    def read(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        """The counts of minutes (or hours) ``first``..``last`` since the epoch, all or of a
        group: {minute: {"onTime": n, "late": n, "failed": n}} for those with any."""


class RejectionLog(Protocol):
    """The stack's last rejections (Starts, steering events, reports and waiting changes it
    refused), kept so a publisher that cannot subscribe to ``Schedule Rejected`` still sees
    them: ``tickwork rejections``, ``GET /rejections``, the dashboard. Each sender (its
    EventBridge ``source``) has a ring of its own of ``KeepRejections``, so one publisher's
    refusals never push out another's."""

    def keep(self, rejection: dict[str, Any], at: datetime) -> None:
        """Keep one (the ``Schedule Rejected`` detail, bounded) in the ring of its ``source``
        (none: the ring of refusals no sender is known for), the oldest there giving way."""
        ...

    def latest(self, limit: int, source: str | None = None) -> list[dict[str, Any]]:
        """The newest first — of every sender, or of ``source`` alone — each with ``at`` (ISO
        8601 UTC) and ``number`` (1, 2, ... as its sender's ring kept them)."""
        ...


class CalendarStore(Protocol):
    """The stack's named exclusion calendars (``tickwork calendar``, ``/calendars``)."""

    def get(self, name: str) -> Calendar | None:
        """The calendar as stored, with the seal it carries (unchecked: its readers check it,
        ``fire.calendar_reads``); ``CalendarTampered`` when what is stored cannot be read."""
        ...

    def put(self, calendar: Calendar) -> None:
        """Write it, with its seal: a new one (version 1) only if none has the name, a later
        version only over the one before (``CalendarConflict`` otherwise)."""
        ...

    def delete(self, name: str) -> bool:
        """Remove it; False when there was none."""
        ...

    def all(self) -> list[Calendar]:
        """Every calendar, by name (one whose stored content cannot be read is left out)."""
        ...
