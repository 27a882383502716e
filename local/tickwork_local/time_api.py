"""The local stack's time over HTTP: ``GET /local/time`` reads it, ``POST /local/time`` moves
virtual time on (``tickwork time``, the dashboard, a team's tests in another process).

``POST`` takes ``{"advance": "30d"}`` (a duration as ``tickwork schedule --in`` takes it) or
``{"to": "2027-03-01T00:00:00Z"}`` and answers when everything due by then has happened: the
instants before and after, the steps, the work done and the scheduled runs made and left out.
A field it cannot take is refused with the field and the fix (a 400); so is a time before now
(virtual time never goes backwards) and a stack on the wall clock.
"""

from __future__ import annotations

import contextlib
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
from tickwork_local.keys import write_private
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

    def not_before_now(_: float) -> None:
        now = clock.now()
        if target < now - timedelta(seconds=1):
            raise ValidationFailed.of(
                "to",
                f"{iso(target)} is before the stack's now ({iso(now)}): virtual time never "
                "goes backwards",
                "give a later time, or start a fresh stack (tickwork local --fresh)",
            )

    not_before_now(0.0)
    now = clock.now()
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
    # Checked again once an advance already running has ended: it may have passed the target.
    return advanced(machine.advance_to(target.timestamp(), check=not_before_now))


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


# A kept clock may have flowed on past LAST_INSTANT (moved there, then left running); past this
# one it is not a clock the stack wrote (and dates stop working near the year 9999).
_READABLE_UNTIL = datetime(9900, 1, 1, tzinfo=UTC)
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
        f"delete it and start with `tickwork local --virtual-time`: the clock goes on from when "
        f"the actions kept in {state_dir} were last changed (or put back a copy of it, or start "
        "over with `--fresh`, which drops those actions)"
    )
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise StateDirTimeRefused(f"{path} cannot be read as JSON ({error}): {fix}") from None
    if not isinstance(kept, dict):
        raise StateDirTimeRefused(f'{path} must be an object {{"offsetSeconds": N}}: {fix}')
    kept_offset = kept.get("offsetSeconds")
    offset = math.nan  # a number, not a bool, finite, and one a float holds (not 1e400 as an int)
    if isinstance(kept_offset, int | float) and not isinstance(kept_offset, bool):
        with contextlib.suppress(OverflowError):
            offset = float(kept_offset)
    if not math.isfinite(offset):
        shown = json.dumps(kept_offset)
        raise StateDirTimeRefused(
            f'{path}: "offsetSeconds" must be a number of seconds (the virtual clock\'s lead '
            f"on the wall clock), not {shown if len(shown) <= 40 else shown[:40] + '…'}: {fix}"
        )
    if not 0 <= time.time() + offset <= _READABLE_UNTIL.timestamp():
        raise StateDirTimeRefused(
            f'{path}: "offsetSeconds" {offset:g} puts the stack\'s time outside 1970 to '
            f"{iso(_READABLE_UNTIL)}: {fix}"
        )
    return offset


def latest_change(items: Iterable[dict[str, Any]]) -> datetime | None:
    """The latest instant any of these action records (items of the actions table in DynamoDB
    JSON, as the journal keeps them) was changed at: their ``updatedAt``. A stack started on
    their state dir must not begin before it."""
    latest: datetime | None = None
    for item in items:
        value = item.get("updatedAt") if isinstance(item, dict) else None
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
    if latest > _READABLE_UNTIL:  # (a clock left flowing past LAST_INSTANT writes after it)
        raise StateDirTimeRefused(
            f"an action kept in {state_dir} was last changed at {iso(latest)}, past "
            f"{iso(_READABLE_UNTIL)}: no stack wrote that. Put back a copy of the state dir, or "
            "start over with `tickwork local --fresh` (it drops the actions kept there)"
        )
    if clock.virtual:
        clock.jump(latest.timestamp())
        return (
            f"moved on to {iso(latest)}, when the actions kept in {state_dir} were last changed "
            "(virtual time never goes backwards)"
        )
    if latest - clock.now() <= WALL_CLOCK_SKEW:
        return None
    raise StateDirTimeRefused(
        f"the actions kept in {state_dir} were last changed at {iso(latest)}, more than "
        f"{WALL_CLOCK_SKEW.total_seconds() / 60:g} minutes after the wall clock's now "
        f"({iso(clock.now())}): a stack on the wall clock would take them back in time. If they "
        f"were kept on virtual time ({state_dir / CLOCK_FILE}, which held it, is gone), start "
        "with `tickwork local --virtual-time` to go on from there; if this machine's clock was "
        "set back, set it right; or start over with `--fresh` (it drops them)"
    )


def saving_offset(state_dir: Path, clock: LocalClock) -> None:
    """Keep the clock's offset in ``state_dir`` now and after every jump."""
    path = state_dir / CLOCK_FILE

    def save(offset: float) -> None:
        write_private(path, json.dumps({"offsetSeconds": offset}))  # whole, or the last one

    save(clock.offset)
    clock.on_jump(save)
