"""``tickwork``: schedule, watch and steer actions on a local or deployed tickwork stack.

Every command talks to the local stack (``make run``) unless ``--stack NAME`` names a
deployed one. Read commands take ``--json`` for scripts.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from tickwork.domain.action import Status
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.events import INBOUND, DetailType
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.json_text import loads_strict
from tickwork.domain.preview import (
    around_dst_change,
    detail_fire_times,
    expression_detail,
    format_fire_times,
)
from tickwork.domain.selection import Selection
from tickwork.domain.times import parse_iso
from tickwork.fire.calendar_reads import named_calendar
from tickwork.fire.start_record import check_start, spec_hash
from tickwork.steering.lock import is_locked, refuse_if_locked_one_off
from tickwork.views import action_summary, action_view
from tickwork_cli import render
from tickwork_cli.calendars import calendar
from tickwork_cli.context import (
    DEFAULT_STATE_DIR,
    Context,
    guard,
    json_option,
    pass_context,
    problem_lines,
    tsv_option,
)
from tickwork_cli.occurrences import COMMANDS as OCCURRENCE_COMMANDS
from tickwork_cli.occurrences import coming_occurrences
from tickwork_cli.outbox import outbox
from tickwork_cli.start_flags import field_option, flags_of_fields, start_detail, start_options
from tickwork_cli.steering import COMMANDS
from tickwork_cli.target import TargetNotFound
from tickwork_cli.templates import templates
from tickwork_cli.time_travel import time_
from tickwork_client.publisher import BusRefused, TickworkClient

CLI_SOURCE = "tickwork.cli"


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option(
    "--stack", envvar="TICKWORK_STACK", help="A deployed stack's name (default: the local stack)."
)
@click.option("--region", envvar="AWS_REGION", help="AWS region of a deployed stack.")
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path),
    default=DEFAULT_STATE_DIR,
    show_default=True,
    envvar="TICKWORK_STATE_DIR",
    help="Where the local stack keeps its state and endpoint file.",
)
@click.version_option(package_name="tickwork")
@click.pass_context
def cli(ctx: click.Context, stack: str | None, region: str | None, state_dir: Path) -> None:
    """Durable scheduled actions: schedule, watch and steer them.

    \b
    Local stack:     tickwork local            (or: make run)
    Schedule:        tickwork schedule --id reminder:1 --in 30s
    Watch:           tickwork list; tickwork show reminder:1
    Steer:           tickwork pause reminder:1 --note "holiday"; tickwork resume reminder:1
                     tickwork run-now reminder:1; tickwork cancel --group subscription-42
    Preview a cron:  tickwork next "cron(0 9 ? * MON-FRI *)" --timezone Asia/Kuala_Lumpur
    """
    ctx.obj = Context(stack, region, state_dir)


@cli.command()
@click.option(
    "--port", default=4566, show_default=True, help="Port of the emulated AWS endpoint (127.0.0.1)."
)
@click.option(
    "--api-port",
    default=4567,
    show_default=True,
    help="Port of the HTTP API and dashboard (127.0.0.1).",
)
@click.option("--fresh", is_flag=True, help="Forget saved state and start empty.")
@click.option(
    "--parameter",
    "parameters",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a template parameter, e.g. LockSeconds=5 (repeatable).",
)
@click.option(
    "--api-auth",
    type=click.Choice(["token", "sigv4"]),
    default="token",
    show_default=True,
    help="How the local API authorises calls: a bearer token printed at start, or SigV4 "
    "with the local credentials, as the deployed API does (use `tickwork dashboard`).",
)
@click.option(
    "--max-open-executions",
    type=click.IntRange(min=1),
    default=None,
    help="Refuse StartExecution with ExecutionLimitExceeded once this many executions run, "
    "as AWS does at the account's quota (1,000,000 by default); unset: no quota.",
)
@click.option(
    "--virtual-time",
    is_flag=True,
    help="Run on a clock of its own that flows with the wall clock until moved on with "
    "`tickwork time advance 30d`: a month of a schedule in seconds. Kept in --state-dir.",
)
@pass_context
def local(
    context: Context,
    port: int,
    api_port: int,
    fresh: bool,
    parameters: tuple[str, ...],
    api_auth: str,
    max_open_executions: int | None,
    virtual_time: bool,
) -> None:
    """Run the whole stack on this machine until Ctrl-C (no AWS account needed).

    An emulated AWS endpoint on 127.0.0.1 built from template.yaml; the functions run in this
    process; state in --state-dir survives a restart, and pending actions fire exactly once.
    """
    from tickwork_local.journal import JournalCorrupt
    from tickwork_local.moto_version import UnsupportedMoto
    from tickwork_local.server import PortInUse
    from tickwork_local.service import run_local
    from tickwork_local.state_lock import StateDirInUse
    from tickwork_local.time_api import StateDirTimeRefused

    try:
        run_local(
            port,
            context.state_dir,
            fresh,
            _pairs(parameters),
            api_port,
            api_auth,
            max_open_executions,
            virtual_time,
        )
    except (
        UnsupportedMoto,
        PortInUse,
        StateDirInUse,
        StateDirTimeRefused,
        JournalCorrupt,
    ) as refused:
        raise click.ClickException(str(refused)) from refused


@cli.command()
@click.option("--actions", default=1.0, show_default=True, help="Seconds between demo steps.")
def demo(actions: float) -> None:
    """Start a throwaway local stack, schedule sample actions from events/demo/, watch them fire."""
    from tickwork_cli.demo import run_demo
    from tickwork_local.moto_version import UnsupportedMoto
    from tickwork_local.server import PortInUse

    try:
        code = run_demo(lambda line: cli.main(line, standalone_mode=False), actions)
    except (UnsupportedMoto, PortInUse) as refused:
        raise click.ClickException(str(refused)) from refused
    raise SystemExit(code)


@cli.command()
@click.option(
    "--stack",
    "stack_name",
    help="A deployed stack's name (also taken before the command; default: the local stack).",
)
@click.option("--port", default=4568, show_default=True, help="Port of the dashboard (127.0.0.1).")
@click.option("--open", "open_browser", is_flag=True, help="Open the dashboard in a browser.")
@pass_context
def dashboard(context: Context, stack_name: str | None, port: int, open_browser: bool) -> None:
    """Serve a stack's dashboard and API docs on 127.0.0.1 until Ctrl-C.

    The page's API calls are forwarded to the stack's API signed with your own AWS
    credentials (SigV4), so the deployed API stays IAM-only and no credential reaches the
    browser. Open the printed link: it carries this dashboard's token (#token=...).
    """
    from tickwork_cli.dashboard import serving_dashboard

    if stack_name:
        context.stack = stack_name
    target = context.target
    api_url = target.outputs.get("ApiUrl")
    if not api_url:
        raise click.ClickException("the stack has no ApiUrl output: is its API deployed?")
    try:
        signer = target.api_signer()
    except TargetNotFound as missing:
        raise click.ClickException(str(missing)) from missing
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    with serving_dashboard(api_url, signer, port) as (url, token):
        link = f"{url}/#token={token}"
        click.echo(f"tickwork dashboard of {context.stack or 'the local stack'}: {api_url}")
        click.echo(f"  Dashboard: {link}")
        click.echo(f"  API docs:  {url}/docs#token={token}")
        click.echo("  (loopback only; calls are signed with your credentials; Ctrl-C stops)")
        if open_browser:
            import webbrowser

            webbrowser.open(link)
        while not stopping.wait(0.5):
            pass


@cli.command()
@pass_context
def outputs(context: Context) -> None:
    """The stack's outputs as JSON (bus, table, state machine; endpoint URL when local)."""
    click.echo(json.dumps(context.target.describe(), indent=2))


