"""Which parked fires share an execution: the pump's due fires grouped by their batch window.

A window (``BatchWindowSeconds``, ``domain.batch.window_of``) with at least ``BatchMinFires``
fires due becomes batches of at most ``BatchMaxFires`` each, in fire time order (``group``);
each batch is one Standard execution of the batch machine, named for its first second and
members, which waits to its earliest member's second and whose task
(``fire.fire_batch``) runs each member at its own millisecond. The fires of a window with
fewer, and a batch's remainder under the minimum, run alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from tickwork.config import Settings
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.batch import BatchOrder, Member, batch_name, wait_second, window_of
from tickwork.fire.orders import names_key

__all__ = ["Planned", "group", "launch_moment"]


@dataclass(frozen=True)
class Planned:
    """A batch the pump is about to start: its name, its input, and its members' records."""

    name: str
    order: BatchOrder
    actions: tuple[Action, ...]


def group(due: Iterable[Action], deps: Dependencies) -> tuple[list[Planned], list[Action]]:
    """The batches the due fires make — per batch window, at least ``BatchMinFires``, at most
    ``BatchMaxFires`` each, in fire time order (so a busy window's batches each span a moment,
    not the window) — and the fires left to run alone."""
    settings = deps.settings
    if settings.batch_state_machine_arn is None:
        return [], list(due)
    by_window: dict[datetime, list[tuple[datetime, Action]]] = {}
    alone: list[Action] = []
    for action in due:
        if action.execution_time is None:
            alone.append(action)
        else:
            at = action.execution_time
            by_window.setdefault(window_of(at, settings.batch_window), []).append((at, action))
    batches: list[Planned] = []
    for _, timed in sorted(by_window.items()):
        if len(timed) < settings.batch_min_fires:
            alone += [action for _, action in timed]
            continue
        timed.sort(key=lambda pair: (pair[0], pair[1].id))
        for start in range(0, len(timed), settings.batch_max_fires):
            members = timed[start : start + settings.batch_max_fires]
            if len(members) < settings.batch_min_fires:
                alone += [action for _, action in members]
                continue
            batches.append(_planned(members, names_key(deps)))
    return batches, alone


def _planned(timed: list[tuple[datetime, Action]], key: bytes | None) -> Planned:
    fires = tuple(Member(a.id, a.generation, a.occurrence, at) for at, a in timed)
    at = wait_second(fires)
    order = BatchOrder(at, fires)
    return Planned(batch_name(at, fires, key=key), order, tuple(a for _, a in timed))


def launch_moment(due: datetime, settings: Settings) -> datetime:
    """When the pump launches a parked fire due at ``due``: ``LaunchAheadSeconds`` before the
    start of its batch window, so that the fires due in one window come due for launch together
    and one pump run finds them all (and batches them)."""
    return window_of(due, settings.batch_window) - settings.launch_ahead
