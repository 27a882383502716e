"""Pump workers: runs of the pump beside it, each launching one shard of the parked fires due,
or a share of a shard's."""

from __future__ import annotations

from typing import Protocol

__all__ = ["PumpWorkers"]


class PumpWorkers(Protocol):
    def hand_out_shard(self, shard: int) -> None:
        """Have a worker launch the parked fires due in ``shard`` (``fire.pump.pump_shard``),
        without waiting for it. Raises when it could not be handed out (the fires stay
        parked: the next run finds them)."""

    def hand_out(self, ids: list[str]) -> None:
        """Have a worker launch the parked fires of ``ids`` (``fire.pump.launch_due``), without
        waiting for it. Raises when the share could not be handed out (its fires stay parked:
        the next run finds them)."""
