"""``make demo``: a throwaway local stack, the sample actions in events/demo/, watched live.

Creates the SMS text and the e-mail template it needs with ``tickwork templates``; schedules a
one-off in a few seconds, a recurrence firing 3 times, a webhook that fails once and succeeds on
retry, an action cancelled before it fires, a message to an SQS queue and an e-mail through an
SES template; shows their status, next fire and lateness as they go; publishes the seed's SMS
example exactly as it is written (events/demo/seed-sms.json, through the publisher client) and
fires it now with Run Now (its own first fire is the next 08:35:17 UTC); reads the SQS message
back and the e-mail and the SMS from the outbox, rendered. Then, on a second stack on virtual
time, a daily SMS advanced 30 days in a few seconds, the outbox listing the 30 rendered
messages with their virtual send times. Prints a summary and exits 0 when every one ended as
expected.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from tickwork import bootstrap
from tickwork.domain.action import FINISHED, Action, Status
from tickwork.domain.events import DetailType
from tickwork.domain.times import parse_iso
from tickwork.ports import ActionRecords
from tickwork_local.receiver import Receiver
from tickwork_local.service import running_service
from tickwork_local.stack import REPO_ROOT, EventTap, LocalStack
from tickwork_local.tuning.collector import collect_less_often

Command = Callable[[list[str]], object]  # a `tickwork` command line, run

if TYPE_CHECKING:
    from tickwork_client import TickworkClient

__all__ = ["run_demo"]

DEMO_EVENTS = REPO_ROOT / "events" / "demo"
# Seconds-scale settings so the whole demo takes well under a minute.
DEMO_PARAMETERS = {
    "LogLevel": "WARNING",  # the live table, not the functions' logs
    "LockSeconds": "1",
    "RetryIntervalSeconds": "1",
    "RetryMaxAttempts": "3",
    "RetryMaxDelaySeconds": "2",
}
TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Expected:
    file: str
    status: Status
    fires: int


EXPECTED = {
    "demo:one-off": Expected("one-off.json", Status.COMPLETED, 1),
    "demo:every-3s": Expected("every-3s-3-times.json", Status.COMPLETED, 3),
    "demo:webhook": Expected("webhook-fails-then-succeeds.json", Status.COMPLETED, 1),
    "demo:cancelled": Expected("cancel-me.json", Status.CANCELLED, 0),
    "demo:sqs": Expected("sqs-message.json", Status.COMPLETED, 1),
    "demo:email": Expected("email.json", Status.COMPLETED, 1),
}
DEMO_QUEUE = "demo-orders"  # the queue events/demo/sqs-message.json sends to
# The templates the demo's notifications name (templateType), made with `tickwork templates`.
TEMPLATE_COMMANDS = [
    [
        "templates", "put", "email", "DEMO_ORDER_READY",
        "--subject", "{{subject}}",
        "--text", "Hello {{name}}, your order {{orderNumber}} is ready.",
    ],
    [
        "templates", "put", "sms", "USER_LATE_PAYMENT_NOTIFICATION",
        "--text", "Hi {{name}}, your payment is late. Please pay today to avoid a fee.",
    ],
]  # fmt: skip
SEED_SMS = "seed-sms.json"  # the seed's own example, as its README writes it


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    """These process settings while the demo runs, the caller's back after it."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_demo(tickwork: Command, step_seconds: float = 1.0) -> int:
    """The demo; ``tickwork`` runs a `tickwork` command line in this process."""
    collect_less_often()  # the demo's process runs the emulator (tuning/collector.py)
    console = Console()
    started = time.monotonic()
    receiver = Receiver(failures=1)
    with (
        # The functions' metrics are CloudWatch EMF lines on stdout: the live table, not them.
        _environment(POWERTOOLS_METRICS_DISABLED="true"),
        tempfile.TemporaryDirectory(prefix="tickwork-demo-") as state,
        running_service(None, Path(state), fresh=True, parameters=DEMO_PARAMETERS) as service,
    ):
        stack = service.stack
        console.print(f"[bold]tickwork demo[/] — local stack on {service.endpoint}")
        queue_url = _create_targets(stack)
        console.print(f"  created the SQS queue [cyan]{DEMO_QUEUE}[/] the demo's actions send to")
        for command in TEMPLATE_COMMANDS:
            _tickwork(tickwork, Path(state), command)
            console.print(f"  $ tickwork {' '.join(_quoted(command))}")
        ticks = stack.tap([DetailType.TICK])
        for action_id, expected in EXPECTED.items():
            _send(stack, DEMO_EVENTS / expected.file, receiver.url)
            console.print(f"  scheduled [cyan]{action_id}[/] from events/demo/{expected.file}")
            time.sleep(step_seconds / 4)
        time.sleep(step_seconds)
        _send(stack, DEMO_EVENTS / "stop-cancel-me.json", receiver.url)
        console.print(
            "  sent Schedule Stop for [cyan]demo:cancelled[/] (events/demo/stop-cancel-me.json)"
        )
        records = bootstrap.from_environment().records
        finished = _watch(console, records, ticks)
        texted = _seed_sms(console, stack, records)
        stack.wait_idle(timeout=10)
        ticks.drain()
        actions = {i: records.get(i) for i in EXPECTED}
        delivered = _read_back(console, stack, queue_url) and texted
    receiver.close()
    month = _a_month_on_virtual_time(console, tickwork)
    return _summary(
        console,
        actions,
        ticks.events,
        len(receiver.requests),
        finished and delivered and month,
        time.monotonic() - started,
    )


