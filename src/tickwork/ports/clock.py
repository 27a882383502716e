"""The one clock every "now", fire time and sleep goes through, so tests control time."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

__all__ = ["Clock"]


class Clock(Protocol):
    def now(self) -> datetime:
        """Now, timezone-aware (UTC)."""

    def sleep(self, seconds: float) -> None: ...
