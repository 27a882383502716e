"""A flexible window: each occurrence fires at an instant of its own inside a window by its
scheduled time, so a fleet of actions on the same cron does not hit a target at :00 together.

EventBridge Scheduler's ``FlexibleTimeWindow`` picks a random instant in the window after the
scheduled time; Temporal's jitter a random delay. Here the instant is chosen by a hash of the
action's id and the occurrence's scheduled time: every replay, retry, relaunch or preview of an
occurrence finds the same instant, and two actions on the same schedule find different ones.

``AFTER`` (the default) fires in ``[scheduled, scheduled + size)``, never before the scheduled
time. ``AROUND`` fires in ``[scheduled - size/2, scheduled + size/2)``: up to half the window
early, for a user who asks for it.

A window never carries an occurrence past its neighbours: the part after the scheduled time is
cut to the gap to the next occurrence (half the gap with ``AROUND``), the part before to half the
gap from the previous one. Fires stay in the schedule's order, and each fire time maps back to
the one occurrence it belongs to (``origin``), which is how the next occurrence is found after
a fire. Neighbours are the trigger's own occurrences, before any start, end or count bounds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from tickwork.domain.errors import ValidationFailed

if TYPE_CHECKING:
    from tickwork.domain.schedule.kinds import Trigger

__all__ = ["MAX_WINDOW", "FireWindow", "WindowMode"]

MAX_WINDOW = timedelta(hours=24)  # EventBridge Scheduler's limit: 1,440 minutes
_MS = timedelta(milliseconds=1)
_SECOND = timedelta(seconds=1)
_MICROSECOND = timedelta(microseconds=1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HASH_SPAN = 2**64
_WALK = 4  # occurrences walked forward before searching back from the moment


class WindowMode(StrEnum):
    """Where the window lies: AFTER the scheduled time, or AROUND it (centred on it)."""

    AFTER = "AFTER"
    AROUND = "AROUND"


def _ms(moment: datetime) -> int:
    """Epoch milliseconds, rounded up (scheduled times are whole milliseconds on the record)."""
    delta = moment - _EPOCH
    micro = delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds
    return -(-micro // 1000)


def _instant(ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=ms)


def _share(seed: str, scheduled_ms: int) -> float:
    """A number in [0, 1) fixed by the action and the occurrence: where in its window it
    fires."""
    digest = hashlib.blake2b(f"{seed}\n{scheduled_ms}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / _HASH_SPAN


@dataclass(frozen=True)
class FireWindow:
    size: timedelta
    mode: WindowMode = WindowMode.AFTER

    def __post_init__(self) -> None:
        if not _MS <= self.size <= MAX_WINDOW:
            raise ValidationFailed.of(
                "flexibleWindow",
                f"{self.size} is not from 1 ms to {MAX_WINDOW}",
                'give a window from "1s" to "24h", or leave it out to fire at the scheduled time',
            )
        try:
            object.__setattr__(self, "mode", WindowMode(self.mode))
        except ValueError as error:
            raise ValidationFailed.of(
                "windowMode",
                f"{self.mode!r} is not a window mode",
                f"give {' or '.join(WindowMode)}",
            ) from error

    def to_dict(self) -> dict[str, Any]:
        return {"sizeMs": self.size // _MS, "mode": str(self.mode)}

    @classmethod
    def from_dict(cls, stored: dict[str, Any] | None) -> FireWindow | None:
        if stored is None:
            return None
        return cls(timedelta(milliseconds=int(stored["sizeMs"])), WindowMode(stored["mode"]))

    @property
    def reach_before(self) -> timedelta:
        """How far before its scheduled time an occurrence may fire."""
        return self.size / 2 if self.mode is WindowMode.AROUND else timedelta(0)

    # --- one occurrence ---------------------------------------------------------------------
    def fire_time(self, trigger: Trigger, scheduled: datetime, seed: str, alone: bool) -> datetime:
        """When the occurrence scheduled at ``scheduled`` fires. ``alone``: it has no
        neighbours (a one-off), so its window is not cut."""
        size = self.size // _MS
        at = _ms(scheduled)
        after = _ms(following) if not alone and (following := _after(trigger, scheduled)) else None
        before = None
        if not alone and self.mode is WindowMode.AROUND:
            earlier = _at_or_before(trigger, scheduled - _MICROSECOND, self.size)
            before = None if earlier is None else _ms(earlier)
        share = _share(seed, at)
        if self.mode is WindowMode.AFTER:
            span = size if after is None else min(size, after - at)
            return _instant(at + int(share * span))
        low = size // 2 if before is None else min(size // 2, (at - before) // 2)
        high = size - size // 2 if after is None else min(size - size // 2, (after - at) // 2)
        return _instant(at - low + int(share * (low + high)))

    def origin(self, trigger: Trigger, fire: datetime, seed: str) -> datetime | None:
        """The scheduled time of the occurrence that fires at ``fire``, or None when no
        occurrence of the trigger fires then (a manual fire, a moved occurrence)."""
        latest = _at_or_before(trigger, fire, self.size)
        candidates = [latest] if latest is not None else []
        if self.mode is WindowMode.AROUND:
            following = _after(trigger, fire)
            if following is not None and following - fire <= self.size:
                candidates.append(following)
        return next(
            (c for c in candidates if self.fire_time(trigger, c, seed, alone=False) == fire),
            None,
        )


def _after(trigger: Trigger, moment: datetime) -> datetime | None:
    """The trigger's first occurrence strictly after ``moment``."""
    return trigger.at_or_after(_instant(_ms(moment)) + _MICROSECOND)


def _at_or_before(trigger: Trigger, moment: datetime, reach: timedelta) -> datetime | None:
    """The trigger's last occurrence at or before ``moment``, looked for up to ``reach`` back.

    A schedule sparser than the window has one occurrence in reach: two calls find it. A
    denser one is walked a few steps, then searched back from ``moment`` in doubling spans.
    """
    found = trigger.at_or_after(moment - reach)
    if found is None or found > moment:
        return None
    for _ in range(_WALK):
        following = trigger.at_or_after(found + _MICROSECOND)
        if following is None or following > moment:
            return found
        found = following
    step = _SECOND
    while (nearer := trigger.at_or_after(moment - step)) is None or nearer > moment:
        step *= 2
    while (following := trigger.at_or_after(nearer + _MICROSECOND)) is not None and (
        following <= moment
    ):
        nearer = following
    return nearer
