"""``tickwork time``: read the local stack's time, and move it on when it is virtual."""

from __future__ import annotations

import sys
import threading
from typing import Any

import click

from tickwork_cli import render
from tickwork_cli.context import Context, json_option, pass_context
from tickwork_client.stack_api import ApiError, StackApi

__all__ = ["time_"]


def _api(context: Context) -> StackApi:
    if context.stack:
        raise click.ClickException(
            "only the local stack has a clock of its own: a deployed stack runs on AWS's time; "
            "drop --stack to use the local one"
        )
    target = context.target
    url = target.outputs.get("ApiUrl")
    if not url:
        raise click.ClickException("the local stack serves no API: start it with `tickwork local`")
    return StackApi(url, target.api_signer())


def _call(call: Any) -> dict[str, Any]:
    try:
        answer: dict[str, Any] = call()
        return answer
    except ApiError as error:
        raise click.ClickException(str(error)) from error


@click.group(name="time", invoke_without_command=True)
@json_option
@pass_context
@click.pass_context
def time_(click_context: click.Context, context: Context, as_json: bool) -> None:
    """The local stack's time: the wall clock, or virtual time (tickwork local --virtual-time).

    \b
    tickwork time                                   # now, and whether it is virtual
    tickwork time advance 30d                       # everything due in 30 days happens, in order
    tickwork time advance --to 2027-01-01T09:00:00Z

    Virtual time flows with the wall clock until it is moved on; it never goes backwards.
    Fires happen at their own virtual instants (never early, exactly once), retries and the
    pump's and reconciler's runs too; the API, the dashboard and the outbox show that time.
    """
    if click_context.invoked_subcommand is not None:
        return
    reading = _call(lambda: _api(context).local_time())
    if as_json:
        render.echo_result(reading, True)
        return
    kind = "virtual" if reading.get("virtual") else "the wall clock"
    click.echo(f"{reading['now']} ({kind})")
    if reading.get("virtual"):
        ahead = float(reading.get("offsetSeconds", 0))
        click.echo(f"  {_span(ahead)} ahead of the wall clock ({reading['wallClock']})")


@time_.command()
@click.argument("duration", required=False)
@click.option("--to", "to", metavar="ISO-TIME", help="Move to this instant instead.")
@json_option
@pass_context
def advance(context: Context, duration: str | None, to: str | None, as_json: bool) -> None:
    """Move a virtual-time local stack on by DURATION (30s, 90m, 1h30m, 30d, 1w, P30D) or
    --to an instant; returns once everything due by then has happened.

    \b
    tickwork time advance 1h
    tickwork time advance 30d
    tickwork time advance --to 2027-03-29T02:30:00+02:00
    """
    if (duration is None) == (to is None):
        raise click.UsageError("give a DURATION (e.g. 30d) or --to ISO-TIME, one of them")
    api = _api(context)
    body = {"advance": duration} if duration is not None else {"to": str(to)}
    done = threading.Event()
    if not as_json:
        threading.Thread(target=_progress, args=(api, done), daemon=True).start()
    try:
        answer = api.advance_time(body)
    except ApiError as error:
        raise click.ClickException(f"{error}{_AFTER.get(error.error, '')}") from error
    finally:
        done.set()
    if as_json:
        render.echo_result(answer, True)
        return
    click.echo(
        f"advanced to {answer['to']} (from {answer['from']}) in {answer['seconds']:.1f}s: "
        f"{answer['steps']} step(s), {answer['work']} piece(s) of work, "
        f"{answer['scheduledRuns']} scheduled run(s) made, "
        f"{answer['scheduledRunsLeftOut']} left out (they would have found nothing)"
    )


# What a failed advance may have left behind, by how it failed.
_AFTER = {
    "Disconnected": " (the stack hung up mid-advance, stopped or killed: the clock may have moved "
    "part of the way; `tickwork time` reads where it got to once the stack runs again)",
    "Timeout": " (the stack is still moving its clock on: `tickwork time` shows where it has "
    "got to; ask again for the rest once it is done)",
}


def _progress(api: StackApi, done: threading.Event) -> None:
    """Every 2 s of a long advance, where virtual time has got to (on stderr)."""
    while not done.wait(2.0):
        try:
            now = api.local_time()["now"]
        except ApiError:
            return
        print(f"  ... at {now}", file=sys.stderr, flush=True)


def _span(seconds: float) -> str:
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        f"{days}d" if days else "",
        f"{hours}h" if hours else "",
        f"{minutes}m" if minutes else "",
    ]
    return "".join(parts) or f"{secs}s"
