"""``tickwork calendar``: the named exclusion calendars schedules refer to (their dates and
weekly business hours), kept in the stack — the local one or a deployed one (``--stack``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tickwork.domain.errors import ValidationFailed
from tickwork.steering.calendars import (
    calendar_view,
    delete_calendar,
    get_calendar,
    list_calendars,
    put_calendar,
)
from tickwork_cli import render
from tickwork_cli.context import Context, guard, json_option, pass_context

__all__ = ["calendar"]


@click.group()
def calendar() -> None:
    """Exclusion calendars: put, list, show, delete. A schedule names one with --calendar (the
    Start's calendar) and says with --on-excluded SKIP or SHIFT what becomes of an occurrence
    it excludes.

    \b
    tickwork calendar put uk-bank-holidays --timezone Europe/London \\
        --date 2026-12-25 --date 2026-12-28 --hours "MON-FRI=09:00-17:00"
    tickwork schedule --id report:daily --cron "0 10 * * *" \\
        --calendar uk-bank-holidays --on-excluded SHIFT
    tickwork next "0 10 * * *" --calendar uk-bank-holidays --on-excluded SHIFT
    """


def _hours(given: tuple[str, ...]) -> dict[str, list[str]] | None:
    if not given:
        return None
    hours: dict[str, list[str]] = {}
    for text in given:
        days, sep, windows = text.partition("=")
        if not sep or not days.strip() or not windows.strip():
            raise ValidationFailed.of(
                "--hours",
                f"{text!r} is not DAYS=HH:MM-HH:MM",
                'give "MON-FRI=09:00-17:00" (windows separated by commas)',
            )
        hours.setdefault(days.strip().upper(), []).extend(w.strip() for w in windows.split(","))
    return hours


@calendar.command(name="put")
@click.argument("name")
@click.option("--timezone", help="The IANA zone its dates and hours are in (default UTC).")
@click.option(
    "--date",
    "dates",
    multiple=True,
    metavar="YYYY-MM-DD",
    help="A date excluded whole; give it once per date.",
)
@click.option(
    "--hours",
    multiple=True,
    metavar="DAYS=HH:MM-HH:MM",
    help="Weekly hours fires "
    'are allowed in, e.g. "MON-FRI=09:00-17:00" (a weekday not named is excluded '
    "whole); give it once per weekday or range.",
)
@click.option("--description", help="What it is.")
@click.option(
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A JSON file with timezone, dates, hours and description (flags add to it).",
)
@click.option(
    "--hold-schedules",
    is_flag=True,
    help="Write it even if it allows some live schedule naming it no fire within the search "
    "bound (1,100 days): those are held (paused on it, in attention) until it allows one. "
    "Without it such a calendar is refused, naming them.",
)
@json_option
@pass_context
def put(
    context: Context,
    name: str,
    timezone: str | None,
    dates: tuple[str, ...],
    hours: tuple[str, ...],
    description: str | None,
    path: Path | None,
    hold_schedules: bool,
    as_json: bool,
) -> None:
    """Create the calendar NAME, or replace it (sealed by the stack): schedules that name it
    follow the new one from their next fire planned on, and each is planned again on it at
    once — a fire the old one pushed out comes back (plannedAgain), a schedule held on it
    resumes once it allows a fire (resumed). A calendar that would leave a live schedule with
    no fire is refused, naming them, unless --hold-schedules."""
    body: dict[str, Any] = {}
    if path is not None:
        try:
            body = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise click.UsageError(f"--file {path} is not a JSON file: {error}") from error
        if not isinstance(body, dict):
            raise click.UsageError(
                f"--file {path} holds a JSON {type(body).__name__}, not an object: give "
                '{"timezone": "Europe/London", "dates": ["2026-12-25"], '
                '"hours": {"MON-FRI": ["09:00-17:00"]}}'
            )
    if timezone is not None:
        body["timezone"] = timezone
    # Flags add to the file's dates and hours; a file's field of the wrong shape is left for
    # the calendar's checks to refuse, naming it.
    if dates and isinstance(body.get("dates", []), list):
        body["dates"] = [*body.get("dates", []), *dates]
    parsed = guard(lambda: _hours(hours))
    if parsed is not None and isinstance(body.get("hours") or {}, dict):
        body["hours"] = {**(body.get("hours") or {}), **parsed}
    if description is not None:
        body["description"] = description
    deps = context.target.dependencies()
    put = guard(lambda: put_calendar(name, body, deps, hold_schedules=hold_schedules))
    shown = {"outcome": "created" if put.created else "replaced", **put.calendar.to_dict()}
    for key, ids in [
        ("plannedAgain", put.planned_again),
        ("resumed", put.resumed),
        ("held", put.held),
    ]:
        if ids:
            shown[key] = ids
    render.echo_result(shown, as_json)


@calendar.command(name="show")
@click.argument("name")
@json_option
@pass_context
def show(context: Context, name: str, as_json: bool) -> None:
    """One calendar: its zone, dates, hours and version."""
    deps = context.target.dependencies()
    render.echo_result(calendar_view(guard(lambda: get_calendar(name, deps)), deps), as_json)


@calendar.command(name="list")
@json_option
@pass_context
def list_(context: Context, as_json: bool) -> None:
    """Every calendar in the stack, by name."""
    deps = context.target.dependencies()
    found = [calendar_view(c, deps) for c in guard(lambda: list_calendars(deps))]
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    if not found:
        click.echo("no calendars: tickwork calendar put NAME --date YYYY-MM-DD ...")
    for item in found:
        hours = "; ".join(f"{d} {' '.join(w)}" for d, w in item.get("hours", {}).items())
        click.echo(
            f"{item['name']}  {item['timezone']}  {len(item['dates'])} dates"
            + (f"  hours: {hours}" if hours else "")
            + f"  v{item['version']}"
        )


@calendar.command(name="delete")
@click.argument("name")
@json_option
@pass_context
def delete(context: Context, name: str, as_json: bool) -> None:
    """Delete the calendar NAME; schedules that name it keep the copy they hold."""
    deps = context.target.dependencies()
    guard(lambda: delete_calendar(name, deps))
    render.echo_result({"outcome": "deleted", "name": name}, as_json)
