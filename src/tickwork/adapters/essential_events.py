"""An EventPublisher that sends only the essential events (``domain.events.ESSENTIAL``): what
a stack with ``LifecycleEvents=essential`` puts on its bus. The rest are dropped unsent."""

from __future__ import annotations

from tickwork.domain.events import ESSENTIAL
from tickwork.ports import EventPublisher, OutboundEvent

__all__ = ["EssentialEvents"]


class EssentialEvents:
    def __init__(self, publisher: EventPublisher) -> None:
        self._publisher = publisher

    def publish(self, event: OutboundEvent) -> None:
        if event.detail_type in ESSENTIAL:
            self._publisher.publish(event)

    def publish_all(self, events: list[OutboundEvent]) -> None:
        kept = [event for event in events if event.detail_type in ESSENTIAL]
        if kept:
            self._publisher.publish_all(kept)