@cli.command(name="env")
@pass_context
def env_(context: Context) -> None:
    """Shell exports for the stack's tools: `eval "$(tickwork env)"`.

    Where it cannot run (no stack found) it exits 1 and prints `false` for the eval, so
    `eval "$(tickwork env)" && aws ...` stops there. Where `tickwork` itself is not found
    (the venv not active), the shell's eval succeeds on nothing: use
    `eval "$(tickwork env || echo false)"` in scripts.

    \b
    For the local stack: AWS_ENDPOINT_URL and the dummy credentials it takes (so `aws` and
    boto3 reach it with no AWS set up), AWS_REGION, and TICKWORK_BUS, TICKWORK_TABLE,
    TICKWORK_STATE_MACHINE_ARN, TICKWORK_API_URL, TICKWORK_API_TOKEN, TICKWORK_STATE_DIR.
    For a deployed stack (--stack NAME): AWS_REGION and the TICKWORK_ names of its outputs;
    your own credentials are used as they are.
    """
    import shlex

    try:
        target = context.target
    except click.ClickException:
        # Read by `eval "$(tickwork env)"`: a statement that fails, so the eval does too (and
        # `&&` after it stops) instead of leaving the shell on whatever AWS it had.
        if not sys.stdout.isatty():
            click.echo("false  # tickwork env failed: see the error above")
        raise
    values: dict[str, str | None] = {}
    if target.endpoint_url:
        values |= {
            "AWS_ENDPOINT_URL": target.endpoint_url,
            "AWS_ACCESS_KEY_ID": "tickwork-local",
            "AWS_SECRET_ACCESS_KEY": "tickwork-local",
            "AWS_SESSION_TOKEN": "tickwork-local",
            "TICKWORK_STATE_DIR": str(context.state_dir.resolve()),
        }
    outputs = target.outputs
    values |= {
        "AWS_REGION": target.region,
        "AWS_DEFAULT_REGION": target.region,
        "TICKWORK_BUS": outputs.get("EventBusName"),
        "TICKWORK_TABLE": outputs.get("ActionsTableName"),
        "TICKWORK_STATE_MACHINE_ARN": outputs.get("StateMachineArn"),
        "TICKWORK_API_URL": (outputs.get("ApiUrl") or "").rstrip("/") or None,
        "TICKWORK_API_TOKEN": target.api_token,
    }
    for name, value in values.items():
        if value:
            click.echo(f"export {name}={shlex.quote(value)}")
    names = " ".join(name for name, value in values.items() if value)
    click.echo(f"# to undo (before reaching real AWS again): unset {names}")


