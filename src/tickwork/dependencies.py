"""The bundle of ports a use case is called with; built once per cold start by ``wiring``."""

from __future__ import annotations

from dataclasses import dataclass

from tickwork.config import Settings
from tickwork.domain.action import Limits
from tickwork.fulfillment.registry import FulfillmentRegistry
from tickwork.ports import (
    ActionRepository,
    Clock,
    ConcurrencySlots,
    EventPublisher,
    ExecutionStarter,
)

__all__ = ["Dependencies"]


@dataclass(frozen=True)
class Dependencies:
    settings: Settings
    repository: ActionRepository
    executions: ExecutionStarter
    publisher: EventPublisher
    registry: FulfillmentRegistry
    clock: Clock
    slots: ConcurrencySlots | None = None  # set when any action type has a concurrency limit

    @property
    def limits(self) -> Limits:
        return Limits(history=self.settings.history_limit, finished_ttl=self.settings.finished_ttl)
