"""``tickwork outbox``: what the local stack's fires sent (``tickwork_local.outbox``)."""

from __future__ import annotations

import json
from typing import Any

import click

from tickwork_cli import render
from tickwork_cli.context import Context, json_option, pass_context
from tickwork_local.outbox import OUTBOX_FILE, read_outbox

__all__ = ["outbox"]

KINDS = ("sms", "push", "email", "queue", "topic", "event", "webhook")
_SHOWN = 60


@click.command()
@click.option("--kind", type=click.Choice(KINDS), help="Only messages of this kind.")
@click.option("--id", "action_id", help="Only what this action's fires sent.")
@click.option("--limit", default=20, show_default=True, help="At most this many, newest first.")
@click.option("--read", "number", type=int, help="Show message NUMBER (from the list) whole.")
@json_option
@pass_context
def outbox(
    context: Context,
    kind: str | None,
    action_id: str | None,
    limit: int,
    number: int | None,
    as_json: bool,
) -> None:
    """What the local stack's fires sent, newest first, each with the fire that sent it.

    \b
    SMS, push and e-mail (as rendered), queue and topic messages, events and webhooks:
    tickwork outbox
    tickwork outbox --kind sms --id demo:sms
    tickwork outbox --read 3

    A deployed stack sends for real: its messages are in SNS, SES, SQS and your receivers.
    """
    if context.stack:
        raise click.ClickException(
            "the outbox is the local stack's: a deployed stack really sends (see the SNS, SES "
            "and SQS consoles, and your receivers); drop --stack to read the local one"
        )
    context.target  # noqa: B018 - a clear error when no local stack ran here
    read = read_outbox(context.state_dir / OUTBOX_FILE, kind, action_id)
    for note in read.skipped:
        click.echo(f"skipped {note}", err=True)
    messages = read.messages
    if number is not None:
        found = [m for m in messages if m.get("number") == number]
        if not found:
            raise click.ClickException(f"no message {number}: `tickwork outbox` lists them")
        render.echo_result(found[0], as_json)
        return
    shown = messages[: max(1, limit)]
    if as_json:
        click.echo(json.dumps(shown, indent=2))
        return
    if not shown:
        click.echo("nothing sent yet" + (" of that kind" if kind or action_id else ""))
        return
    if any(message.get("virtualTime") for message in shown):
        click.echo("times are virtual: the local stack ran on tickwork local --virtual-time")
    for message in shown:
        click.echo(_line(message))
    if len(messages) > len(shown):
        click.echo(f"... {len(messages) - len(shown)} older (--limit)")


def _line(message: dict[str, Any]) -> str:
    fire = message["fire"]
    text = str(message.get("subject") or message.get("body") or "").replace("\n", " ")
    if len(text) > _SHOWN:
        text = text[: _SHOWN - 1] + "…"
    return (
        f"#{message.get('number', '?'):<4} {message['at']}  {message['kind']:<7} "
        f"to {message.get('to')}  {text!r}  (fire {fire['id']} #{fire['occurrence']})"
    )
