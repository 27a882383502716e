"""One occurrence of a recurrence from the command line: skip it, move it, undo that, and see
the coming ones with their skips and moves (`tickwork next --id ID`); and backfill a past
range of them."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import click

from tickwork.answers import BackfillAnswer, ChangeAnswer, Done
from tickwork.dependencies import Dependencies
from tickwork.domain.action.upcoming import upcoming
from tickwork.domain.backfill import Overlap, occurrences_in
from tickwork.domain.errors import ActionNotFound
from tickwork.domain.fire_kinds import RANGE_TRIGGERS
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.schedule.wallclock import load_zone
from tickwork.domain.times import iso, parse_iso
from tickwork.steering.backfill import backfill as run_backfill
from tickwork.steering.occurrences import (
    Which,
    move_occurrence,
    restore_occurrence,
    skip_occurrence,
)
from tickwork_cli import render
from tickwork_cli.context import Context, guard, json_option, pass_context

__all__ = ["COMMANDS", "coming_occurrences"]

_LOCK = (
    "Inside the lock before the imminent occurrence (LockSeconds, default 2 minutes) it "
    "happens as planned and is refused."
)


def _which_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option(
        "--at", "at", metavar="TIME", help="The occurrence by its scheduled time (ISO 8601)."
    )(command)
    command = click.option(
        "--occurrence",
        "number",
        type=int,
        metavar="N",
        help="The occurrence by its number (`tickwork next --id ID` lists them).",
    )(command)
    return command


def _which(number: int | None, at: str | None) -> Which:
    return Which(number=number, at=None if at is None else parse_iso(at, "--at"))


def _run(context: Context, change: Callable[[Dependencies], ChangeAnswer], as_json: bool) -> None:
    deps = context.target.dependencies()
    render.echo_result(guard(lambda: change(deps)).to_wire(), as_json)


@click.command()
@click.argument("action_id")
@_which_options
@click.option("--note", help="Why: shown in the history and on the Schedule Skipped event.")
@json_option
@pass_context
def skip(
    context: Context,
    action_id: str,
    number: int | None,
    at: str | None,
    note: str | None,
    as_json: bool,
) -> None:
    """Skip one occurrence (--occurrence N or --at TIME): it is recorded SKIPPED at its time
    and the schedule goes on. Undo with `tickwork restore`."""
    _run(context, lambda deps: skip_occurrence(action_id, _which(number, at), note, deps), as_json)


skip.help = f"{skip.help} {_LOCK}"


@click.command()
@click.argument("action_id")
@_which_options
@click.option(
    "--to",
    "to",
    required=True,
    metavar="TIME",
    help="When it fires instead (ISO 8601): in the future, strictly between the occurrences "
    "before and after it.",
)
@click.option("--note", help="Why: shown in the history.")
@json_option
@pass_context
def move(
    context: Context,
    action_id: str,
    number: int | None,
    at: str | None,
    to: str,
    note: str | None,
    as_json: bool,
) -> None:
    """Move one occurrence (--occurrence N or --at TIME) to another time; the next one still
    fires where the schedule has it. Undo with `tickwork restore`."""

    def moved(deps: Dependencies) -> ChangeAnswer:
        return move_occurrence(action_id, _which(number, at), parse_iso(to, "--to"), note, deps)

    _run(context, moved, as_json)


move.help = f"{move.help} {_LOCK}"


@click.command()
@click.argument("action_id")
@_which_options
@click.option("--note", help="Why: shown in the history.")
@json_option
@pass_context
def restore(
    context: Context,
    action_id: str,
    number: int | None,
    at: str | None,
    note: str | None,
    as_json: bool,
) -> None:
    """Undo the skip or move of one occurrence (--occurrence N or --at TIME): it fires as its
    schedule says."""
    _run(
        context,
        lambda deps: restore_occurrence(action_id, _which(number, at), note, deps),
        as_json,
    )


@click.command()
@click.argument("action_id")
@click.option(
    "--from", "start", required=True, metavar="TIME", help="The range's start (ISO 8601)."
)
@click.option(
    "--to", "end", required=True, metavar="TIME", help="The range's end (ISO 8601), not after now."
)
@click.option(
    "--overlap",
    type=click.Choice([str(o) for o in Overlap], case_sensitive=False),
    default=str(Overlap.REFUSE),
    show_default=True,
    help="Occurrences of the action's own schedule (at or after its creation) in the range: "
    "REFUSE the backfill, or SKIP them and run the others.",
)
@click.option("--note", help="Why: kept with the backfill while it runs.")
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    metavar="SECONDS",
    help="Wait up to this long for every occurrence to run, showing progress.",
)
@json_option
@pass_context
def backfill(
    context: Context,
    action_id: str,
    start: str,
    end: str,
    overlap: str,
    note: str | None,
    wait: float,
    as_json: bool,
) -> None:
    """Run each occurrence of a past range now, once (Temporal's backfill): as fires recorded
    BACKFILL, each tick carrying its occurrence's own scheduled time and a key of its own. A
    few run at a time and each one recorded runs the next; occurrences backfilled before never
    run again, so the same command again goes on where it is.

    \b
    tickwork backfill report:7 --from 2026-11-01T00:00:00Z --to 2026-11-07T23:00:00Z --wait 60
    """
    deps = context.target.dependencies()
    answer = guard(
        lambda: run_backfill(
            action_id,
            parse_iso(start, "--from"),
            parse_iso(end, "--to"),
            Overlap(overlap.upper()),
            deps,
            note=note,
        )
    )
    if wait and answer.outcome is not Done.UNCHANGED:
        _wait_for_backfill(deps, answer, wait, as_json)
    render.echo_result(answer.to_wire(), as_json)


def _wait_for_backfill(
    deps: Dependencies, answer: BackfillAnswer, wait: float, as_json: bool
) -> None:
    """Until no backfill waits and none of its fires runs (or ``wait`` passes), showing how
    many of the range's occurrences have run."""
    request = answer.request
    if request is None:
        return
    deadline = time.monotonic() + wait
    shown = -1
    while True:
        action = deps.records.get(answer.action_id)
        if action is None:
            return
        running = sum(1 for m in action.manual.in_flight if m.trigger in RANGE_TRIGGERS)
        asked = occurrences_in(action.schedule, request.start, request.end)
        held = sum(1 for o in asked if any(span.holds(o) for span in action.backfilled))
        ran = held - answer.already - running
        if ran != shown and not as_json:
            click.echo(f"backfill: {ran} of {answer.total - answer.already} run", err=True)
            shown = ran
        if not running and action.backfill is None:
            return
        if time.monotonic() >= deadline:
            click.echo(f"backfill of {answer.action_id} goes on after {wait:g}s", err=True)
            return
        time.sleep(0.5)


COMMANDS = (skip, move, restore, backfill)


def coming_occurrences(deps: Dependencies, action_id: str, count: int) -> list[dict[str, Any]]:
    """The action's next ``count`` occurrences, as `tickwork next --id` prints them."""
    action = deps.records.get(check_steered_id(action_id, "--id"))
    if action is None:
        raise ActionNotFound(action_id)
    zone = load_zone(action.schedule.timezone)
    return [
        {
            "occurrence": item.number,
            "scheduledTime": iso(item.scheduled),
            # on the wall clock of the action's zone, beside UTC
            "scheduledLocal": item.scheduled.astimezone(zone).isoformat(),
            "timezone": zone.key,
            "firesAt": None if item.fires_at is None else iso(item.fires_at),
            "change": _described(item.scheduled, item.fires_at, item.change is not None),
            "note": item.change.note if item.change else None,
        }
        for item in upcoming(action, count)
    ]


def _described(scheduled: datetime, fires_at: datetime | None, changed: bool) -> str | None:
    if fires_at is None:
        return "skipped"
    if changed and fires_at != scheduled:
        return f"moved to {iso(fires_at)}"
    return None