@cli.command()
@start_options
@click.option(
    "--wait", default=10.0, show_default=True, help="Seconds to wait for the action to be indexed."
)
@json_option
@pass_context
def schedule(
    context: Context, /, wait: float, as_json: bool, first: str | None, **flags: Any
) -> None:
    """Publish a Schedule Start built from flags; exactly one of --at/--in/--cron/--rate/--every/
    --expression."""
    detail = guard(lambda: start_detail(flags, first))
    _publish_start(context, detail, wait, as_json, fields=flags_of_fields(first is not None))


def _event_file(file: Path) -> Any:
    try:
        return loads_strict(file.read_text(), field=str(file))
    except json.JSONDecodeError as error:
        raise ValidationFailed.of(
            str(file), f"is not JSON ({error.msg}, line {error.lineno})", "fix the file"
        ) from error


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--wait", default=10.0, show_default=True, help="Seconds to wait for a Start to be indexed."
)
@json_option
@pass_context
def send(context: Context, file: Path, wait: float, as_json: bool) -> None:
    """Publish an EventBridge event file as it is (e.g. events/start/cron.json) to the bus."""
    event = guard(lambda: _event_file(file))
    if not isinstance(event, dict) or not {"detail-type", "detail"} <= set(event):
        raise click.ClickException(
            f"{file} is not an EventBridge event (no detail-type/detail); "
            "fulfill payloads go to `sam local invoke FulfillFunction -e FILE`"
        )
    if event["detail-type"] == DetailType.START:
        _publish_start(
            context, event["detail"], wait, as_json, source=event.get("source", CLI_SOURCE)
        )
        return
    event_id = _put(context, event["detail-type"], event["detail"], event.get("source", CLI_SOURCE))
    render.echo_result({"published": event["detail-type"], "eventId": event_id}, as_json)


