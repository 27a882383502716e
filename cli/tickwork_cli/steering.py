"""Steering live actions from the command line: cancel, pause, resume, run now, retry — one
action by id, or (cancel, pause, resume) a whole group or id prefix, a page at a time with its
progress shown."""

from __future__ import annotations

from typing import Any

import click

from tickwork.answers import BulkAnswer, ChangeAnswer
from tickwork.dependencies import Dependencies
from tickwork.domain.selection import Selection
from tickwork.steering.bulk import bulk_change
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.retry import retry_action
from tickwork.steering.run_now import run_now
from tickwork.steering.stop import cancel_action
from tickwork_cli import render
from tickwork_cli.context import Context, guard, json_option, pass_context

__all__ = ["COMMANDS"]

_PAGE = 100
group_option = click.option("--group", help="Every action of this group (instead of one ID).")
prefix_option = click.option("--prefix", help="Every action whose id starts with this.")
note_option = click.option("--note", help="Why: kept on the record and shown with the action.")


@click.command()
@click.argument("action_id", required=False)
@group_option
@prefix_option
@json_option
@pass_context
def cancel(
    context: Context, action_id: str | None, group: str | None, prefix: str | None, as_json: bool
) -> None:
    """Cancel an action (or a group / id prefix) and stop its waiting execution.

    Inside the lock before a fire (LockSeconds, default 2 minutes) that fire happens as
    planned: a recurrence is cancelled right after it, a one-off cannot be cancelled any more.
    """
    _one_or_many(context, "cancel", action_id, group, prefix, None, as_json)


@click.command()
@click.argument("action_id", required=False)
@group_option
@prefix_option
@note_option
@json_option
@pass_context
def pause(
    context: Context,
    action_id: str | None,
    group: str | None,
    prefix: str | None,
    note: str | None,
    as_json: bool,
) -> None:
    """Pause an action (or a group / id prefix): it does not fire until resumed."""
    _one_or_many(context, "pause", action_id, group, prefix, note, as_json)


@click.command()
@click.argument("action_id", required=False)
@group_option
@prefix_option
@note_option
@json_option
@pass_context
def resume(
    context: Context,
    action_id: str | None,
    group: str | None,
    prefix: str | None,
    note: str | None,
    as_json: bool,
) -> None:
    """Resume a paused action (or a group / id prefix): its next fire is computed from now;
    fires missed while it was paused are not caught up."""
    _one_or_many(context, "resume", action_id, group, prefix, note, as_json)


@click.command(name="run-now")
@click.argument("action_id")
@click.option("--request-id", help="Your id for this request: sending it again fires nothing.")
@json_option
@pass_context
def run_now_(context: Context, action_id: str, request_id: str | None, as_json: bool) -> None:
    """Fire an action once, now, without moving its schedule (a one-off fires now instead)."""
    deps = context.target.dependencies()
    render.echo_result(guard(lambda: run_now(action_id, deps, request_id)).to_wire(), as_json)


@click.command()
@click.argument("action_id")
@click.option("--occurrence", type=int, help="Which failed fire to run again (default: latest).")
@json_option
@pass_context
def retry(context: Context, action_id: str, occurrence: int | None, as_json: bool) -> None:
    """Run a failed fire again: a FAILED action's failed occurrence, resuming its schedule, or
    the failed fire of an action that went on or paused after it."""
    deps = context.target.dependencies()
    render.echo_result(guard(lambda: retry_action(action_id, deps, occurrence)).to_wire(), as_json)


COMMANDS = (cancel, pause, resume, run_now_, retry)


def _one_or_many(
    context: Context,
    operation: str,
    action_id: str | None,
    group: str | None,
    prefix: str | None,
    note: str | None,
    as_json: bool,
) -> None:
    if (action_id is None) == (group is None and prefix is None):
        raise click.UsageError(f"give an ID, or --group and/or --prefix, to {operation}")
    deps = context.target.dependencies()
    if action_id is not None:
        answer = guard(lambda: _single(operation, action_id, note, deps))
        render.echo_result(answer.to_wire(), as_json)
        return
    selection = guard(lambda: Selection(group=group, prefix=prefix))
    _sweep(operation, selection, note, deps, as_json)


def _single(operation: str, action_id: str, note: str | None, deps: Dependencies) -> ChangeAnswer:
    if operation == "cancel":
        return cancel_action(action_id, deps)
    change = pause_action if operation == "pause" else resume_action
    return change(action_id, note, deps)


def _sweep(
    operation: str, selection: Selection, note: str | None, deps: Dependencies, as_json: bool
) -> None:
    """Every page of the selection, its progress on stderr, the tally at the end."""
    results: list[dict[str, Any]] = []
    cursor: str | None = None

    def next_page(at: str | None) -> BulkAnswer:
        return guard(lambda: bulk_change(operation, selection, deps, note, _PAGE, at))

    while True:
        page = next_page(cursor)
        results += [item.to_wire() for item in page.results]
        click.echo(f"{operation}: {len(results)} action(s) done", err=True)
        cursor = page.next_cursor
        if cursor is None:
            break
    tally: dict[str, int] = {}
    for result in results:
        tally[result["outcome"]] = tally.get(result["outcome"], 0) + 1
    render.echo_result({"matched": len(results), **tally, "results": results}, as_json)
