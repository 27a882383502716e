"""The names of the events on tickwork's bus: the ``detail-type`` of each, in one place.

Inbound control events come from any source but tickwork's own; tickwork publishes the rest
from its source (``tickwork`` by default). The template's rules and the state machine name the
same strings; ``tests/template`` holds them to these values.
"""

from __future__ import annotations

import difflib
from enum import StrEnum

__all__ = ["CONTROL", "ESSENTIAL", "INBOUND", "DetailType", "meant_detail_type"]


class DetailType(StrEnum):
    # inbound: what users publish
    START = "Schedule Start"
    STOP = "Schedule Stop"
    PAUSE = "Schedule Pause"
    RESUME = "Schedule Resume"
    RUN_NOW = "Schedule Run Now"
    SKIP_OCCURRENCE = "Schedule Skip Occurrence"
    MOVE_OCCURRENCE = "Schedule Move Occurrence"
    RESTORE_OCCURRENCE = "Schedule Restore Occurrence"
    BACKFILL = "Schedule Backfill"
    # outbound: one per fire, then the lifecycle of an action
    TICK = "Schedule Tick"
    STARTED = "Schedule Started"
    COMPLETED = "Schedule Completed"
    FAILED = "Schedule Failed"
    STOPPED = "Schedule Stopped"
    PAUSED = "Schedule Paused"
    RESUMED = "Schedule Resumed"
    REJECTED = "Schedule Rejected"
    SKIPPED = "Schedule Skipped"
    LATE = "Schedule Late"
    MISSED = "Schedule Missed"
    RECONCILED = "Schedule Reconciled"
    TAMPERED = "Schedule Tampered"


INBOUND = frozenset(
    {
        DetailType.START,
        DetailType.STOP,
        DetailType.PAUSE,
        DetailType.RESUME,
        DetailType.RUN_NOW,
        DetailType.SKIP_OCCURRENCE,
        DetailType.MOVE_OCCURRENCE,
        DetailType.RESTORE_OCCURRENCE,
        DetailType.BACKFILL,
    }
)
# Inbound events that steer an existing action (the Control function's).
CONTROL = INBOUND - {DetailType.START}

# What a stack sends with LifecycleEvents=essential: each fire's tick, and what needs someone's
# attention (a fire failed or skipped, a Start refused, a record altered, repairs). Left out:
# Started, Completed, Stopped, Paused and Resumed, which confirm what a caller did or can read
# from the API, and cost an event each (a one-off's Started and Completed double its bill of
# events).
ESSENTIAL = frozenset(
    {
        DetailType.TICK,
        DetailType.FAILED,
        DetailType.REJECTED,
        DetailType.SKIPPED,
        DetailType.LATE,
        DetailType.MISSED,
        DetailType.TAMPERED,
        DetailType.RECONCILED,
    }
)


# How near a detail-type must be to one the stack takes to be answered as a slip of it.
_NEAR = 0.8
_TAKEN = {str(kind).casefold(): kind for kind in INBOUND}  # as compared: case left out


def meant_detail_type(detail_type: str) -> DetailType | None:
    """The detail-type the stack takes that ``detail_type`` is a slip of — its case, its spaces,
    a typo (``Schedule Strat``) — or None: not near any, an event meant for another consumer,
    which the stack leaves alone."""
    normal = " ".join(detail_type.split()).casefold()
    if normal in _TAKEN:
        return _TAKEN[normal]
    close = difflib.get_close_matches(normal, list(_TAKEN), n=1, cutoff=_NEAR)
    return _TAKEN[close[0]] if close else None