@cli.command(name="list")
@click.option(
    "--status",
    type=click.Choice(
        [str(status) for status in Status],
        case_sensitive=False,
    ),
)
@click.option("--group", help="Only this group.")
@click.option("--prefix", help="Only ids that start with this.")
@click.option(
    "--attention",
    is_flag=True,
    help="Only actions needing attention: a failed fire waiting for a retry, or a missed fire "
    "(Schedule Missed) that has not happened yet.",
)
@click.option("--limit", default=50, show_default=True, help="At most this many.")
@json_option
@tsv_option
@pass_context
def list_(
    context: Context,
    status: str | None,
    group: str | None,
    prefix: str | None,
    attention: bool,
    limit: int,
    as_json: bool,
) -> None:
    """Actions: of one status by next fire time; of a group or id prefix, or needing
    attention, by id."""
    chosen = Status(status.upper()) if status else None
    selection = guard(lambda: Selection(chosen, group, prefix, attention))
    actions, _ = context.target.dependencies().queries.page(selection, limit)
    target = context.target
    rows = [action_summary(a) for a in actions]
    render.actions_table(rows, as_json, target.now(), target.clock_note())


@cli.command()
@click.option("--limit", default=20, show_default=True, help="At most this many, newest first.")
@click.option("--source", help="Only this sender's refusals (the events' EventBridge source).")
@json_option
@pass_context
def rejections(context: Context, limit: int, source: str | None, as_json: bool) -> None:
    """Starts, steering events and reports the stack refused, newest first, with each field's
    problem and fix (the Schedule Rejected events it published; it keeps the last
    KeepRejections of them of each sender, 100 by default).

    \b
    A Start put on the bus by any publisher (the AWS CLI, another SDK) is checked by the
    stack, not by its sender: this is where a refused one shows.
    """
    if limit < 1:
        raise click.BadParameter("give 1 or more", param_hint="--limit")
    kept = context.target.dependencies().rejections.latest(limit, source)
    render.rejections(kept, as_json)


@cli.command()
@click.argument("action_id")
@json_option
@pass_context
def show(context: Context, action_id: str, as_json: bool) -> None:
    """One action: its record and the history of its occurrences."""
    deps = context.target.dependencies()
    action = deps.records.get(guard(lambda: check_steered_id(action_id, "ACTION_ID")))
    if action is None:
        raise click.ClickException(f"no action {action_id!r}: `tickwork list` shows the ids")
    view = action_view(action, deps.settings.retry_max_attempts)
    render.action_detail(view, as_json, context.target.clock_note())


@cli.command()
@click.option("--group", help="Only this group.")
@click.option("--prefix", help="Only ids that start with this.")
@json_option
@tsv_option
@pass_context
def stats(context: Context, group: str | None, prefix: str | None, as_json: bool) -> None:
    """Counts of actions by status, how many of them need attention, and the fires of the last
    hour and day (fired, of which late; failed), all or of a group / prefix.

    --json prints what GET /stats answers: {"byStatus": {...}, "needsAttention": n,
    "lastHour": {"fired", "late", "failed"}, "lastDay": {...}}.
    """
    from tickwork.api.stats import stats_of

    selection = guard(lambda: Selection(group=group, prefix=prefix))
    deps = context.target.dependencies()
    render.stats(stats_of(deps.queries, deps.tallies, selection, deps.clock.now()), as_json)


@cli.command()
@click.option("--dry-run", is_flag=True, help="Only report the counters that are off.")
@json_option
@pass_context
def recount(context: Context, dry_run: bool, as_json: bool) -> None:
    """Rebuild the count items (what `stats`, the API and the dashboard count) from the records.

    Needed once on a stack that held actions before counts were kept in counter items (those
    start at zero). It first folds the writes the count function has not added yet (whatever
    CountLagSeconds), then makes one consistent scan of the table (read capacity in proportion
    to its size) and rewrites each counter that is off, fenced on what it held. Run it when
    nothing writes: a counter that a write moved meanwhile is left alone and listed, and the
    writes made during the scan are counted (writesDuringRecount) — run it again when the stack
    is quiet. Needs dynamodb:Scan, GetItem, PutItem and UpdateItem on the table, and
    DescribeTable, DescribeStream, GetShardIterator and GetRecords on it and its stream.
    """
    from tickwork.adapters.dynamodb_recount import recount as rebuild

    target = context.target
    table = target.aws.table(target.outputs["ActionsTableName"])
    result = rebuild(
        table, lambda line: click.echo(line, err=True), dry_run=dry_run, clients=target.aws
    )
    summary = result.as_dict()
    if dry_run:
        summary["countersOff"] = summary.pop("countersFixed")
    render.echo_result(summary, as_json)


