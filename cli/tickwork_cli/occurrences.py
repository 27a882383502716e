"""One occurrence of a recurrence from the command line: skip it, move it, undo that, and see
the coming ones with their skips and moves (`tickwork next --id ID`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import click

from tickwork.dependencies import Dependencies
from tickwork.domain.errors import ActionNotFound
from tickwork.domain.occurrence_changes import upcoming
from tickwork.domain.times import iso, parse_iso
from tickwork.usecases.answers import ChangeAnswer
from tickwork.usecases.occurrences import (
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


COMMANDS = (skip, move, restore)


def coming_occurrences(deps: Dependencies, action_id: str, count: int) -> list[dict[str, Any]]:
    """The action's next ``count`` occurrences, as `tickwork next --id` prints them."""
    action = deps.records.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    return [
        {
            "occurrence": item.number,
            "scheduledTime": iso(item.scheduled),
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
