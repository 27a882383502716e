"""The action: one record per ``id`` (docs/contracts.md), in three parts — its fields and views
(``record``), the transitions of its fires (``fire_state``), and those its users ask for
(``steering_state``). ``upcoming`` lists its coming occurrences as they will happen.
"""

from __future__ import annotations

from tickwork.domain.action.fire_state import PARK_INDEX_MS, FireState
from tickwork.domain.action.record import (
    ACTIVE,
    FINISHED,
    LIVE,
    SUPERSEDED_STARTS,
    Limits,
    Occurrence,
    Status,
    Transition,
    start_mark,
)
from tickwork.domain.action.steering_state import SteeringState

__all__ = [
    "ACTIVE",
    "FINISHED",
    "LIVE",
    "PARK_INDEX_MS",
    "SUPERSEDED_STARTS",
    "Action",
    "Limits",
    "Occurrence",
    "Status",
    "Transition",
    "start_mark",
]


class Action(FireState, SteeringState):
    """An action's record with every transition of it: what the stores read and write."""
