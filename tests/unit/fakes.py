"""In-memory fakes of the ports: they hold state, and tests assert on it.

``fake_dependencies`` builds through ``tickwork.bootstrap.build`` like every other caller, and
the type checker (``make typecheck``) holds each fake against the port it stands for.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tickwork import bootstrap
from tickwork.config import MAX_LAUNCH_AHEAD, Settings
from tickwork.dependencies import Dependencies
from tickwork.domain import page_cursor
from tickwork.domain.action import Action, Status
from tickwork.domain.errors import ActionConflict, LaunchRefused
from tickwork.domain.events import DetailType
from tickwork.domain.fire import FireAttempt, FireOrder
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.naming import execution_name
from tickwork.domain.page_cursor import Position
from tickwork.domain.selection import Selection
from tickwork.domain.times import parse_iso, to_epoch_ms
from tickwork.fulfillment.notifier import LoggingNotifier, Notifier
from tickwork.ports import ExecutionState, Spent

__all__ = [
    "FakeClock",
    "FakeExecutions",
    "FakePublisher",
    "FakeRepository",
    "FakeSecrets",
    "attempt",
    "fake_dependencies",
]


@dataclass
class FakeClock:
    current: datetime
    slept: list[float] = field(default_factory=list)

    def now(self) -> datetime:
        return self.current

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.current += timedelta(seconds=seconds)

    def advance(self, **delta: float) -> None:
        self.current += timedelta(**delta)


class FakeRepository:
    def __init__(self) -> None:
        self.items: dict[str, Action] = {}
        self.writes = 0
        self.fires: dict[tuple[str | None, bool, int], dict[str, int]] = {}

    def get(self, action_id: str) -> Action | None:
        return copy.deepcopy(self.items.get(action_id))

    def create(self, action: Action) -> None:
        if action.id in self.items:
            raise ActionConflict(action.id, "exists")
        self.items[action.id] = action
        self.writes += 1

    def save(self, action: Action, expected_version: int) -> None:
        current = self.items.get(action.id)
        if current is None or current.version != expected_version:
            raise ActionConflict(action.id, "version moved")
        self.items[action.id] = action
        self.writes += 1

    def delete(self, action_id: str) -> None:
        self.items.pop(action_id, None)
        self.writes += 1

    def tally_fire(self, group: str, at: datetime, kind: FireKind) -> None:
        minute = to_epoch_ms(at) // 60_000
        for scope in (None, group):
            for hourly, number in ((False, minute), (True, minute // 60)):
                counts = self.fires.setdefault((scope, hourly, number), {})
                counts[str(kind)] = counts.get(str(kind), 0) + 1

    def fire_tallies(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        return {
            n: dict(self.fires[(group, hourly, n)])
            for n in range(first, last + 1)
            if (group, hourly, n) in self.fires
        }

    def in_fire_order(
        self, status: Status | None = None, limit: int = 100, until: datetime | None = None
    ) -> list[Action]:
        ordered = sorted(self._ordered(Selection(status)), key=lambda a: (_position(a), a.id))
        due = [a for a in ordered if until is None or (a.execution_time or until) <= until]
        return due[:limit]

    def with_manual_fires(self, limit: int = 1000) -> list[Action]:
        return [a for a in self._ordered(Selection()) if a.manual][:limit]

    def parked_due(self, until: datetime, limit: int = 1000) -> list[str]:
        due = [
            (a.launch_at, a.id)
            for a in self.items.values()
            if a.is_parked and a.launch_at is not None and a.launch_at <= until
        ]
        return [action_id for _, action_id in sorted(due)][:limit]

    def page(
        self, selection: Selection, limit: int, cursor: str | None = None
    ) -> tuple[list[Action], str | None]:
        """As the table's indexes order them: by id when named or by attention, else by
        next fire."""
        ordered = self._ordered(selection)
        by_id = selection.named or selection.attention or selection.status is None
        after = page_cursor.decode(cursor, in_fire_order=not by_id)
        if after is not None:
            ordered = [a for a in ordered if self._key(a, by_id) > self._key_of(after, by_id)]
        chosen = ordered[:limit]
        if len(ordered) <= limit:
            return chosen, None
        last = chosen[-1]
        return chosen, page_cursor.encode(Position(last.id, None if by_id else _position(last)))

    def count(self, selection: Selection) -> dict[str, int]:
        chosen = self._ordered(selection)
        return {
            **{s: sum(a.status == s for a in chosen) for s in Status},
            "NEEDS_ATTENTION": sum(a.needs_attention for a in chosen),
        }

    def _ordered(self, selection: Selection) -> list[Action]:
        chosen = [
            a
            for a in self.items.values()
            if (selection.status is None or a.status == selection.status)
            and (selection.group is None or a.group == selection.group)
            and selection.matches_id(a.id)
            and (not selection.attention or a.needs_attention)
        ]
        by_id = selection.named or selection.attention or selection.status is None
        return sorted(chosen, key=lambda a: self._key(a, by_id))

    @staticmethod
    def _key(action: Action, by_id: bool) -> tuple[int, str]:
        return (0, action.id) if by_id else (_position(action), action.id)

    @staticmethod
    def _key_of(after: Position, by_id: bool) -> tuple[int, str]:
        return (0 if by_id else after.fire_ms or 0, after.action_id)


def _position(action: Action) -> int:
    return to_epoch_ms(action.execution_time) if action.execution_time else 0


class FakeExecutions:
    def __init__(self) -> None:
        self.refusals: list[str] = []  # codes the next starts are refused with, in turn
        self.started: dict[str, FireOrder] = {}
        self.stopped: list[str] = []
        self.ended: dict[str, ExecutionState] = {}  # name → how it ended; else RUNNING

    def execution_arn(self, name: str) -> str:
        return f"arn:aws:states:us-east-1:123456789012:execution:fire:{name}"

    def start(self, name: str, order: FireOrder) -> str:
        if self.refusals:
            raise LaunchRefused(name, self.refusals.pop(0))
        self.started.setdefault(name, order)
        return self.execution_arn(name)

    def stop(self, execution_arn: str, cause: str) -> None:
        self.stopped.append(execution_arn)
        name = execution_arn.rpartition(":")[2]
        if name in self.started:
            self.ended.setdefault(name, ExecutionState("ABORTED", error=None, cause=cause))

    def end(
        self, name: str, status: str, output: dict[str, Any] | None = None, **error: str
    ) -> None:
        self.ended[name] = ExecutionState(status, output, error.get("error"), error.get("cause"))

    def describe(self, name: str) -> ExecutionState | None:
        if name not in self.started:
            return None
        return self.ended.get(name, ExecutionState("RUNNING"))


class FakePublisher:
    def __init__(self) -> None:
        self.events: list[tuple[DetailType, dict[str, Any]]] = []

    def publish(self, detail_type: DetailType, detail: dict[str, Any]) -> None:
        self.events.append((detail_type, detail))

    def of_type(self, detail_type: DetailType) -> list[dict[str, Any]]:
        return [d for t, d in self.events if t == detail_type]


class NoTargets:
    """Unit tests fulfill no AWS action type: asking for a target's client is a test bug."""

    def client(self, service: str, role_arn: str | None = None) -> Any:
        raise AssertionError(f"a unit test asked for a {service} client: use the emulated stack")


