"""Which parked fires share an execution: the pump's due fires grouped by their second.

A second with at least ``BatchMinFires`` fires due becomes batches of at most
``BatchMaxFires`` each, in id order (``group``); each batch is one Standard execution of the
batch machine, named for its second and members, whose task is ``usecases.fire_batch``. The
fires of a second with fewer, and a batch's remainder under the minimum, run alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.batch import BatchOrder, Member, batch_name
from tickwork.usecases.orders import names_key

__all__ = ["Planned", "group"]


@dataclass(frozen=True)
class Planned:
    """A batch the pump is about to start: its name, its input, and its members' records."""

    name: str
    order: BatchOrder
    actions: tuple[Action, ...]


def group(due: Iterable[Action], deps: Dependencies) -> tuple[list[Planned], list[Action]]:
    """The batches the due fires make — per second, at least ``BatchMinFires``, at most
    ``BatchMaxFires`` each, in id order — and the fires left to run alone."""
    settings = deps.settings
    if settings.batch_state_machine_arn is None:
        return [], list(due)
    by_second: dict[int, list[Action]] = {}
    alone: list[Action] = []
    for action in due:
        if action.execution_time is None:
            alone.append(action)
        else:
            by_second.setdefault(int(action.execution_time.timestamp()), []).append(action)
    batches: list[Planned] = []
    for second, actions in sorted(by_second.items()):
        if len(actions) < settings.batch_min_fires:
            alone += actions
            continue
        actions.sort(key=lambda a: a.id)
        for start in range(0, len(actions), settings.batch_max_fires):
            members = actions[start : start + settings.batch_max_fires]
            if len(members) < settings.batch_min_fires:
                alone += members
                continue
            batches.append(_planned(second, members, names_key(deps)))
    return batches, alone


def _planned(second: int, actions: list[Action], key: bytes | None) -> Planned:
    at = datetime.fromtimestamp(second, UTC)
    fires = tuple(Member(a.id, a.generation, a.occurrence, a.execution_time or at) for a in actions)
    order = BatchOrder(at, fires)
    return Planned(batch_name(at, fires, key=key), order, tuple(actions))
