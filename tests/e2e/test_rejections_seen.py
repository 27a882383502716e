"""GIVEN `tickwork local` WHEN a publisher that is not the Python client puts bad events on the
bus with the AWS CLI (which PutEvents accepts: the stack checks them, not EventBridge) THEN the
refusals are visible without writing a rule: `tickwork rejections` and `GET /rejections` list
each, newest first, with the request, the action id, the event id, and each field's problem
and fix — and nothing was written for them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tickwork_local.process import LocalProcess


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    process = LocalProcess(
        Path(tmp_path_factory.mktemp("rejections")) / "state", cli_in_process=True
    )
    process.start()
    yield process
    process.stop()


def _put(local: LocalProcess, detail_type: str, detail: dict[str, Any]) -> str:
    entry = {
        "EventBusName": local.bus,
        "Source": "billing.cli",
        "DetailType": detail_type,
        "Detail": json.dumps(detail),
    }
    answer = local.aws("events", "put-events", "--entries", json.dumps([entry]))
    assert answer["FailedEntryCount"] == 0  # EventBridge takes it: the stack will refuse it
    return str(answer["Entries"][0]["EventId"])


def test_bad_events_put_with_the_aws_cli_are_listed_with_field_and_fix(
    local: LocalProcess,
) -> None:
    bad_start = _put(
        local, "Schedule Start", {"id": "inv:1", "rate": "rate(0 minutes)", "action": "TICK"}
    )
    bad_stop = _put(local, "Schedule Stop", {"id": "inv:1", "colour": "red"})

    deadline = time.monotonic() + 60
    rows: list[dict[str, Any]] = []
    while len(rows) < 2:
        assert time.monotonic() < deadline, f"the refusals never showed: {rows}"
        time.sleep(0.2)
        rows = local.cli_json("rejections")

    newest, older = rows[0], rows[1]
    assert (older["eventId"], older["request"], older["id"]) == (
        bad_start, "Schedule Start", "inv:1",
    )  # fmt: skip
    assert newest["eventId"] == bad_stop and newest["request"] == "Schedule Stop"
    assert newest["number"] == older["number"] + 1
    (problem,) = [p for p in older["problems"] if p["field"] == "rate"]
    assert problem["problem"] and problem["fix"]
    assert any(p["field"] == "colour" for p in newest["problems"])
    # the table holds no action for them
    assert local.cli("show", "inv:1", check=False).returncode != 0

    # the text form names the field and the fix; the API gives the same list
    text = local.cli("rejections").stdout
    assert "Schedule Start inv:1" in text and "rate:" in text and "Fix:" in text
    page = local.api.get(f"{local.api_url}/rejections", params={"limit": 1}, timeout=30)
    assert page.status_code == 200, page.text
    assert [r["eventId"] for r in page.json()["rejections"]] == [bad_stop]


def test_the_cli_prints_the_stacks_refusal_of_a_start_it_could_not_check_itself(
    local: LocalProcess,
) -> None:
    """The template is the stack's to check: `tickwork schedule` waits and prints its refusal."""
    local.cli_json("templates", "put", "sms", "DUE_SOON", "--text", "Hi {{name}}, {{amount}} due")
    data = {"notificationType": "SMS", "templateType": "DUE_SOON", "mobile": "60123456789"}
    ran = local.cli(
        "schedule", "--id", "due:1", "--in", "10m", "--action", "SEND_NOTIFICATION",
        "--data", json.dumps({**data, "name": "Cy"}), check=False,
    )  # fmt: skip
    assert ran.returncode == 1, ran
    assert "data.amount" in ran.stderr and "Fix: add data.amount" in ran.stderr
    assert local.cli("show", "due:1", check=False).returncode != 0


def test_a_slip_in_the_detail_type_is_answered_and_another_consumers_event_is_not(
    local: LocalProcess,
) -> None:
    # WHEN an event meant for another consumer goes on the bus, then a Start under a mistyped
    # detail-type, and another with a case slip and a trailing space (all three through the
    # same rule, in that order)
    other = _put(local, "Order Created", {"id": "slip:3", "total": 12})
    typo = _put(local, "Schedule Strat", {"id": "slip:1", "duration": "30m"})
    case = _put(local, "schedule start ", {"id": "slip:2", "duration": "30m"})

    # THEN the two slips are rejected, naming the detail-type meant and those the stack takes
    deadline = time.monotonic() + 60
    found: dict[str, dict[str, Any]] = {}
    while len(found) < 2:
        assert time.monotonic() < deadline, f"the slips were never answered: {found}"
        time.sleep(0.2)
        found = {r["eventId"]: r for r in local.cli_json("rejections") if r.get("eventId")}
        found = {k: v for k, v in found.items() if k in (typo, case)}
    for event_id, sent in ((typo, "Schedule Strat"), (case, "schedule start ")):
        row = found[event_id]
        assert row["request"] == sent
        [problem] = row["problems"]
        assert problem["field"] == "detail-type"
        assert "'Schedule Start'" in problem["problem"] and "Schedule Backfill" in problem["fix"]
    # AND the other consumer's event (delivered before them) is not answered, and no action
    # was created for any
    assert other not in {r.get("eventId") for r in local.cli_json("rejections")}
    listed = {a["id"] for a in local.cli_json("list", "--prefix", "slip:")}
    assert listed == set()
