"""A flexible window: each occurrence fires at an instant of its own inside a window after its
scheduled time, so a fleet of actions on the same cron does not hit a target at :00 together.

EventBridge Scheduler's ``FlexibleTimeWindow`` picks a random instant in the window after the
scheduled time; Temporal's jitter a random delay. Here the instant is chosen by a hash of the
action's id and the occurrence's scheduled time: every replay, retry, relaunch or preview of an
occurrence finds the same instant, and two actions on the same schedule find different ones.
A fire is never before its scheduled time.

A window never carries an occurrence past the next one: it is cut to the gap to the next
occurrence of the trigger (before any start, end or count bounds). Fires stay in the schedule's
order, and each fire time maps back to the one occurrence it belongs to (``origin``: the last
occurrence at or before it), which is how the next occurrence is found after a fire.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.spread import hashed_share
from tickwork.domain.times import ceil_ms, from_epoch_ms, to_epoch_ms

if TYPE_CHECKING:
    from tickwork.domain.schedule.kinds import Trigger

__all__ = ["MAX_WINDOW", "FireWindow", "at_or_before"]

MAX_WINDOW = timedelta(hours=24)  # EventBridge Scheduler's limit: 1,440 minutes
_MS = timedelta(milliseconds=1)
_SECOND = timedelta(seconds=1)
_MICROSECOND = timedelta(microseconds=1)
_WALK = 4  # occurrences walked forward before searching back from the moment


def _offset(seed: str, scheduled_ms: int, span: int) -> int:
    """Where in a window of ``span`` milliseconds the occurrence fires: fixed by the action and
    the occurrence, from 0 to ``span - 1``."""
    return hashed_share(f"{seed}\n{scheduled_ms}", span)


@dataclass(frozen=True)
class FireWindow:
    size: timedelta

    def __post_init__(self) -> None:
        if not _MS <= self.size <= MAX_WINDOW:
            raise ValidationFailed.of(
                "flexibleWindow",
                f"{self.size // _MS} ms is not from 1 ms to 24h",
                'give a window from "1s" to "24h", or leave it out to fire at the scheduled time',
            )

    def to_dict(self) -> dict[str, Any]:
        return {"sizeMs": self.size // _MS}

    @classmethod
    def from_dict(cls, stored: dict[str, Any] | None) -> FireWindow | None:
        if stored is None:
            return None
        size = stored.get("sizeMs")
        if isinstance(size, bool) or not isinstance(size, int | float) or size != int(size):
            raise ValidationFailed.of(
                "window.sizeMs", f"{size!r} is not a whole number of ms", "store Schedule.to_dict()"
            )
        return cls(timedelta(milliseconds=int(size)))

    # --- one occurrence ---------------------------------------------------------------------
    def fire_time(
        self,
        trigger: Trigger,
        scheduled: datetime,
        seed: str,
        alone: bool,
        start: datetime | None = None,
        excluded: Callable[[datetime], bool] | None = None,
    ) -> datetime:
        """When the occurrence scheduled at ``scheduled`` fires. ``alone``: it has no
        neighbours (a one-off), so its window is not cut. ``start``: where its window opens,
        if not at ``scheduled`` (a time its calendar shifted it to). ``excluded``: moments its
        calendar excludes — an instant on one is drawn again, nearer the window's opening,
        until it is allowed (the opening itself always is)."""
        key = to_epoch_ms(scheduled)
        at = key if start is None else to_epoch_ms(start)
        span = self.size // _MS
        following = None if alone else trigger.at_or_after(from_epoch_ms(key) + _MICROSECOND)
        if following is not None:
            span = min(span, to_epoch_ms(following) - at)
        offset = _offset(seed, key, max(span, 1))
        while offset and excluded is not None and excluded(from_epoch_ms(at + offset)):
            offset = _offset(seed, key, offset)  # strictly nearer the opening
        return from_epoch_ms(at + offset)

    def origin(self, trigger: Trigger, fire: datetime, seed: str) -> datetime | None:
        """The scheduled time of the occurrence that fires at ``fire`` (to the millisecond),
        or None when no occurrence of the trigger fires then (a manual fire, a moved one)."""
        latest = at_or_before(trigger, fire, self.size)
        if latest is None:
            return None
        scheduled = ceil_ms(latest)
        return scheduled if self.fire_time(trigger, scheduled, seed, alone=False) == fire else None


def at_or_before(trigger: Trigger, moment: datetime, reach: timedelta) -> datetime | None:
    """The trigger's last occurrence at or before ``moment``, looked for up to ``reach`` back.

    A schedule sparser than the reach has one occurrence in it: two calls find it. A denser one
    is walked a few steps, then searched back from ``moment`` in doubling spans.
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
