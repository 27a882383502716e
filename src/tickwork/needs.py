"""What a use case may ask of the ports, one capability each: a use case's signature names the
capabilities it uses (``fire.needs``, ``steering.needs`` combine them), so a reader sees from it
what the function may read and write. ``tickwork.dependencies.Dependencies`` has them all.

Read-only properties, so that the frozen bundle (and any narrower one) satisfies them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tickwork.config import Settings
    from tickwork.domain.action import Limits
    from tickwork.fulfillment.registry import FulfillmentRegistry
    from tickwork.ports.clock import Clock
    from tickwork.ports.events import EventPublisher
    from tickwork.ports.executions import ExecutionStarter
    from tickwork.ports.signatures import SignatureLedger
    from tickwork.ports.slots import ConcurrencySlots
    from tickwork.ports.stores import (
        ActionQueries,
        ActionRecords,
        CalendarStore,
        CountTabs,
        ParkedFires,
        RejectionLog,
    )
    from tickwork.ports.targets import TargetClients

__all__ = [
    "Announces",
    "Configured",
    "KeepsRejections",
    "ReachesTargets",
    "ReadsCalendars",
    "ReadsTypes",
    "Starts",
    "TakesSlots",
    "TellsTime",
    "UsesParked",
    "UsesQueries",
    "UsesRecords",
    "UsesSignatures",
    "UsesTabs",
]


class Configured(Protocol):
    """The stack's settings, the secrets they name, and the bounds of a record."""

    @property
    def settings(self) -> Settings: ...

    @property
    def limits(self) -> Limits: ...

    def secret(self, secret_id: str | None) -> bytes | None: ...


class TellsTime(Protocol):
    @property
    def clock(self) -> Clock: ...


class UsesRecords(Protocol):
    """One action's record: read, and written through ``fire.writes``."""

    @property
    def records(self) -> ActionRecords: ...


class Announces(Protocol):
    @property
    def publisher(self) -> EventPublisher: ...


class Starts(Protocol):
    """The stack's two machines: their executions started, described, stopped."""

    @property
    def executions(self) -> ExecutionStarter: ...

    @property
    def batches(self) -> ExecutionStarter: ...


class UsesQueries(Protocol):
    @property
    def queries(self) -> ActionQueries: ...


class UsesParked(Protocol):
    @property
    def parked(self) -> ParkedFires: ...


class UsesTabs(Protocol):
    @property
    def tabs(self) -> CountTabs: ...


class ReadsCalendars(Protocol):
    @property
    def calendars(self) -> CalendarStore: ...


class ReadsTypes(Protocol):
    """The action types: their models, and their fulfillments."""

    @property
    def registry(self) -> FulfillmentRegistry: ...


class ReachesTargets(Protocol):
    """Clients for targets: the AWS action types', and a dead-letter queue."""

    @property
    def targets(self) -> TargetClients: ...


class TakesSlots(Protocol):
    @property
    def slots(self) -> ConcurrencySlots: ...


class KeepsRejections(Protocol):
    @property
    def rejections(self) -> RejectionLog: ...


class UsesSignatures(Protocol):
    @property
    def signatures(self) -> SignatureLedger: ...
