"""Where an occurrence change is written: a skip, move or restore asked by a user
(``steering.occurrences``), and a fire's own execution moving the occurrence it is at (a missed
fire its calendar shifts to its next allowed moment, ``fire.calendar_reads.late_exclusion``).
"""

from __future__ import annotations

from datetime import datetime

from tickwork.domain.action import Action
from tickwork.domain.errors import RecordAltered
from tickwork.domain.occurrence_changes import OccurrenceChange
from tickwork.domain.times import iso
from tickwork.fire import writes
from tickwork.fire.launch import launch, stop_own_execution
from tickwork.fire.needs import Launches
from tickwork.fire.planning import plan
from tickwork.fire.sealing import seal_holds, seal_of

__all__ = ["shift_own_fire", "write_occurrence_change"]


def write_occurrence_change(
    action: Action,
    changed: Action,
    reason: str,
    now: datetime,
    deps: Launches,
    from_own_execution: bool = False,
) -> None:
    """Save the change, sealed; a moved imminent fire gets its new execution, the old one
    stopped (it would end quietly at its claim anyway: a new generation) unless the change
    comes from it (``from_own_execution``: it ends itself). A record altered outside tickwork
    is refused, never sealed again with what it holds."""
    if not seal_holds(action, deps):
        raise RecordAltered(action.id)
    refired = changed.generation != action.generation
    if refired:
        changed = plan(changed, now, deps)
    changed = changed.sealed(seal_of(changed, deps))
    if from_own_execution:
        writes.move_own_occurrence(deps.records, action, changed)
    else:
        writes.change_occurrence(deps.records, action, changed)
    if refired:
        if not from_own_execution:
            stop_own_execution(action, reason, deps)
        launch(changed, now, deps)


def shift_own_fire(action: Action, to: datetime, why: str, deps: Launches) -> bool:
    """Move the occurrence the record is at to ``to``, asked by its own execution (a missed
    fire its calendar shifts: ``calendars.late_exclusion``): a new generation, planned and
    launched; the caller's execution then ends quietly. False, nothing written, for a record
    altered outside tickwork (the claim's seal check ends that fire)."""
    if not seal_holds(action, deps):
        return False
    now = deps.clock.now()
    scheduled = action.origin_of(action.execution_time or now)
    change = OccurrenceChange(scheduled, now, to, why)
    reason = f"occurrence {action.occurrence} ({iso(scheduled)}) moved to {iso(to)}: {why}"
    changed = action.occurrence_changed(now, change, reason, deps.limits)
    write_occurrence_change(action, changed, reason, now, deps, from_own_execution=True)
    return True
