"""EventPublisher over an EventBridge bus: lifecycle events from tickwork's own source."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tickwork.adapters.clients import AwsClients

if TYPE_CHECKING:
    from mypy_boto3_events import EventBridgeClient

    from tickwork.ports import OutboundEvent

__all__ = ["EventBridgePublisher", "EventNotAccepted"]

_PER_CALL = 10  # PutEvents takes at most 10 entries


class EventNotAccepted(Exception):
    """The bus refused an entry (PutEvents reports failures per entry, not as an error)."""


class EventBridgePublisher:
    def __init__(
        self,
        bus_name: str,
        source: str,
        client: EventBridgeClient | None = None,
        clients: AwsClients | None = None,
    ) -> None:
        self._bus = bus_name
        self._source = source
        self._given = client
        self._clients = clients or AwsClients()

    @property
    def _client(self) -> EventBridgeClient:
        if self._given is not None:
            return self._given
        client: EventBridgeClient = self._clients.client("events")
        return client

    def publish(self, event: OutboundEvent) -> None:
        self.publish_all([event])

    def publish_all(self, events: list[OutboundEvent]) -> None:
        refused: list[str] = []
        for start in range(0, len(events), _PER_CALL):
            chunk = events[start : start + _PER_CALL]
            response = self._client.put_events(
                Entries=[
                    {
                        "EventBusName": self._bus,
                        "Source": self._source,
                        "DetailType": str(event.detail_type),
                        "Detail": json.dumps(event.to_wire(), default=str),
                    }
                    for event in chunk
                ]
            )
            if response.get("FailedEntryCount"):
                refused += [
                    f"{event.detail_type}: {entry.get('ErrorCode')} {entry.get('ErrorMessage')}"
                    for event, entry in zip(chunk, response["Entries"], strict=False)
                    if entry.get("ErrorCode")
                ]
        if refused:
            raise EventNotAccepted("; ".join(refused))