# A daily SMS at 09:00 Berlin time, on a stack whose clock is moved on 30 days.
DAILY_SMS: dict[str, Any] = {
    "id": "demo:daily-sms",
    "cron": "0 9 * * *",
    "timezone": "Europe/Berlin",
    "action": "SEND_NOTIFICATION",
    "data": {
        "notificationType": "SMS",
        "templateType": "USER_LATE_PAYMENT_NOTIFICATION",
        "mobile": "60123456789",
        "name": "Joojo",
    },
}
MONTH_DAYS = 30


def _a_month_on_virtual_time(console: Console, tickwork: Command) -> bool:
    """A second stack, on virtual time: a daily SMS advanced 30 days in seconds, and the
    outbox's 30 rendered messages, each with its virtual send time."""
    console.print()
    console.print("[bold]virtual time[/]: `tickwork local --virtual-time`, then a month in seconds")
    with (
        tempfile.TemporaryDirectory(prefix="tickwork-demo-vt-") as state,
        running_service(
            None, Path(state), fresh=True, parameters=DEMO_PARAMETERS, virtual_time=True
        ) as service,
    ):
        stack = service.stack
        _tickwork(tickwork, Path(state), TEMPLATE_COMMANDS[1])
        stack.publish(DetailType.START, DAILY_SMS, source="app.billing")
        stack.time.settle()
        console.print(
            f"  scheduled [cyan]{DAILY_SMS['id']}[/]: {DAILY_SMS['cron']} "
            f"({DAILY_SMS['timezone']}) at virtual {stack.clock.now():%Y-%m-%d %H:%M}"
        )
        console.print(f"  $ tickwork time advance {MONTH_DAYS}d")
        done = stack.time.advance(MONTH_DAYS * 86400)
        console.print(
            f"  advanced to {stack.clock.now():%Y-%m-%d %H:%M} in {done.seconds:.1f}s of wall "
            f"time ({done.steps} steps; {done.skipped} pump and reconciler runs left out, "
            "they would have found nothing)"
        )
        texts = sorted(stack.outbox.messages("sms", str(DAILY_SMS["id"])), key=lambda m: m["at"])
        console.print(f"  the outbox (`tickwork outbox --kind sms`): {len(texts)} SMS")
        for text in texts:
            console.print(
                f"    #{text['fire']['occurrence']:>2} sent {text['at']} (virtual), due "
                f"{text['fire']['scheduledTime'][11:19]}: {text['body'][:28]!r}…"
            )
        early = [t for t in texts if t["at"] < t["fire"]["scheduledTime"]]
        occurrences = {t["fire"]["occurrence"] for t in texts}
        if len(texts) == MONTH_DAYS and not early and len(occurrences) == MONTH_DAYS:
            return True
        console.print(
            f"[red]  expected {MONTH_DAYS} SMS, once each, none early: {len(texts)} SMS, "
            f"{len(occurrences)} occurrences, {len(early)} early[/]"
        )
        return False


