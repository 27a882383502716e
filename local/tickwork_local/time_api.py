"""The local stack's time over HTTP: ``GET /local/time`` reads it, ``POST /local/time`` moves
virtual time on (``tickwork time``, the dashboard, a team's tests in another process).

``POST`` takes ``{"advance": "30d"}`` (a duration as ``tickwork schedule --in`` takes it) or
``{"to": "2027-03-01T00:00:00Z"}`` and answers when everything due by then has happened: the
instants before and after, the steps, the work done and the scheduled runs made and left out.
A field it cannot take is refused with the field and the fix (a 400); so is a time before now
(virtual time never goes backwards) and a stack on the wall clock.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tickwork.domain.durations import MAX_DURATION, parse_duration
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.times import iso, parse_iso
from tickwork_local.time_machine import Advanced, TimeMachine
from tickwork_local.virtual_clock import LocalClock

__all__ = [
    "CLOCK_FILE",
    "LAST_INSTANT",
    "advance_request",
    "clock_reading",
    "saved_offset",
    "saving_offset",
]

CLOCK_FILE = "clock.json"  # in the state dir: virtual time survives a restart, never goes back
# Virtual time stops short of the calendar's end: a fire's next occurrence, a record's expiry
# and a signature's window are all worked out years after the stack's now.
LAST_INSTANT = datetime(9000, 1, 1, tzinfo=UTC)


def clock_reading(clock: LocalClock) -> dict[str, Any]:
    return {
        "now": iso(clock.now()),
        "virtual": clock.virtual,
        "offsetSeconds": round(clock.offset, 3),
        "wallClock": iso(datetime.now(UTC)),
    }


def advance_request(machine: TimeMachine, body: Any) -> dict[str, Any]:
    clock = machine.clock
    if not isinstance(body, dict) or set(body) - {"advance", "to"} or len(body) != 1:
        raise ValidationFailed.of(
            "body",
            'must be one of {"advance": DURATION} or {"to": ISO-TIME}',
            'send e.g. {"advance": "30d"} or {"to": "2027-03-01T00:00:00Z"}',
        )
    if not clock.virtual:
        raise ValidationFailed.of(
            next(iter(body)),
            "this stack runs on the wall clock: its time cannot be moved",
            "start it with `tickwork local --virtual-time` (or LocalStack(clock="
            "LocalClock(virtual=True)) in a test)",
        )
    if "advance" in body:
        duration = parse_duration(body["advance"], "advance")
        if clock.now() > LAST_INSTANT - duration:
            raise ValidationFailed.of(
                "advance",
                f"{body['advance']!r} would take the stack's clock past {iso(LAST_INSTANT)}",
                "give a shorter duration: the stack's time ends there (its records and "
                "recurrences need years after it)",
            )
        target = clock.now() + duration
    else:
        given = body["to"]
        if not isinstance(given, str):
            raise ValidationFailed.of("to", f"{given!r} is not a time", "give ISO 8601 with a zone")
        target = parse_iso(given, "to")
        now = clock.now()
        if target < now - timedelta(seconds=1):
            raise ValidationFailed.of(
                "to",
                f"{iso(target)} is before the stack's now ({iso(now)}): virtual time never "
                "goes backwards",
                "give a later time, or start a fresh stack (tickwork local --fresh)",
            )
        if target > LAST_INSTANT:
            raise ValidationFailed.of(
                "to",
                f"{iso(target)} is past {iso(LAST_INSTANT)}, where the stack's time ends",
                "give an earlier time (its records and recurrences need years after it)",
            )
        if target - now > MAX_DURATION:
            raise ValidationFailed.of(
                "to",
                f"{iso(target)} is more than 100 years after the stack's now ({iso(now)})",
                "give a time within 100 years, as an advance's duration is",
            )
    return advanced(machine.advance_to(target.timestamp()))


def advanced(done: Advanced) -> dict[str, Any]:
    return {
        "from": iso(datetime.fromtimestamp(done.start, UTC)),
        "to": iso(datetime.fromtimestamp(done.end, UTC)),
        "steps": done.steps,
        "work": done.work,
        "scheduledRuns": done.runs,
        "scheduledRunsLeftOut": done.skipped,
        "seconds": round(done.seconds, 3),
    }


def saved_offset(state_dir: Path) -> float | None:
    """The offset a virtual-time stack in ``state_dir`` last had (None: it never ran one)."""
    path = state_dir / CLOCK_FILE
    if not path.exists():
        return None
    return float(json.loads(path.read_text())["offsetSeconds"])


def saving_offset(state_dir: Path, clock: LocalClock) -> None:
    """Keep the clock's offset in ``state_dir`` now and after every jump."""
    path = state_dir / CLOCK_FILE

    def save(offset: float) -> None:
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps({"offsetSeconds": offset}))
        temporary.replace(path)

    save(clock.offset)
    clock.on_jump(save)
