"""The local outbox's file and route, held to what a developer's machine needs: the file
readable by its owner only (it holds what fires sent, as the keys beside it are), a line in it
that is not a message skipped and named (never the whole outbox unreadable), and a bad
``limit`` on GET /local/outbox answered 400 naming it (never a dropped connection)."""

from __future__ import annotations

import json
import stat
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.e2e.support import Stack
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.fulfillment.tick import TickData
from tickwork_local.outbox import Outbox, read_outbox

FIRE = FulfillmentRequest(
    action_id="o:1",
    action="TICK",
    occurrence=1,
    scheduled_time=datetime(2026, 11, 27, 12, 0, tzinfo=UTC),
    data=TickData(),
    idempotency_key="k-1",
)


def test_the_outbox_file_is_its_owners_alone(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"

    Outbox(path).keep("queue", {"to": "q", "body": "hi"}, FIRE)

    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_line_that_is_not_a_message_is_skipped_and_named(tmp_path: Path) -> None:
    path = tmp_path / "outbox.jsonl"
    outbox = Outbox(path)
    outbox.keep("queue", {"to": "q", "body": "first"}, FIRE)
    with path.open("a") as out:
        out.write('{"kind": "sms"}\n[1, 2]\n{"torn": \n')
    outbox.keep("queue", {"to": "q", "body": "second"}, FIRE)

    read = read_outbox(path)

    assert [m["body"] for m in read.messages] == ["second", "first"]
    assert read.skipped == [
        "line 2 of outbox.jsonl: JSON, but not a message a fire sent",
        "line 3 of outbox.jsonl: JSON, but not a message a fire sent",
        "line 4 of outbox.jsonl: not JSON (torn by a kill?)",
    ]
    assert [m["body"] for m in read_outbox(path, kind="queue", action_id="o:1").messages] == [
        "second",
        "first",
    ]


@pytest.mark.parametrize("limit", ["²", "0", "-1", "1001", "ten", "1e3"])
def test_a_limit_that_is_not_1_to_1000_is_a_400_naming_it(stack: Stack, limit: str) -> None:
    with stack.local.serving_api() as url:
        request = urllib.request.Request(
            f"{url}/local/outbox?limit={urllib.request.quote(limit)}",
            headers={"Authorization": f"Bearer {stack.local.api_token}"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open(request, timeout=10)
    assert refused.value.code == 400
    answer = json.loads(refused.value.read())
    assert [p["field"] for p in answer["problems"]] == ["limit"]
