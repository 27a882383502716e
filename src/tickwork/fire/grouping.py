"""Which fires share an execution, and over which window: the one rule the pump, the follow-on
batches and the launch of a parked fire all follow.

- A fire's **batch window** is ``BatchWindowSeconds`` long, counted from the epoch
  (``window``, ``domain.batch.window_of``); the fires due in one window may share one Standard
  execution of the batch machine, which waits to its earliest member's second and runs each
  member at its own millisecond (``fire.fire_batch``), at most ``reach`` past that second.
- A window **gathers** when at least ``BatchMinFires`` fires are due in it; a window that does
  not, and a batch's remainder under the minimum, runs alone.
- The pump's due fires make batches of at most ``BatchMaxFires`` each, in fire time order, so a
  busy window's batches each span a moment, not the window (``group``); a batch's recurring
  members' next fires are foreseen by window (``by_window``) and gathered into follow-on
  batches (``fire.follow_on``).
- A parked fire is launched ``LaunchAheadSeconds`` before the start of its window
  (``launch_moment``), so that one pump run finds the fires of a window together.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from tickwork.config import Settings
from tickwork.domain.action import Action
from tickwork.domain.batch import BatchOrder, Member, batch_name, wait_second, window_of
from tickwork.domain.times import iso
from tickwork.fire.needs import Names
from tickwork.fire.orders import names_key

__all__ = [
    "Planned",
    "by_window",
    "gathers",
    "group",
    "launch_moment",
    "reach",
    "window",
]

_PAST_THE_WINDOW = timedelta(seconds=1)  # a member may be due this far past its window


def window(at: datetime, settings: Settings) -> datetime:
    """The start of the batch window a fire due ``at`` falls in."""
    return window_of(at, settings.batch_window)


def gathers(fires: int, settings: Settings) -> bool:
    """Whether that many fires due in one window share an execution."""
    return fires >= settings.batch_min_fires


def reach(settings: Settings) -> timedelta:
    """How far past its batch's second a member may be due (its window, and a second)."""
    return settings.batch_window + _PAST_THE_WINDOW


def launch_moment(due: datetime, settings: Settings) -> datetime:
    """When the pump launches a parked fire due at ``due``: ``LaunchAheadSeconds`` before the
    start of its batch window, so that the fires due in one window come due for launch together
    and one pump run finds them all (and batches them)."""
    return window(due, settings) - settings.launch_ahead


def first_not_due(until: datetime, settings: Settings) -> datetime:
    """The earliest fire time whose launch moment is after ``until``: every fire due before it
    is due for launch by then (the end of the batch window ``until`` plus
    ``LaunchAheadSeconds`` falls in)."""
    start = window(until + settings.launch_ahead, settings)
    return window(start + max(settings.batch_window, timedelta(seconds=1)), settings)


def by_window[T](
    fires: Iterable[tuple[datetime, T]], settings: Settings
) -> dict[datetime, list[T]]:
    """Fires (each with its fire time) by the window they fall in, in the order given."""
    windows: dict[datetime, list[T]] = {}
    for at, fire in fires:
        windows.setdefault(window(at, settings), []).append(fire)
    return windows


@dataclass(frozen=True)
class Planned:
    """A batch the pump is about to start: its name, its input, and its members' records."""

    name: str
    order: BatchOrder
    actions: tuple[Action, ...]


def group(due: Iterable[Action], deps: Names) -> tuple[list[Planned], list[Action]]:
    """The batches the pump's due fires make — per window that gathers, at most
    ``BatchMaxFires`` each, in fire time order — and the fires left to run alone."""
    settings = deps.settings
    if settings.batch_state_machine_arn is None:
        return [], list(due)
    timed: list[tuple[datetime, Action]] = []
    alone: list[Action] = []
    for action in due:
        if action.execution_time is None:
            alone.append(action)
        else:
            timed.append((action.execution_time, action))
    batches: list[Planned] = []
    windows = by_window(((at, (at, action)) for at, action in timed), settings)
    for _, fires in sorted(windows.items()):
        if not gathers(len(fires), settings):
            alone += [action for _, action in fires]
            continue
        fires.sort(key=lambda pair: (pair[0], pair[1].id))
        for start in range(0, len(fires), settings.batch_max_fires):
            members = fires[start : start + settings.batch_max_fires]
            if not gathers(len(members), settings):
                alone += [action for _, action in members]
                continue
            batches.append(_planned(members, names_key(deps)))
    return batches, alone


def _planned(timed: list[tuple[datetime, Action]], key: bytes | None) -> Planned:
    fires = tuple(Member(a.id, a.generation, a.occurrence, at) for at, a in timed)
    at = wait_second(fires)
    order = BatchOrder(at, fires)
    lives = tuple(iso(a.created_at) for _, a in timed)  # an id created again: another name
    return Planned(batch_name(at, fires, key=key, lives=lives), order, tuple(a for _, a in timed))
