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
    SecretSource,
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
    secrets: SecretSource | None = None

    def secret(self, secret_id: str | None) -> bytes | None:
        if secret_id is None:
            return None
        if self.secrets is None:
            raise RuntimeError(f"a secret is configured ({secret_id}) but no secret source")
        return self.secrets.get(secret_id)

    @property
    def limits(self) -> Limits:
        return Limits(history=self.settings.history_limit, finished_ttl=self.settings.finished_ttl)
