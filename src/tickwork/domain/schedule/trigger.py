"""What computes a schedule's fires: a kind's trigger (``kinds.trigger_for`` makes it)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

__all__ = ["Trigger"]


class Trigger(Protocol):
    def at_or_after(self, moment: datetime) -> datetime | None:
        """The first fire at or after ``moment`` (None: no more)."""
        ...
