"""Concurrency slots: a counting semaphore per action type, so a burst cannot flood a target."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

__all__ = ["ConcurrencySlots"]


class ConcurrencySlots(Protocol):
    """A counting semaphore per key whose slots are leased, so a crashed holder's slot frees."""

    def acquire(
        self, key: str, limit: int, holder: str, now: datetime, lease: timedelta
    ) -> str | None:
        """Take one of ``limit`` slots of ``key`` for ``holder`` (again, if it has one);
        None when all are taken, which counts one wait of ``holder``."""

    def waits(self, holder: str) -> int:
        """How many times ``holder`` found every slot taken (0 if it never waited)."""

    def release(self, slot: str, holder: str) -> None:
        """Give the slot back; harmless if the lease already ended."""
