"""Fires put in the fire totals the only way they get there: by the record writes that record
them (``ActionRecords.save(..., recorded=...)``), one action of a group taking each in turn."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta

from tickwork.domain.action import Action, Limits, Occurrence
from tickwork.domain.fire import Outcome
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.start_request import parse_start_detail
from tickwork.ports import ActionRecords

__all__ = ["record_fires"]


def record_fires(
    records: ActionRecords,
    group: str,
    fires: Iterable[tuple[datetime, FireKind]],
    action_id: str | None = None,
) -> Action:
    """Record each fire (when it happened, and how it counts) on a new action of ``group``
    (``action_id``, else ``tallied:<group>``)."""
    fires = list(fires)
    first = min(at for at, _ in fires)
    detail = {"id": action_id or f"tallied:{group}", "at": first.isoformat(), "group": group}
    request = parse_start_detail(detail, first - timedelta(minutes=1))
    action = Action.scheduled(detail["id"], request, first, first, "h", None, Limits())
    records.create(action)
    for n, (at, kind) in enumerate(fires, start=1):
        late = timedelta(seconds=5) if kind is FireKind.LATE else timedelta(0)
        outcome = Outcome.FAILED if kind is FireKind.FAILED else Outcome.FIRED
        occurrence = Occurrence(n, at - late, at, 1, outcome)
        after = replace(action, version=action.version + 1, history=(occurrence,))
        records.save(after, action.version, recorded=occurrence)
        action = after
    return action
