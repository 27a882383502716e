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
from enum import StrEnum
from typing import Any

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.trigger import Trigger
from tickwork.domain.spread import hashed_share
from tickwork.domain.times import ceil_ms, from_epoch_ms, to_epoch_ms

__all__ = ["MAX_WINDOW", "FireWindow", "WindowMode", "at_or_before"]

MAX_WINDOW = timedelta(hours=24)  # EventBridge Scheduler's limit: 1,440 minutes
_MS = timedelta(milliseconds=1)
_SECOND = timedelta(seconds=1)
_MICROSECOND = timedelta(microseconds=1)
_WALK = 4  # occurrences walked forward before searching back from the moment
# Instants drawn again at most when the calendar excludes the one drawn: each draw lands, on
# average, half as far from the window's opening, so a handful usually do; past 64 the fire is
# at the opening (always allowed). Bounded: a fire time is never a long search.
_REDRAWS = 64


class WindowMode(StrEnum):
    AFTER = "AFTER"  # the window opens at the scheduled time: never a fire before it
    AROUND = "AROUND"  # centred on it: a fire up to half the window before it, by request


def _offset(seed: str, scheduled_ms: int, span: int, draw: int = 0) -> int:
    """Where in a window of ``span`` milliseconds the occurrence fires: fixed by the action and
    the occurrence, from 0 to ``span - 1``; ``draw``: the n-th drawn again (its calendar
    excluded the one before)."""
    return hashed_share(f"{seed}\n{scheduled_ms}" + (f"\n{draw}" if draw else ""), span)


@dataclass(frozen=True)
class FireWindow:
    """``size`` after the scheduled time; ``around``: centred on it instead, so an occurrence
    fires up to half the window before its scheduled time (asked for by name: windowMode
    AROUND). Either way cut so that no two occurrences' windows meet."""

    size: timedelta
    around: bool = False

    def __post_init__(self) -> None:
        if not _MS <= self.size <= MAX_WINDOW:
            raise ValidationFailed.of(
                "flexibleWindow",
                f"{self.size // _MS} ms is not from 1 ms to 24h",
                'give a window from "1s" to "24h", or leave it out to fire at the scheduled time',
            )

    def to_dict(self) -> dict[str, Any]:
        return {"sizeMs": self.size // _MS, **({"around": True} if self.around else {})}

    @classmethod
    def from_dict(cls, stored: dict[str, Any] | None) -> FireWindow | None:
        if stored is None:
            return None
        size = stored.get("sizeMs")
        if isinstance(size, bool) or not isinstance(size, int | float) or size != int(size):
            raise ValidationFailed.of(
                "window.sizeMs", f"{size!r} is not a whole number of ms", "store Schedule.to_dict()"
            )
        around = stored.get("around", False)
        if not isinstance(around, bool):
            raise ValidationFailed.of(
                "window.around", f"{around!r} is not true or false", "store Schedule.to_dict()"
            )
        return cls(timedelta(milliseconds=int(size)), around)

    @property
    def lead(self) -> timedelta:
        """How far before its scheduled time an occurrence may fire (nothing but ``around``)."""
        return timedelta(milliseconds=self._before_ms)

    @property
    def reach(self) -> timedelta:
        """How far after its scheduled time an occurrence may fire."""
        return self.size - self.lead

    @property
    def _before_ms(self) -> int:
        return (self.size // _MS) // 2 if self.around else 0

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
        until it is allowed (the opening itself always is).

        A window after the scheduled time is cut at the next occurrence; one around it at half
        the gap to each neighbour, so the instants of two occurrences never meet or cross."""
        key = to_epoch_ms(scheduled)
        at = key if start is None else to_epoch_ms(start)
        before = self._before_ms
        after = self.size // _MS - before
        if not alone:
            following = trigger.at_or_after(from_epoch_ms(key) + _MICROSECOND)
            if following is not None:
                gap = to_epoch_ms(following) - (key if self.around else at)
                after = min(after, gap // 2 if self.around else gap)
            if before:
                previous = at_or_before(
                    trigger, from_epoch_ms(key) - _MICROSECOND, 2 * self.lead + _MS
                )
                if previous is not None:
                    before = min(before, (key - to_epoch_ms(previous) - 1) // 2)
        offset = _offset(seed, key, max(before + after, 1)) - before
        for draw in range(1, _REDRAWS + 1):
            if not offset or excluded is None or not excluded(from_epoch_ms(at + offset)):
                return from_epoch_ms(at + offset)
            # strictly nearer the opening, by a share drawn afresh: about half as near each time
            nearer = _offset(seed, key, abs(offset), draw)
            offset = nearer if offset > 0 else -nearer
        return from_epoch_ms(at)  # (a window almost all excluded: its opening)

    def origin(self, trigger: Trigger, fire: datetime, seed: str) -> datetime | None:
        """The scheduled time of the occurrence that fires at ``fire`` (to the millisecond),
        or None when no occurrence of the trigger fires then (a manual fire, a moved one): the
        last occurrence at or before it, or — a window around — the first after it."""
        candidates = [at_or_before(trigger, fire, self.reach)]
        if self.around:
            candidates.append(trigger.at_or_after(fire + _MICROSECOND))
        for candidate in candidates:
            if candidate is None:
                continue
            scheduled = ceil_ms(candidate)
            if self.fire_time(trigger, scheduled, seed, alone=False) == fire:
                return scheduled
        return None


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
