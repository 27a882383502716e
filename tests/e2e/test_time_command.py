"""GIVEN `tickwork local --virtual-time` as its own process WHEN a daily schedule is made with
the CLI and `tickwork time advance 7d` moves the clock THEN it fired 7 times at its virtual
instants, the CLI and the API show virtual time, and a restart keeps it (never backwards)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from tickwork.domain.times import parse_iso
from tickwork_local.process import BIN, LocalProcess

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def virtual(tmp_path: Path) -> Iterator[LocalProcess]:
    state = tmp_path / "state"
    program = [str(BIN / "tickwork"), "--state-dir", str(state), "local", "--virtual-time"]
    # (a week of fires read back from the record's history: it keeps them all)
    process = LocalProcess(
        state, parameters={"HistoryLimit": "10"}, program=program, cli_in_process=True
    )
    process.start()
    yield process
    process.stop()


def test_time_advance_fires_a_week_of_a_daily_schedule_at_virtual_instants(
    virtual: LocalProcess,
) -> None:
    queue = virtual.subscribe(["Schedule Tick"])
    began = parse_iso(virtual.cli_json("time")["now"])
    assert virtual.cli_json("time")["virtual"] is True
    virtual.cli_json("schedule", "--id", "vt:daily", "--cron", "0 9 * * *")

    moved = virtual.cli_json("time", "advance", "7d")

    assert parse_iso(moved["to"]) >= began + timedelta(days=7)
    ticks = virtual.receive(queue, count=7, timeout=30)
    assert sorted(t["occurrence"] for t in ticks) == list(range(1, 8))
    assert all(parse_iso(t["actualTime"]) >= parse_iso(t["scheduledTime"]) for t in ticks)
    assert all(parse_iso(t["scheduledTime"]).strftime("%H:%M") == "09:00" for t in ticks)
    shown = virtual.cli_json("show", "vt:daily")
    assert shown["occurrence"] == 8 and len(shown["history"]) == 7
    # AND what the CLI shows people says its times are virtual
    assert "times are virtual" in virtual.cli("show", "vt:daily").stdout
    assert "times are virtual" in " ".join(virtual.cli("list").stdout.split())
    # AND the API says its time is virtual
    answer = virtual.api.get(
        f"{virtual.state['outputs']['ApiUrl']}actions/vt:daily",
        headers={"Authorization": f"Bearer {virtual.state['apiToken']}"},
        timeout=30,
    )
    assert answer.headers["X-Tickwork-Clock"].startswith("virtual; now=")
    # AND a time before now is refused, naming the field and the fix
    refused = virtual.cli("time", "advance", "--to", "2020-01-01T00:00:00Z", check=False)
    assert refused.returncode == 1 and "never goes backwards" in refused.stderr

    # WHEN the stack is stopped and started again on the same state dir (without the flag)
    virtual.stop()
    virtual.program = [str(BIN / "tickwork"), "--state-dir", str(virtual.state_dir), "local"]
    virtual.start()

    # THEN it is still on its virtual time, which did not go backwards
    again = virtual.cli_json("time")
    assert again["virtual"] is True and parse_iso(again["now"]) >= parse_iso(moved["to"])


def test_one_occurrence_skipped_and_moved_with_the_cli_and_the_client(
    virtual: LocalProcess,
) -> None:
    """`tickwork skip`, `tickwork move`, the client's skip (a signed-or-not bus event), and
    `tickwork next --id` showing them; then advanced past them, the history has them as such."""
    import time as wall

    from tickwork_client import TickworkClient

    virtual.cli_json("schedule", "--id", "vt:h", "--rate", "rate(1 hour)")
    rows = virtual.cli_json("next", "--id", "vt:h", "--count", "4")
    first = parse_iso(rows[0]["scheduledTime"])
    third = first + timedelta(hours=2)
    moved_to = third + timedelta(minutes=10)

    skipped = virtual.cli_json("skip", "vt:h", "--occurrence", "2", "--note", "holiday")
    moved = virtual.cli_json(
        "move", "vt:h", "--at", rows[2]["scheduledTime"], "--to", moved_to.isoformat()
    )
    client = TickworkClient.for_local(virtual.state_dir)
    client.skip("vt:h", 4, note="by the client")
    deadline = wall.monotonic() + 30
    while wall.monotonic() < deadline and not client.occurrences("vt:h", 4)[3]["skipped"]:
        wall.sleep(0.2)

    assert skipped["outcome"] == "skipped" and moved["outcome"] == "moved"
    shown = virtual.cli_json("next", "--id", "vt:h", "--count", "5")
    assert [r["change"] for r in shown] == [
        None, "skipped", f"moved to {moved['firesAt']}", "skipped", None
    ]  # fmt: skip
    assert shown[3]["note"] == "by the client"
    refused = virtual.cli("skip", "vt:h", "--occurrence", "0", check=False)
    assert refused.returncode == 1 and "occurrence" in refused.stderr

    virtual.cli_json(
        "time", "advance", "--to", (first + timedelta(hours=4, minutes=30)).isoformat()
    )
    history = virtual.cli_json("show", "vt:h")["history"]
    assert [(h["occurrence"], h["outcome"]) for h in history] == [
        (1, "FIRED"), (2, "SKIPPED"), (3, "FIRED"), (4, "SKIPPED"), (5, "FIRED")
    ]  # fmt: skip
    assert parse_iso(history[2]["movedTo"]) == moved_to  # its own scheduledTime kept
    assert history[2]["reason"].startswith("moved by request")

    # AND (on the same stack) `tickwork backfill` runs a past range of an hourly cron once
    # each, showing progress while it waits, and the client's backfill goes on from there
    virtual.cli_json("schedule", "--id", "vt:c", "--cron", "0 * * * *")
    now = parse_iso(virtual.cli_json("time")["now"])
    top = now.replace(minute=0, second=0, microsecond=0)
    start, end = top - timedelta(hours=7), top - timedelta(hours=1)
    ran = virtual.cli(
        "backfill", "vt:c", "--from", start.isoformat(), "--to", end.isoformat(), "--wait", "60"
    )
    assert "backfill: 7 of 7 run" in ran.stderr, ran.stderr
    client.backfill("vt:c", start - timedelta(hours=2), end, note="by the client")
    deadline = wall.monotonic() + 30
    while wall.monotonic() < deadline:
        spans = client.status("vt:c")["backfilled"]
        if spans and parse_iso(spans[0]["first"]) == start - timedelta(hours=2):
            break
        wall.sleep(0.2)
    shown = virtual.cli_json("show", "vt:c")
    assert [(parse_iso(s["first"]), parse_iso(s["last"])) for s in shown["backfilled"]] == [
        (start - timedelta(hours=2), end)
    ]
    refused = virtual.cli(
        "backfill", "vt:c", "--from", start.isoformat(), "--to", "2999-01-01T00:00:00Z",
        check=False,
    )  # fmt: skip
    assert refused.returncode == 1 and "endTime" in refused.stderr

    # AND `tickwork calendar` keeps a calendar a schedule names, `tickwork next` shows its effect
    put = virtual.cli_json(
        "calendar", "put", "uk", "--timezone", "Europe/London", "--date", "2030-12-25",
        "--hours", "MON-FRI=09:00-17:00",
    )  # fmt: skip
    assert put["outcome"] == "created" and put["version"] == 1
    assert "uk" in virtual.cli("calendar", "list").stdout
    assert virtual.cli_json("calendar", "show", "uk")["dates"] == ["2030-12-25"]
    shown = virtual.cli_json(
        "next", "0 10 * * *", "--calendar", "uk", "--on-excluded", "SHIFT",
        "--after", "2030-12-20T12:00:00Z", "--count", "3",
    )  # fmt: skip
    assert [row["utc"] for row in shown] == [
        "2030-12-23T09:00:00Z", "2030-12-23T10:00:00Z", "2030-12-24T10:00:00Z"
    ]  # fmt: skip
    bad = virtual.cli("calendar", "put", "uk", "--hours", "MONDAY=9-5", check=False)
    assert bad.returncode == 1 and "hours" in bad.stderr
    assert virtual.cli_json("calendar", "delete", "uk")["outcome"] == "deleted"
    gone = virtual.cli("calendar", "show", "uk", check=False)
    assert gone.returncode == 1 and "uk" in gone.stderr
    # AND an edit that would leave a schedule naming it no fire is refused in one line, naming
    # it; held (paused on it, in attention) only when asked by name
    virtual.cli_json("calendar", "put", "open", "--timezone", "UTC")
    virtual.cli("schedule", "--id", "vt:ten", "--cron", "30 10 * * *", "--calendar", "open")
    ending = virtual.cli("calendar", "put", "open", "--hours", "MON=09:00-09:01", check=False)
    assert ending.returncode == 1 and "Traceback" not in ending.stderr
    assert "'vt:ten'" in ending.stderr and "--hold-schedules" in ending.stderr
    assert len(ending.stderr.strip().splitlines()) == 1, ending.stderr
    held = virtual.cli_json(
        "calendar", "put", "open", "--hours", "MON=09:00-09:01", "--hold-schedules"
    )
    assert held["held"] == ["vt:ten"]
    assert virtual.cli_json("show", "vt:ten")["heldByCalendar"] == "open"


def _virtual_block() -> list[list[str]]:
    """The README's virtual-time block, a command a line (continuations joined), each as the
    arguments after `tickwork`; the first, which starts the stack, left out."""
    import re
    import shlex

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    found = re.search(r"<!-- virtual-shell -->\n```bash\n(.*?)```", readme, re.S)
    assert found, "the README's virtual-time block is missing its markers"
    joined = found.group(1).replace("\\\n", " ")
    commands = [shlex.split(line, comments=True) for line in joined.splitlines()]
    assert commands[0][:3] == ["tickwork", "local", "--virtual-time"]
    return [c[1:] for c in commands[1:] if c]


def test_the_readmes_virtual_time_block_shows_what_it_says(virtual: LocalProcess) -> None:
    for arguments in _virtual_block():
        run = virtual.cli(*arguments, check=False)
        target = arguments[arguments.index("--to") + 1] if "--to" in arguments else None
        if target is not None and parse_iso(target) <= parse_iso(virtual.cli_json("time")["now"]):
            continue  # the README's date has passed on this machine's clock: nothing to move to
        assert run.returncode == 0, (arguments, run.stderr)
    # THEN its outbox line shows the SMS each month's fire sent, with its text filled in
    sent = virtual.cli_json("outbox", "--kind", "sms")
    assert sent, "the block's outbox --kind sms shows nothing"
    assert all(m["body"] == "Rent is due tomorrow, Ada" for m in sent), sent
    assert {m["fire"]["id"] for m in sent} == {"rent"}