@cli.command(name="next")
@click.argument("expression", required=False)
@click.option(
    "--id",
    "action_id",
    help="Instead of an expression: the coming occurrences of this action, with its skipped "
    "and moved ones (reads the stack).",
)
@click.option(
    "--timezone", default="UTC", show_default=True, help="IANA zone the expression is read in."
)
@field_option("dstRepeated")
@field_option("dstMissing")
@field_option("flexibleWindow")
@field_option("windowMode")
@field_option("calendar")
@field_option("onExcluded")
@click.option(
    "--as-id",
    help="With --flexible-window: the action id whose instants to list (the id fixes each "
    "occurrence's instant in its window); without it, the scheduled times.",
)
@click.option("--count", default=5, show_default=True, help="How many fire times (1-100).")
@click.option("--after", help="List the fires strictly after this ISO 8601 time (default: now).")
@click.option("--first", help="With a frequency preset: its first fire time.")
@click.option(
    "--around-dst",
    is_flag=True,
    help="List the fires around the zone's next DST change instead (the last 3 before it and "
    "the first 3 after); without it they follow the next fires when the zone has a change.",
)
@json_option
@tsv_option
@pass_context
def next_(
    context: Context,
    expression: str | None,
    action_id: str | None,
    timezone: str,
    dst_repeated: str | None,
    dst_missing: str | None,
    flexible_window: str | None,
    window_mode: str | None,
    calendar: str | None,
    on_excluded: str | None,
    as_id: str | None,
    count: int,
    after: str | None,
    first: str | None,
    around_dst: bool,
    as_json: bool,
) -> None:
    """The next fire times of any "when": cron, cron(...), rate(...), a preset, a delay, a time;
    or, with --id, of an action, its skipped and moved occurrences shown. For a cron or a
    frequency in a zone with DST, the fires around its next change follow.

    \b
    tickwork next "30 * * * *"
    tickwork next "cron(0 9 ? * MON-FRI *)" --timezone Asia/Kuala_Lumpur --count 3
    tickwork next "rate(90 minutes)" --after 2026-03-08T00:00:00Z
    tickwork next DAILY --first 2026-03-07T02:30:00 --timezone America/New_York
    tickwork next "30 1 * * *" --timezone America/New_York --dst-repeated BOTH --around-dst
    tickwork next "0 * * * *" --flexible-window 15m --as-id report:7
    tickwork next "0 * * * *" --flexible-window 10m --window-mode AROUND --as-id report:7
    tickwork next "0 10 * * *" --calendar uk-bank-holidays --on-excluded SHIFT
    tickwork next --id invoice:42:reminder --count 10
    """
    if (expression is None) == (action_id is None):
        raise click.UsageError("give an EXPRESSION, or --id ACTION_ID")
    if action_id is not None:
        deps = context.target.dependencies()
        rows = guard(lambda: coming_occurrences(deps, action_id, max(1, min(count, 100))))
        render.occurrences(rows, as_json)
        return
    assert expression is not None
    start = guard(lambda: parse_iso(after)) if after else datetime.now(UTC)
    extra = {
        key: value.upper()
        for key, value in (
            ("dstRepeated", dst_repeated),
            ("dstMissing", dst_missing),
            ("onExcluded", on_excluded),
            ("windowMode", window_mode),
        )
        if value is not None
    }
    content = None
    if calendar is not None:  # its content is in the stack
        extra["calendar"] = calendar
        deps = context.target.dependencies()
        content = guard(lambda: named_calendar(calendar, deps))
    if flexible_window is not None:
        extra["flexibleWindow"] = flexible_window
    if as_id is not None:
        extra["id"] = as_id
    detail = guard(lambda: expression_detail(expression, timezone, first, extra))
    around = guard(lambda: around_dst_change(detail, start)) if _wall_clock(detail) else None
    if around_dst:
        render.around_change(around, timezone, as_json)
        return
    times = guard(lambda: detail_fire_times(detail, start, count, content))
    render.fire_times(format_fire_times(times, timezone), as_json)
    if around is not None and not as_json:
        render.around_change(around, timezone, as_json)


