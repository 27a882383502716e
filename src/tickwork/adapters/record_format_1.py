"""Format 1 of a record's item: what a record without ``fmt`` holds (written before records
carried a format). Read as the current format is, but for its history and transitions: written
in long names at first, in short names later under the same (absent) format, so each entry is
told by its own keys here — the one place a shape is read, since no version tells them apart.
Its batches' counter changes are each carried alone (``dynamodb_tabs``), and a top-level
``timezone`` it wrote beside the schedule's is not read.
"""

from __future__ import annotations

from typing import Any

from tickwork.adapters.record_codecs import occurrence, transition
from tickwork.domain.action import Occurrence, Status, Transition
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.times import parse_iso

__all__ = ["format_1_occurrence", "format_1_transition"]


def format_1_occurrence(item: dict[str, Any], action_id: str) -> Occurrence:
    """A history entry of format 1: in long names, or in the short names it took later."""
    if "o" in item:
        return occurrence(item, action_id)
    return Occurrence(
        occurrence=item["occurrence"],
        scheduled_time=parse_iso(item["scheduledTime"], "history.scheduledTime"),
        actual_time=parse_iso(item["actualTime"], "history.actualTime"),
        attempts=item["attempts"],
        outcome=Outcome(item["outcome"]),
        error=item.get("error"),
        late_ms=item.get("lateMs"),
        trigger=Trigger(item.get("trigger", Trigger.SCHEDULED)),
        manual=item.get("manual", 0),
        execution=item.get("execution"),
    )


def format_1_transition(item: dict[str, Any]) -> Transition:
    """A transition of format 1: in long names, or in the short names it took later."""
    if "t" in item:
        return transition(item)
    before = item.get("fromStatus")
    return Transition(
        at=parse_iso(item["at"], "transitions.at"),
        from_status=Status(before) if before else None,
        to_status=Status(item["toStatus"]),
        reason=item["reason"],
    )
