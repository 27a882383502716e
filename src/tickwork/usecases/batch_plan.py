"""Which parked fires share an execution: the pump's due fires grouped by their batch window.

A window (``BatchWindowSeconds``, ``domain.batch.window_of``) with at least ``BatchMinFires``
fires due becomes batches of at most ``BatchMaxFires`` each, in fire time order (``group``);
each batch is one Standard execution of the batch machine, named for its first second and
members, which waits to its earliest member's second and whose task
(``usecases.fire_batch``) runs each member at its own millisecond. The fires of a window with
fewer, and a batch's remainder under the minimum, run alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.batch import BatchOrder, Member, batch_name, wait_second, window_of
from tickwork.usecases.orders import names_key

__all__ = ["Planned", "group"]


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
    by_window: dict[datetime, list[Action]] = {}
    alone: list[Action] = []
    for action in due:
        if action.execution_time is None:
            alone.append(action)
        else:
            window = window_of(action.execution_time, settings.batch_window)
            by_window.setdefault(window, []).append(action)
    batches: list[Planned] = []
    for window, actions in sorted(by_window.items()):
        if len(actions) < settings.batch_min_fires:
            alone += actions
            continue
        actions.sort(key=lambda a: (a.execution_time or window, a.id))
        for start in range(0, len(actions), settings.batch_max_fires):
            members = actions[start : start + settings.batch_max_fires]
            if len(members) < settings.batch_min_fires:
                alone += members
                continue
            batches.append(_planned(members, names_key(deps)))
    return batches, alone


def _planned(actions: list[Action], key: bytes | None) -> Planned:
    fires = tuple(
        Member(a.id, a.generation, a.occurrence, a.execution_time)
        for a in actions
        if a.execution_time is not None  # each has one: grouped by it
    )
    at = wait_second(fires)
    order = BatchOrder(at, fires)
    return Planned(batch_name(at, fires, key=key), order, tuple(actions))