def _create_targets(stack: LocalStack) -> str:
    return str(stack.client("sqs").create_queue(QueueName=DEMO_QUEUE)["QueueUrl"])


def _tickwork(tickwork: Command, state_dir: Path, arguments: list[str]) -> None:
    """A `tickwork` command against this demo's stack, in this process (the CLI's own code)."""
    with contextlib.redirect_stdout(io.StringIO()):  # the demo prints the command instead
        tickwork(["--state-dir", str(state_dir), *arguments, "--json"])


def _quoted(arguments: list[str]) -> list[str]:
    return [json.dumps(a) if " " in a or "{" in a else a for a in arguments]


def _seed_sms(console: Console, stack: LocalStack, records: ActionRecords) -> bool:
    """The seed's SMS example published as written, fired now, and read from the outbox."""
    from tickwork_client import TickworkClient

    client = TickworkClient(stack.client("events"), stack.bus, source="app.billing")
    detail = json.loads((DEMO_EVENTS / SEED_SMS).read_text())["detail"]
    sent = client.publish_start(detail)
    console.print()
    console.print(
        f"  published the seed's SMS example as written (events/demo/{SEED_SMS}) as "
        f"[cyan]{sent.action_id}[/]: daily, first at {sent.next_fires[0]:%Y-%m-%d %H:%M:%S} UTC"
    )
    deadline = time.monotonic() + TIMEOUT_SECONDS / 2
    while records.get(sent.action_id) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    client.run_now(sent.action_id, request_id="demo")
    console.print(f"  $ tickwork run-now {sent.action_id}   (fire it now, the schedule unmoved)")
    while time.monotonic() < deadline:
        texts = stack.outbox.messages("sms", sent.action_id)
        if texts:
            console.print(
                f"  [bold]SMS[/] to {texts[0]['to']}: {texts[0]['body']!r} "
                f"(from the outbox: `tickwork outbox --kind sms`)"
            )
            return _cancelled(console, client, records, sent.action_id, deadline)
        time.sleep(0.2)
    console.print(f"[red]  no SMS from {sent.action_id} in the outbox[/]")
    return False


def _cancelled(
    console: Console,
    client: TickworkClient,
    records: ActionRecords,
    action_id: str,
    deadline: float,
) -> bool:
    """The seed's daily action cancelled, its next fire's execution stopped with it: a demo run
    in the minutes before the seed's time of day (08:35:17 UTC) would otherwise leave that
    execution waiting, and the stack never idle."""
    client.cancel(action_id)
    while time.monotonic() < deadline:
        action = records.get(action_id)
        if action is not None and action.status is Status.CANCELLED:
            console.print(f"  $ tickwork cancel {action_id}   (the daily schedule stopped)")
            return True
        time.sleep(0.1)
    console.print(f"[red]  {action_id} was not cancelled[/]")
    return False


def _read_back(console: Console, stack: LocalStack, queue_url: str) -> bool:
    """The SQS message as its queue's reader sees it, and the e-mail as the outbox kept it
    (rendered): exactly one of each."""
    console.print()
    messages = (
        stack.client("sqs")
        .receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, MessageAttributeNames=["All"])
        .get("Messages", [])
    )
    for message in messages:
        key = message["MessageAttributes"]["tickwork-idempotency-key"]["StringValue"]
        console.print(
            f"  [bold]SQS[/] {DEMO_QUEUE} received {message['Body']} (idempotency key {key})"
        )
    emails = stack.outbox.messages("email")
    for email in emails:
        console.print(
            f"  [bold]e-mail[/] from {email['from']} to {email['to']}: subject "
            f"{email['subject']!r}, {email.get('body')!r} (SES template {email['template']})"
        )
    if len(messages) == 1 and len(emails) == 1:
        return True
    console.print(
        f"[red]  expected 1 SQS message and 1 e-mail, read {len(messages)} and {len(emails)}[/]"
    )
    return False


