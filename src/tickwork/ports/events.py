"""Putting tickwork's own events (ticks, failure reports, lifecycle) on its bus."""

from __future__ import annotations

from typing import Any, Protocol

from tickwork.domain.events import DetailType

__all__ = ["EventPublisher", "OutboundEvent"]


class OutboundEvent(Protocol):
    """An event tickwork emits: a ``Tick``, a ``FireFailure`` or an announcement
    (domain.announcements), each naming its detail-type and writing its detail."""

    @property
    def detail_type(self) -> DetailType: ...

    def to_wire(self) -> dict[str, Any]: ...


class EventPublisher(Protocol):
    def publish(self, event: OutboundEvent) -> None:
        """Put the event on the bus; raises when the bus did not accept it."""

    def publish_all(self, events: list[OutboundEvent]) -> None:
        """Put the events on the bus, up to 10 in each call; raises, naming those the bus did
        not accept, when any was not."""
