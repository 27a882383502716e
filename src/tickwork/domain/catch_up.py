"""What happens to occurrences missed during an outage: the catch-up policy of an action.

A fire is *missed* (a misfire, in Quartz's words) when it runs more than ``threshold`` after
its scheduled time — the stack was down, the emulator was stopped, a region was impaired.
The policy decides, in the spirit of Quartz's misfire instructions and Temporal's catch-up
window:

- ``ONCE`` (default): the missed occurrence fires once, late; any others missed with it are
  coalesced into that one fire, and the fires resume at the next on-time occurrence.
- ``SKIP``: a missed occurrence does not fire; the fires resume at the next on-time one.
- ``ALL``: every missed occurrence no older than ``window`` fires, late and in order; older
  ones are skipped.

Pure: ``now`` is passed in. Skipped occurrences are recorded in the history as SKIPPED.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from tickwork.domain.errors import ValidationFailed

__all__ = [
    "DEFAULT_CATCH_UP",
    "DEFAULT_THRESHOLD",
    "DEFAULT_WINDOW",
    "MAX_THRESHOLD",
    "MAX_WINDOW",
    "CatchUp",
    "CatchUpPolicy",
]

DEFAULT_THRESHOLD = timedelta(seconds=60)
DEFAULT_WINDOW = timedelta(days=1)
MAX_THRESHOLD = timedelta(days=1)
MAX_WINDOW = timedelta(days=30)


class CatchUpPolicy(StrEnum):
    ONCE = "ONCE"
    SKIP = "SKIP"
    ALL = "ALL"


@dataclass(frozen=True)
class CatchUp:
    policy: CatchUpPolicy = CatchUpPolicy.ONCE
    threshold: timedelta = DEFAULT_THRESHOLD
    window: timedelta = DEFAULT_WINDOW  # ALL only

    def __post_init__(self) -> None:
        if not timedelta(0) < self.threshold <= MAX_THRESHOLD:
            raise ValidationFailed.of(
                "misfireThreshold",
                f"{self.threshold.total_seconds():g}s is outside 1s to 1d",
                'give a duration from "1s" to "1d" (default "60s")',
            )
        if self.policy is CatchUpPolicy.ALL and not self.threshold <= self.window <= MAX_WINDOW:
            raise ValidationFailed.of(
                "catchUpWindow",
                f"{self.window.total_seconds():g}s is outside misfireThreshold to 30 days",
                'give a duration from the misfireThreshold to "30d" (default "1d")',
            )

    def is_missed(self, scheduled: datetime, now: datetime) -> bool:
        return now - scheduled > self.threshold

    def runs(self, scheduled: datetime, now: datetime) -> bool:
        """Whether an occurrence scheduled at ``scheduled`` still runs at ``now``."""
        if not self.is_missed(scheduled, now) or self.policy is CatchUpPolicy.ONCE:
            return True
        return self.policy is CatchUpPolicy.ALL and now - scheduled <= self.window

    def resume_from(self, now: datetime) -> datetime:
        """The earliest scheduled time still worth a fire at ``now``: earlier ones are skipped."""
        return now - (self.window if self.policy is CatchUpPolicy.ALL else self.threshold)

    def describe(self) -> str:
        if self.policy is CatchUpPolicy.ONCE:
            return "a missed occurrence fires once, late"
        if self.policy is CatchUpPolicy.SKIP:
            return "missed occurrences are skipped"
        return f"missed occurrences within {_words(self.window)} all fire"

    def to_dict(self) -> dict[str, Any]:
        stored: dict[str, Any] = {
            "policy": str(self.policy),
            "thresholdSeconds": self.threshold.total_seconds(),
        }
        if self.policy is CatchUpPolicy.ALL:
            stored["windowSeconds"] = self.window.total_seconds()
        return stored

    @classmethod
    def from_dict(cls, stored: dict[str, Any] | None) -> CatchUp:
        if not stored:
            return cls()
        return cls(
            CatchUpPolicy(stored["policy"]),
            timedelta(seconds=float(stored.get("thresholdSeconds", 60))),
            timedelta(seconds=float(stored.get("windowSeconds", DEFAULT_WINDOW.total_seconds()))),
        )


DEFAULT_CATCH_UP = CatchUp()


def _words(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