def _send(stack: LocalStack, path: Path, receiver_url: str) -> None:
    event = json.loads(path.read_text().replace("${RECEIVER_URL}", receiver_url))
    stack.publish(event["detail-type"], event["detail"], source=event["source"])


def _watch(console: Console, records: ActionRecords, ticks: EventTap) -> bool:
    deadline = time.monotonic() + TIMEOUT_SECONDS
    with Live(console=console, refresh_per_second=8) as live:
        while time.monotonic() < deadline:
            ticks.drain()
            actions = {i: records.get(i) for i in EXPECTED}
            live.update(_table(actions, ticks.events))
            fired = _fires(ticks.events)
            if all(
                a is not None
                and a.status in FINISHED
                and len(fired.get(i, [])) >= EXPECTED[i].fires
                for i, a in actions.items()
            ):
                return True
            time.sleep(0.25)
    return False


def _fires(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_id: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_id.setdefault(event["detail"]["id"], []).append(event["detail"])
    return by_id


def _lateness(tick: dict[str, Any]) -> float:
    return (parse_iso(tick["actualTime"]) - parse_iso(tick["scheduledTime"])).total_seconds()


def _table(actions: dict[str, Action | None], events: list[dict[str, Any]]) -> Table:
    fired = _fires(events)
    table = Table(title="actions (live)", title_justify="left")
    for column in ("id", "status", "next fire in", "fires", "last lateness", "attempts"):
        table.add_column(column)
    now = time.time()
    for action_id, action in actions.items():
        ticks = fired.get(action_id, [])
        status = str(action.status) if action else "…"
        next_in = "—"
        if action and action.status == Status.PENDING and action.execution_time:
            next_in = f"{max(action.execution_time.timestamp() - now, 0):.1f}s"
        table.add_row(
            action_id,
            status,
            next_in,
            f"{len(ticks)}/{EXPECTED[action_id].fires}",
            f"{_lateness(ticks[-1]):.3f}s" if ticks else "—",
            str(ticks[-1]["attempts"]) if ticks else "—",
        )
    return table


def _summary(
    console: Console,
    actions: dict[str, Action | None],
    events: list[dict[str, Any]],
    webhook_requests: int,
    finished: bool,
    wall: float,
) -> int:
    fired = {i: ticks for i, ticks in _fires(events).items() if i in EXPECTED}  # not the SMS
    late = [_lateness(t) for ticks in fired.values() for t in ticks]
    duplicates = sum(len(ts) - len({t["occurrence"] for t in ts}) for ts in fired.values())
    early = sum(1 for x in late if x < 0)
    problems = [
        f"{i}: {a.status if a else 'missing'} with {len(fired.get(i, []))} fire(s), "
        f"expected {e.status} with {e.fires}"
        for i, e in EXPECTED.items()
        for a in [actions[i]]
        if a is None or a.status != e.status or len(fired.get(i, [])) != e.fires
    ]
    console.print(
        f"[bold]summary[/]: {sum(len(v) for v in fired.values())} fires "
        f"(expected {sum(e.fires for e in EXPECTED.values())}), "
        f"early {early}, duplicated {duplicates}, "
        f"lateness p50 {statistics.median(late) if late else 0:.3f}s "
        f"max {max(late, default=0):.3f}s; "
        f"webhook answered {webhook_requests} request(s) (1 failure, then success on retry); "
        f"wall time {wall:.1f}s"
    )
    if not finished or problems or early or duplicates:
        for problem in problems:
            console.print(f"[red]  {problem}[/]")
        console.print("[bold red]demo FAILED[/]")
        return 1
    console.print("[bold green]demo OK[/]: every action ended as expected")
    return 0