def _wall_clock(detail: dict[str, Any]) -> bool:
    """A cron or a frequency: fires on local wall times, which DST repeats or skips."""
    return "cron" in detail or "frequency" in detail


# --- helpers --------------------------------------------------------------------------------
def _publish_start(
    context: Context,
    detail: dict[str, Any],
    wait: float,
    as_json: bool,
    source: str = CLI_SOURCE,
    fields: Mapping[str, str] | None = None,
) -> None:
    """``fields``: the flag that set each field of ``detail`` (a refusal names the flag)."""
    deps = context.target.dependencies()
    provisional = f"cli-{uuid.uuid4()}"
    checked = guard(lambda: check_start(detail, provisional, deps.clock.now(), deps), fields)
    existing = deps.records.get(checked.action_id) if "id" in detail else None
    if existing is not None:
        guard(lambda: refuse_if_locked_one_off(existing, deps.clock.now(), deps))
    deferring = existing is not None and is_locked(existing, deps.clock.now(), deps)
    digest = spec_hash(detail)
    event_id = _put(context, DetailType.START, detail, source)
    action_id = detail.get("id") or f"evt-{event_id}"
    deadline = time.monotonic() + wait
    while True:
        action = deps.records.get(action_id)
        if action is not None and action.spec_hash == digest:
            render.echo_result(
                {"scheduled": action_id, "eventId": event_id, **action_summary(action)}, as_json
            )
            return
        waiting = action.deferred if action is not None else None
        if action is not None and deferring and waiting and waiting.spec_hash == digest:
            render.echo_result(
                {
                    "deferred": action_id,
                    "eventId": event_id,
                    "message": "inside the lock: the imminent fire happens as planned and this "
                    "update applies from the next occurrence on",
                    **action_summary(action),
                },
                as_json,
            )
            return
        refused = _refusal(deps, event_id)
        if refused is not None:
            raise click.ClickException(
                f"the stack refused the Start (event {event_id}); nothing was written:\n"
                + problem_lines(refused["problems"], fields)
                if refused.get("problems")
                else f"the stack refused the Start (event {event_id}): {refused.get('message')}"
            )
        if time.monotonic() > deadline:
            render.echo_result(
                {
                    "published": str(DetailType.START),
                    "id": action_id,
                    "eventId": event_id,
                    "indexed": False,
                },
                as_json,
            )
            return
        time.sleep(0.2)


def _refusal(deps: Any, event_id: str) -> dict[str, Any] | None:
    """The stack's refusal of the event, once it has made one (its kept rejections): what it
    checks and the CLI cannot, such as a notification's template."""
    for rejection in deps.rejections.latest(20):
        if rejection.get("eventId") == event_id:
            return dict(rejection)
    return None


def _put(context: Context, detail_type: str, detail: dict[str, Any], source: str) -> str:
    """Publish through the publisher client (``tickwork_client``): one path for the CLI and a
    team's services, signing included."""
    signing_key = context.target.outputs.get("StartSigningKeyArn")
    key = None
    if detail_type in INBOUND and signing_key and "signature" not in detail:
        # The stack requires signed events: sign with its key (read like any AWS secret).
        secret = context.target.client("secretsmanager").get_secret_value(SecretId=signing_key)
        key = secret["SecretString"].encode()
    client = TickworkClient(
        context.target.client("events"),
        context.target.outputs["EventBusName"],
        source=source,
        signing_key=key,
    )
    try:
        return client.publish(detail_type, detail).event_id
    except BusRefused as refused:
        raise click.ClickException(f"the bus refused the event: {refused}") from None


def _pairs(items: tuple[str, ...]) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--parameter")
        pairs[key] = value
    return pairs


for _command in (*COMMANDS, *OCCURRENCE_COMMANDS):
    cli.add_command(_command)
cli.add_command(templates)
cli.add_command(calendar)
cli.add_command(outbox)
cli.add_command(time_)
