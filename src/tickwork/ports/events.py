"""Putting tickwork's own events (ticks, lifecycle, rejections) on its bus."""

from __future__ import annotations

from typing import Any, Protocol

from tickwork.domain.events import DetailType

__all__ = ["EventPublisher"]


class EventPublisher(Protocol):
    def publish(self, detail_type: DetailType, detail: dict[str, Any]) -> None:
        """Put one event on the bus; raises when the bus did not accept it."""
