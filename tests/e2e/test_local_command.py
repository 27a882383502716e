"""GIVEN `tickwork local` running as its own process WHEN driven only from outside (the CLI,
the AWS CLI, boto3) THEN actions fire once, and a kill -9 mid-wait loses and doubles nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tickwork.domain.times import parse_iso
from tickwork_local.process import LocalProcess


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    """One stack process for the tests of this file that each keep to ids and groups of their
    own (a stack process costs seconds of CPU to start)."""
    process = LocalProcess(tmp_path_factory.mktemp("shared") / "state", cli_in_process=True)
    process.start()
    yield process
    process.stop()


@pytest.fixture
def local(shared: LocalProcess) -> Iterator[LocalProcess]:
    """The shared stack; the CLI's code run in the test's process (the installed ``tickwork``
    entry point is run as a process by the first test and kill -9's)."""
    shared.cli_in_process = True
    yield shared
    shared.cli_in_process = True


@pytest.fixture
def own_local(tmp_path: Path) -> Iterator[LocalProcess]:
    """A stack process of the test's own, for a test that reads or rewrites the whole table."""
    process = LocalProcess(tmp_path / "state", cli_in_process=True)
    process.start()
    yield process
    process.stop()


def _ticks_of(local: LocalProcess, queue: str, action_id: str, timeout: float) -> list[Any]:
    """The ticks of one action a subscription receives, until one comes or ``timeout`` passes
    (the queue sees every action's ticks: the stack is shared)."""
    deadline, got = time.monotonic() + timeout, list[Any]()
    while not got and time.monotonic() < deadline:
        received = local.receive(queue, count=1, timeout=deadline - time.monotonic())
        got += [t for t in received if t["id"] == action_id]
    return got


def _wait_counted(local: LocalProcess, group: str, status: str, count: int) -> None:
    """Until ``tickwork stats`` counts ``count`` of the group in ``status``: the counts follow
    the writes once the count function has folded them (a second, locally)."""
    deadline = time.monotonic() + 30
    while local.cli_json("stats", "--group", group)["byStatus"][status] != count:
        assert time.monotonic() < deadline, f"{group} never counted {count} {status}"
        time.sleep(0.2)


def _wait_folds_done(dynamodb: Any, table: str) -> None:
    """Until no fold of the count function is under way (``#tally`` holds no intent)."""
    deadline = time.monotonic() + 30
    while "intent" in dynamodb.get_item(TableName=table, Key={"id": {"S": "#tally"}}).get(
        "Item", {}
    ):
        assert time.monotonic() < deadline, "a fold stayed under way"
        time.sleep(0.2)


def test_cli_schedule_fires_once_seen_by_a_subscribed_queue(local: LocalProcess) -> None:
    local.cli_in_process = False  # the installed `tickwork` command, as a developer types it
    # GIVEN a worker queue subscribed to Schedule Tick with a bus rule
    queue = local.subscribe(["Schedule Tick"])

    # WHEN an action is scheduled with the CLI
    scheduled = local.cli_json(
        "schedule", "--id", "cli:hello", "--in", "2s", "--data", '{"to": "ops"}',
        "--group", "hello",
    )  # fmt: skip

    # THEN the worker gets exactly one tick for it, not early, and the CLI shows it COMPLETED
    assert scheduled["status"] == "PENDING"
    ticks = _ticks_of(local, queue, "cli:hello", timeout=15)
    assert [(t["id"], t["occurrence"], t["data"]) for t in ticks] == [
        ("cli:hello", 1, {"to": "ops"})
    ]
    assert parse_iso(ticks[0]["actualTime"]) >= parse_iso(ticks[0]["scheduledTime"])
    assert _ticks_of(local, queue, "cli:hello", timeout=1.5) == []
    shown = local.cli_json("show", "cli:hello")
    assert shown["status"] == "COMPLETED" and [h["occurrence"] for h in shown["history"]] == [1]
    assert local.cli_json("stats", "--group", "hello")["byStatus"]["COMPLETED"] == 1
    completed = local.cli_json("list", "--status", "COMPLETED", "--group", "hello")
    assert [a["id"] for a in completed] == ["cli:hello"]


def test_aws_cli_drives_the_local_stack(local: LocalProcess) -> None:
    outputs = local.state["outputs"]
    bus, table = outputs["EventBusName"], outputs["ActionsTableName"]

    # WHEN a Start is published with `aws events put-events`
    entry = (
        f'[{{"EventBusName":"{bus}","Source":"aws.cli.user","DetailType":"Schedule Start",'
        '"Detail":"{\\"id\\":\\"awscli:1\\",\\"duration\\":\\"1s\\"}"}]'
    )
    put = local.aws("events", "put-events", "--entries", entry)
    assert put["FailedEntryCount"] == 0

    # THEN `aws dynamodb scan` sees the record complete and `aws stepfunctions` its execution
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        scanned = local.aws("dynamodb", "scan", "--table-name", table)["Items"]
        items = [i for i in scanned if i["id"]["S"].startswith("awscli:")]
        if items and items[0]["status"]["S"] == "COMPLETED":
            break
        time.sleep(0.3)
    assert [(i["id"]["S"], i["status"]["S"]) for i in items] == [("awscli:1", "COMPLETED")]
    executions = local.aws(
        "stepfunctions", "list-executions", "--state-machine-arn", outputs["StateMachineArn"]
    )["executions"]
    # (the record names its execution by machine and name: "f:<name>" on the fire machine)
    its_own = [e for e in executions if items[0]["executionArn"]["S"] == f"f:{e['name']}"]
    assert [e["status"] for e in its_own] == ["SUCCEEDED"]


def test_cli_refusals_name_the_field_and_write_nothing(local: LocalProcess) -> None:
    refused = local.cli("schedule", "--id", "bad:1", "--cron", "61 * * * *", check=False)
    assert refused.returncode == 1 and "cron:" in refused.stderr and "Fix:" in refused.stderr
    missing = local.cli("cancel", "never:was", check=False)
    assert missing.returncode == 1 and "does not exist" in missing.stderr
    assert local.cli_json("list", "--prefix", "bad:") == []
    assert local.cli_json("list", "--prefix", "never:") == []


@pytest.mark.parametrize(
    ("args", "expected_utc"),
    [
        (
            ("30 * * * *", "--after", "2026-11-22T04:00:00Z", "--count", "2"),
            ["2026-11-22T04:30:00Z", "2026-11-22T05:30:00Z"],
        ),
        (
            ("rate(90 minutes)", "--after", "2026-11-22T04:00:00Z", "--count", "2"),
            ["2026-11-22T05:30:00Z", "2026-11-22T07:00:00Z"],
        ),
        (
            (
                "30 2 * * *",
                "--timezone",
                "America/New_York",
                "--after",
                "2026-03-07T00:00:00Z",
                "--count",
                "3",
            ),
            ["2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"],
        ),
        (
            (
                "30 1 * * *",
                "--timezone",
                "America/New_York",
                "--after",
                "2026-10-31T12:00:00Z",
                "--count",
                "3",
            ),
            ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z", "2026-11-03T06:30:00Z"],
        ),
        (
            (
                "30 1 * * *",
                "--timezone",
                "America/New_York",
                "--dst-repeated",
                "both",
                "--after",
                "2026-10-31T12:00:00Z",
                "--count",
                "3",
            ),
            ["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-02T06:30:00Z"],
        ),
        (
            (
                "30 2 * * *",
                "--timezone",
                "America/New_York",
                "--dst-missing",
                "SHIFT",
                "--after",
                "2027-03-13T12:00:00Z",
                "--count",
                "2",
            ),
            ["2027-03-14T07:30:00Z", "2027-03-15T06:30:00Z"],
        ),
    ],
    ids=["cron", "rate", "spring-forward-skips", "fall-back-once", "fall-back-both", "shift"],
)
def test_next_lists_fire_times_like_the_console(
    args: tuple[str, ...], expected_utc: list[str], tmp_path: Path
) -> None:
    rows = LocalProcess(tmp_path, cli_in_process=True).cli_json("next", *args)
    assert [r["utc"] for r in rows] == expected_utc


def test_next_shows_the_fires_around_the_zones_next_dst_change(tmp_path: Path) -> None:
    cli = LocalProcess(tmp_path, cli_in_process=True)
    args = ("30 1 * * *", "--timezone", "America/New_York", "--dst-repeated", "BOTH",
            "--after", "2027-10-01T00:00:00Z")  # fmt: skip
    around = cli.cli_json("next", *args, "--around-dst")
    assert around["change"] == "2027-11-07T06:00:00Z"
    assert (around["offsetBefore"], around["offsetAfter"]) == ("UTC-04:00", "UTC-05:00")
    assert around["before"][-1]["local"] == "2027-11-07T01:30:00-04:00"
    assert around["after"][0]["local"] == "2027-11-07T01:30:00-05:00"
    shown = cli.cli("next", *args).stdout  # the next fires, then those around the change
    assert "around the next DST change in America/New_York" in shown
    assert "2027-11-07T01:30:00-05:00" in shown


def test_cli_steers_one_action_and_a_whole_group(local: LocalProcess) -> None:
    # GIVEN three recurrences of one group and one of another, scheduled with the CLI
    for n in range(3):
        local.cli_json("schedule", "--id", f"sub:42:{n}", "--rate", "rate(1 hour)",
                       "--group", "sub-42", "--on-failure", "pause")  # fmt: skip
    local.cli_json(
        "schedule", "--id", "sub:43", "--expression", "rate(1 hour)", "--group", "sub-43"
    )
    listed = local.cli_json("list", "--group", "sub-42")
    assert [a["id"] for a in listed] == ["sub:42:0", "sub:42:1", "sub:42:2"]

    # WHEN one is paused with a note, run now, and resumed
    paused = local.cli_json("pause", "sub:42:0", "--note", "card expired")
    assert paused["outcome"] == "paused" and paused["note"] == "card expired"
    assert local.cli_json("run-now", "sub:42:0")["outcome"] == "triggered"
    assert local.cli_json("resume", "sub:42:0")["outcome"] == "resumed"

    # WHEN the whole group is paused: its progress shown, each one counted
    run = local.cli("pause", "--group", "sub-42", "--json")
    assert "pause: 3 action(s) done" in run.stderr
    swept = json.loads(run.stdout)
    assert swept["matched"] == 3 and swept["paused"] == 3
    _wait_counted(local, "sub-42", "PAUSED", 3)  # the count function folds within a second
    assert local.cli_json("stats", "--group", "sub-43")["byStatus"]["PENDING"] == 1

    # AND refusals name the field and the fix, and change nothing
    refused = local.cli("pause", "--group", "sub 42", check=False)
    assert refused.returncode != 0 and "group" in refused.stderr
    both = local.cli("cancel", "sub:43", "--group", "sub-42", check=False)
    assert both.returncode == 2 and "give an ID, or --group" in both.stderr
    assert local.cli_json("show", "sub:43")["status"] == "PENDING"


def test_cli_schedules_an_sqs_message_and_refuses_a_target_the_stack_cannot_reach(
    local: LocalProcess,
) -> None:
    # GIVEN a queue of the user's in the emulated account
    url = local.aws("sqs", "create-queue", "--queue-name", "orders-due")["QueueUrl"]
    arn = "arn:aws:sqs:us-east-1:123456789012:orders-due"

    # WHEN the CLI schedules a message to it, and one to a queue in another region
    local.cli_json(
        "schedule", "--id", "cli:sqs", "--in", "2s", "--action", "SQS_MESSAGE",
        "--data", json.dumps({"queueArn": arn, "messageBody": {"order": 7}}),
    )  # fmt: skip
    elsewhere = arn.replace("us-east-1", "eu-west-1")
    refused = local.cli(
        "schedule", "--id", "cli:far", "--in", "2s", "--action", "SQS_MESSAGE",
        "--data", json.dumps({"queueArn": elsewhere, "messageBody": "x"}), check=False,
    )  # fmt: skip

    # THEN the queue receives the message once, read back with the AWS CLI
    deadline, messages = time.monotonic() + 15, []
    while not messages and time.monotonic() < deadline:
        received = local.aws(
            "sqs", "receive-message", "--queue-url", url, "--message-attribute-names", "All"
        )
        messages = (received or {}).get("Messages", [])
    assert [json.loads(m["Body"]) for m in messages] == [{"order": 7}]
    assert messages[0]["MessageAttributes"]["tickwork-action-id"]["StringValue"] == "cli:sqs"
    # AND the other was refused, naming the field and the fix, and never written
    assert refused.returncode == 1
    assert "--data (queueArn)" in refused.stderr and "Fix:" in refused.stderr  # the flag typed
    assert local.cli("show", "cli:far", check=False).returncode == 1  # never written
    assert [a["id"] for a in local.cli_json("list", "--prefix", "cli:sqs")] == ["cli:sqs"]


def test_cli_recount_rebuilds_counts_an_upgrade_left_at_zero(own_local: LocalProcess) -> None:
    local = own_local
    # GIVEN actions counted as they were written, then their counter items gone (a stack that
    # held actions before the counters existed)
    for n in range(3):
        local.cli_json("schedule", "--id", f"old:{n}", "--in", "2h", "--group", "legacy")
    local.cli_json("cancel", "old:0")
    _wait_counted(local, "legacy", "CANCELLED", 1)
    dynamodb, table = local.client("dynamodb"), local.state["outputs"]["ActionsTableName"]
    _wait_folds_done(dynamodb, table)  # none under way while the counters are taken away
    before = local.cli_json("stats", "--group", "legacy")["byStatus"]
    assert before["PENDING"] == 2 and before["CANCELLED"] == 1
    assert local.cli_json("recount", "--dry-run")["countersOff"] == 0
    for item in dynamodb.scan(TableName=table)["Items"]:
        if item["id"]["S"].startswith("#count#"):
            dynamodb.delete_item(TableName=table, Key={"id": item["id"]})
    assert local.cli_json("stats", "--group", "legacy")["byStatus"]["PENDING"] == 0

    # WHEN `tickwork recount` runs
    run = local.cli("recount", "--json")

    # THEN the counts are the records' again, its progress was shown, and nothing is left off
    assert "read " in run.stderr
    summary = json.loads(run.stdout)
    assert summary["actions"] == 3 and summary["countersFixed"] > 0
    assert summary["countersMovedMeanwhile"] == []
    assert local.cli_json("stats", "--group", "legacy")["byStatus"] == before
    assert local.cli_json("recount", "--dry-run")["countersOff"] == 0


def test_time_on_a_wall_clock_stack_says_how_to_get_virtual_time(local: LocalProcess) -> None:
    # (tests/e2e/test_time_command.py has `tickwork time` on a stack on virtual time)
    shown = local.cli_json("time")
    assert shown["virtual"] is False
    refused = local.cli("time", "advance", "1h", check=False)
    assert refused.returncode == 1 and "--virtual-time" in refused.stderr
    usage = local.cli("time", "advance", check=False)
    assert usage.returncode == 2 and "DURATION" in usage.stderr


@pytest.mark.parametrize("own", ["#pump", "#calendars", "#calendar#uk"])
def test_a_command_naming_the_stacks_own_items_says_so_in_one_line(
    local: LocalProcess, own: str
) -> None:
    """The stack's own items are no actions: each command that takes an action's id refuses
    one of theirs naming the id and the rule, in one line, never a traceback."""
    commands = [
        ("show", own),
        ("next", "--id", own),
        ("cancel", own),
        ("pause", own),
        ("resume", own),
        ("run-now", own),
        ("retry", own),
        ("skip", own, "--occurrence", "1"),
        ("move", own, "--occurrence", "1", "--to", "2099-01-01T00:00:00Z"),
        ("restore", own, "--occurrence", "1"),
        ("backfill", own, "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z"),
    ]
    for command in commands:
        refused = local.cli(*command, check=False)
        assert refused.returncode == 1, (command, refused.stdout, refused.stderr)
        assert "Traceback" not in refused.stderr, command
        assert "stack's own items" in refused.stderr, (command, refused.stderr)
