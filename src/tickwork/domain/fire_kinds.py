"""What became of a fire, and why it happened: the words the fire contract's values carry
(``domain.fire``), and its wire models read (``domain.fire_wire``)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["RANGE_TRIGGERS", "TICK_OUTCOMES", "Outcome", "Trigger"]


class Outcome(StrEnum):
    """What became of one fire (a tick carries the first three)."""

    FIRED = "FIRED"
    NO_ACTION = "NO_ACTION"  # nothing to run: the type is gone, or the record was tampered with
    SKIPPED = "SKIPPED"  # missed (an outage, or paused), and not run
    FAILED = "FAILED"  # failed past its retries


TICK_OUTCOMES = frozenset({Outcome.FIRED, Outcome.NO_ACTION, Outcome.SKIPPED})


class Trigger(StrEnum):
    """Why a fire happened."""

    SCHEDULED = "SCHEDULED"  # the schedule's own occurrence
    RUN_NOW = "RUN_NOW"  # an operator's run now: one extra fire, the schedule unmoved
    RETRY = "RETRY"  # an operator's retry of a failed fire
    BACKFILL = "BACKFILL"  # an occurrence of a past range, run now (domain.backfill)
    CATCH_UP = "CATCH_UP"  # an occurrence that came due while paused, run on resume


# The fires a backfill request runs: a past range's, or those a resume catches up on.
RANGE_TRIGGERS = frozenset({Trigger.BACKFILL, Trigger.CATCH_UP})
