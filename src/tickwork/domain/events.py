"""The names of the events on tickwork's bus: the ``detail-type`` of each, in one place.

Inbound control events come from any source but tickwork's own; tickwork publishes the rest
from its source (``tickwork`` by default). The template's rules and the state machine name the
same strings; ``tests/template`` holds them to these values.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["CONTROL", "INBOUND", "DetailType"]


class DetailType(StrEnum):
    # inbound: what users publish
    START = "Schedule Start"
    STOP = "Schedule Stop"
    PAUSE = "Schedule Pause"
    RESUME = "Schedule Resume"
    RUN_NOW = "Schedule Run Now"
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
    RECONCILED = "Schedule Reconciled"
    TAMPERED = "Schedule Tampered"


INBOUND = frozenset(
    {DetailType.START, DetailType.STOP, DetailType.PAUSE, DetailType.RESUME, DetailType.RUN_NOW}
)
# Inbound events that steer an existing action (the Control function's).
CONTROL = INBOUND - {DetailType.START}