class FakeSecrets:
    def __init__(self, values: dict[str, bytes] | None = None) -> None:
        self.values = dict(values or {})

    def get(self, secret_id: str) -> bytes:
        return self.values[secret_id]


class FakeSignatures:
    """The ledger of used signatures, in memory, with the DynamoDB adapter's answers."""

    def __init__(self) -> None:
        self.spent: dict[str, str | None] = {}
        self.latest: dict[str, int] = {}

    def advance(self, action_id: str, signed_at: int, until: datetime) -> bool:
        if self.latest.get(action_id, signed_at) > signed_at:
            return False
        self.latest[action_id] = signed_at
        return True

    def spend(self, digest: str, event_id: str | None, until: datetime) -> Spent:
        if digest not in self.spent:
            self.spent[digest] = event_id
            return Spent.FIRST
        if event_id and self.spent[digest] == event_id:
            return Spent.AGAIN
        return Spent.REPLAYED


def fake_dependencies(
    now: datetime, notifier: Notifier | None = None, **settings: Any
) -> Dependencies:
    # Every fire launches at once unless a test sets a horizon (parking has tests of its own).
    settings.setdefault("launch_ahead", MAX_LAUNCH_AHEAD)
    return bootstrap.build(
        Settings(table_name="t", event_bus_name="b", state_machine_arn="arn:sm", **settings),
        repository=FakeRepository(),
        executions=FakeExecutions(),
        publisher=FakePublisher(),
        clock=FakeClock(now),
        secrets=FakeSecrets(),
        signatures=FakeSignatures(),
        notifier=notifier or LoggingNotifier(),
        targets=NoTargets(),
    )


def attempt(
    action_id: str,
    occurrence: int,
    fire_at: str,
    name: str | None = None,
    retry: int = 0,
    leg: int = 0,
    generation: int = 1,
    repair: int = 0,
) -> FireAttempt:
    """What the Fulfill task would invoke the fulfill step with for this fire."""
    due = parse_iso(fire_at)
    order = FireOrder(action_id, generation, occurrence, due, due, leg, repair)
    return FireAttempt(
        order, name or execution_name(action_id, generation, occurrence, leg, repair), retry
    )
