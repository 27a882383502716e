"""The names of the events on tickwork's bus: the ``detail-type`` of each, in one place.

Inbound control events come from any source but tickwork's own; tickwork publishes the rest
from its source (``tickwork`` by default). The template's rules and the state machine name the
same strings; ``tests/template`` holds them to these values.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["INBOUND", "DetailType"]


class DetailType(StrEnum):
    # inbound: what users publish
    START = "Schedule Start"
    STOP = "Schedule Stop"
    # outbound: one per fire, then the lifecycle of an action
    TICK = "Schedule Tick"
    STARTED = "Schedule Started"
    COMPLETED = "Schedule Completed"
    FAILED = "Schedule Failed"
    STOPPED = "Schedule Stopped"
    REJECTED = "Schedule Rejected"
    SKIPPED = "Schedule Skipped"
    RECONCILED = "Schedule Reconciled"
    TAMPERED = "Schedule Tampered"


INBOUND = frozenset({DetailType.START, DetailType.STOP})
