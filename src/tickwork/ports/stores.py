"""The stores of actions, one per job, all over one table in production
(adapters/dynamodb_*.py): the records themselves, the queries over many of them, the parked
fires the pump launches, and the tallies of recorded fires."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from tickwork.domain.action import Action, Status
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.selection import Selection

__all__ = ["ActionQueries", "ActionRecords", "CountingRecords", "FireTallies", "ParkedFires"]


class ActionRecords(Protocol):
    """One action's record, read and written whole; every write fenced on the version read."""

    def get(self, action_id: str) -> Action | None:
        """The record as last written (a consistent read), or None."""

    def create(self, action: Action) -> None:
        """Write a new record; raises ``ActionConflict`` if the id exists."""

    def save(self, action: Action, expected_version: int) -> None:
        """Replace the record if its version is still ``expected_version``, else raise
        ``ActionConflict`` (it moved on, or is gone)."""

    def delete(self, action_id: str) -> None:
        """Remove the record (a purge); harmless if it is gone."""

    def counting_later(self, tab: str, attempt: int) -> CountingRecords:
        """The same records, but a write that changes what an action is counted as leaves
        that change on the tab ``tab`` (a batch execution's name) instead of writing the
        counters in a transaction of its own: ``add_counts`` adds the tab's changes at once.
        ``attempt``: the how-many-th run of the tab's task this is (0 first)."""


class CountingRecords(ActionRecords, Protocol):
    """Records whose counter changes wait on a tab, added once for all (a batch's fires).

    Exact across crashes: each record written carries its own pending change, so a later
    attempt of the same tab finds what an earlier one wrote (``recover``) and adds only what
    no attempt added yet."""

    def recover(self, action_id: str) -> None:
        """The record was written on this tab by an earlier attempt: take up its change,
        unless an earlier attempt's ``add_counts`` added it."""

    def add_counts(self) -> int:
        """Add every change the tab holds to the counters; how many records it counted."""


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
        (``NEEDS_ATTENTION``). A selection by status is refused (``ValueError``): the answer is
        already by status."""

    def with_manual_fires(self, limit: int = 1000) -> list[Action]:
        """Actions with fires asked for by hand still in flight, in id order."""


class ParkedFires(Protocol):
    """The fires further away than the horizon, waiting in the table for the pump."""

    def due(self, until: datetime, limit: int = 1000) -> list[str]:
        """Ids of the parked fires whose launch moment is at or before ``until``, earliest
        first. Each call moves a watermark: a fire parked for launch more than five minutes
        before ``until`` may not be found by later calls."""


class FireTallies(Protocol):
    """How many fires were recorded, on time, late or failed, per minute and per hour."""

    def add(self, group: str, at: datetime, kind: FireKind, count: int = 1) -> None:
        """Count ``count`` recorded fires of ``kind`` that happened ``at``'s minute, in all and
        in ``group``, by minute and by hour (best effort: statistics, never the record of a
        fire)."""

    def read(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        """The counts of minutes (or hours) ``first``..``last`` since the epoch, all or of a
        group: {minute: {"onTime": n, "late": n, "failed": n}} for those with any."""
