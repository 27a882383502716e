"""The watchdog: a fire that should have happened by its time plus a grace and has not.

Whatever the cause — its execution was lost, the pump is stopped or far behind and never
launched it, the stack was down — a PENDING action whose fire time passed more than
``MissedGraceSeconds`` ago is noted on its record (``writes.note_missed``, fenced on the version
read, so once per fire), announced as ``Schedule Missed`` and counted, and needs attention until
that fire happens (then ``Schedule Late`` says how late) or the record moves on. It runs with
the reconciler, before its repairs, and reads only the fires due before now less the grace, in
fire order, from the ByStatus index.
"""

from __future__ import annotations

from datetime import datetime

from tickwork.domain.action import Status
from tickwork.domain.announcements import Missed
from tickwork.fire import writes
from tickwork.fire.needs import Watches

__all__ = ["note_missed"]

_PARKED = "never launched (the pump is stopped or far behind), or the execution it started is lost"
_WAITING = "its execution has not fired it: lost, stopped, or the stack was down or behind"


def note_missed(deps: Watches, now: datetime, limit: int = 10_000) -> list[Missed]:
    """Note and announce each fire found missed, once; the announcements made."""
    grace = deps.settings.missed_grace
    found: list[Missed] = []
    for action in deps.queries.in_fire_order(Status.PENDING, limit, now - grace):
        due = action.execution_time
        if action.missing_fire or due is None or due + grace > now:
            continue
        cause = _PARKED if action.is_parked else _WAITING
        written = writes.note_missed(deps.records, action, now)
        if written is None:
            continue
        missed = Missed(
            action.id,
            action.group,
            action.generation,
            action.occurrence,
            due,
            int((now - due).total_seconds() * 1000),
            cause,
        )
        deps.publisher.publish(missed)
        found.append(missed)
    return found
