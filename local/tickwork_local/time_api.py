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
import math
import time
from collections.abc import Iterable
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
    "StateDirTimeRefused",
    "advance_request",
    "clock_reading",
    "latest_change",
    "saved_offset",
    "saving_offset",
    "time_from_records",
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

        def within_time(target: float) -> None:
            if target > LAST_INSTANT.timestamp():
                raise ValidationFailed.of(
                    "advance",
                    f"{body['advance']!r} would take the stack's clock past {iso(LAST_INSTANT)}",
                    "give a shorter duration: the stack's time ends there (its records and "
                    "recurrences need years after it)",
                )

        # Counted from the clock once an advance already running has ended, not from now.
        within_time(clock.timestamp() + duration.total_seconds())  # refused before any wait
        return advanced(machine.advance(duration.total_seconds(), check=within_time))
    given = body["to"]
    if not isinstance(given, str):
        raise ValidationFailed.of(
            "to",
            f"{json.dumps(given)} is not a time",
            'give ISO 8601 with a zone as a string, e.g. "2027-03-01T00:00:00Z"',
        )
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


class StateDirTimeRefused(Exception):
    """A state dir whose kept virtual time cannot be read, or whose records were changed later
    than the wall clock a stack would start on: starting it would take time backwards."""


# Records changed up to this far ahead of the wall clock are the machine's clock being set
# back a little (NTP), not a state dir kept on virtual time.
WALL_CLOCK_SKEW = timedelta(minutes=5)


def saved_offset(state_dir: Path) -> float | None:
    """The offset a virtual-time stack in ``state_dir`` last had (None: it never ran one);
    ``StateDirTimeRefused`` for a clock file that is not one the stack wrote."""
    path = state_dir / CLOCK_FILE
    if not path.exists():
        return None
    fix = (
        f"put back the {CLOCK_FILE} this state dir's stack wrote, or start over with "
        f"`tickwork local --fresh` (it drops the actions kept in {state_dir})"
    )
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise StateDirTimeRefused(f"{path} cannot be read as JSON ({error}): {fix}") from None
    offset = kept.get("offsetSeconds") if isinstance(kept, dict) else None
    if isinstance(offset, bool) or not isinstance(offset, int | float) or not math.isfinite(offset):
        raise StateDirTimeRefused(
            f'{path}: "offsetSeconds" must be a number of seconds (the virtual clock\'s lead '
            f"on the wall clock), not {json.dumps(offset)}: {fix}"
        )
    if not 0 <= time.time() + offset <= LAST_INSTANT.timestamp():
        raise StateDirTimeRefused(
            f'{path}: "offsetSeconds" {offset:g} puts the stack\'s time outside 1970 to '
            f"{iso(LAST_INSTANT)}: {fix}"
        )
    return float(offset)


def latest_change(items: Iterable[dict[str, Any]]) -> datetime | None:
    """The latest instant any of these action records (items of the actions table in DynamoDB
    JSON, as the journal keeps them) was changed at: their ``updatedAt``. A stack started on
    their state dir must not begin before it."""
    latest: datetime | None = None
    for item in items:
        value = item.get("updatedAt")
        text = value.get("S") if isinstance(value, dict) else None
        if not isinstance(text, str):
            continue  # the stack's own items (counters, tabs): no updatedAt
        try:
            changed = parse_iso(text, "updatedAt")
        except ValidationFailed:
            continue
        latest = changed if latest is None or changed > latest else latest
    return latest


def time_from_records(clock: LocalClock, latest: datetime | None, state_dir: Path) -> str | None:
    """Keep a starting stack's clock at or after its records' ``latest`` change: virtual time
    moves on to it (a note saying so is returned); a wall clock behind it is refused
    (``StateDirTimeRefused``: the records were kept on virtual time, whose file is gone)."""
    if latest is None or latest.timestamp() <= clock.timestamp():
        return None
    if clock.virtual:
        clock.jump(latest.timestamp())
        return (
            f"moved on to {iso(latest)}, when the actions kept in {state_dir} were last changed "
            "(virtual time never goes backwards)"
        )
    if latest - clock.now() <= WALL_CLOCK_SKEW:
        return None
    raise StateDirTimeRefused(
        f"the actions kept in {state_dir} were last changed at {iso(latest)}, after the wall "
        f"clock's now ({iso(clock.now())}): they were kept on virtual time, and "
        f"{state_dir / CLOCK_FILE}, which held it, is gone. Start with `tickwork local "
        "--virtual-time` to go on from there, or with `--fresh` to start over (it drops them)"
    )


def saving_offset(state_dir: Path, clock: LocalClock) -> None:
    """Keep the clock's offset in ``state_dir`` now and after every jump."""
    path = state_dir / CLOCK_FILE

    def save(offset: float) -> None:
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps({"offsetSeconds": offset}))
        temporary.replace(path)

    save(clock.offset)
    clock.on_jump(save)
