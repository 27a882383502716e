"""The bundle of ports a use case is called with, built by ``tickwork.bootstrap`` only.

Every port is a required field: a bundle with one missing cannot be made, wherever it is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from tickwork.config import Settings
from tickwork.domain.action import Limits
from tickwork.fulfillment.registry import FulfillmentRegistry
from tickwork.ports import (
    ActionQueries,
    ActionRecords,
    CalendarStore,
    Clock,
    ConcurrencySlots,
    CountTabs,
    EventPublisher,
    ExecutionStarter,
    FireTallies,
    Notifier,
    ParkedFires,
    RejectionLog,
    SecretSource,
    SignatureLedger,
    TargetClients,
)

__all__ = ["Dependencies"]


@dataclass(frozen=True)
class Dependencies:
    settings: Settings
    records: ActionRecords  # one action's record, written fenced on its version
    queries: ActionQueries  # pages, counts, actions by status in fire order
    parked: ParkedFires  # fires waiting in the table for the pump
    tallies: FireTallies  # fires recorded, by minute and hour
    tabs: CountTabs  # batches' counter changes not settled yet
    executions: ExecutionStarter  # the fire machine's: one fire each
    batches: ExecutionStarter  # the batch machine's: the fires due in one second
    publisher: EventPublisher
    clock: Clock
    slots: ConcurrencySlots
    secrets: SecretSource
    signatures: SignatureLedger  # signatures of inbound events already used
    notifier: Notifier
    targets: TargetClients  # clients for the AWS action types' targets
    registry: FulfillmentRegistry  # the action types, built over the ports above
    rejections: RejectionLog  # the last rejections, for a publisher that cannot subscribe
    calendars: CalendarStore  # named exclusion calendars schedules refer to

    def secret(self, secret_id: str | None) -> bytes | None:
        """The value of a configured secret; None when the setting names none."""
        return None if secret_id is None else self.secrets.get(secret_id)

    @property
    def limits(self) -> Limits:
        return Limits(
            history=self.settings.history_limit,
            transitions=self.settings.transition_limit,
            finished_ttl=self.settings.finished_ttl,
        )
