"""The stack on virtual time: a year of a cron, a failing target's hour of retries and the
time API, through the real state machines, each at its own virtual instant."""

from __future__ import annotations

import json
import socket
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.support import Stack, assert_never_early
from tickwork.domain.action import Status
from tickwork.domain.events import DetailType
from tickwork.domain.times import parse_iso
from tickwork_local.receiver import Receiver


def test_a_failing_target_on_a_rate_of_one_minute_advanced_an_hour_retries_each_fire(
    stack: Stack,
) -> None:
    # GIVEN a webhook that always answers 500 (a transient failure: retried with backoff)
    receiver = Receiver(failures=10**6)
    try:
        failures = stack.local.tap([DetailType.FAILED])
        http = {"url": receiver.url, "method": "POST", "body": {"n": 1}}
        stack.start(
            {"id": "every:minute", "rate": "rate(1 minute)", "action": "HTTP_REQUEST", "data": http}
        )
        stack.wait_record("every:minute", lambda a: a.status is Status.PENDING)
        first = stack.record("every:minute").execution_time
        assert first is not None

        # WHEN the stack's clock reaches the 60th fire's time, and its retries' end
        stack.local.time.advance_to((first + timedelta(minutes=59, seconds=30)).timestamp())

        # THEN each of the 60 fires was tried 3 times (FAST: 1 attempt and 2 retries), then
        # recorded FAILED, and the recurrence went on after each, as on real time
        failed = [e["detail"] for e in failures.drain() if e["detail"]["id"] == "every:minute"]
        assert sorted(f["occurrence"] for f in failed) == list(range(1, 61))
        assert len(receiver.requests) == 3 * 60
        action = stack.record("every:minute")
        assert action.status is Status.PENDING and action.occurrence == 61
        # AND every attempt was at its virtual instant: at or after its fire's time, the
        # retries of a fire after it, each within the backoff's bound (2 s at most each)
        sent = [m for m in stack.local.outbox.messages("webhook", "every:minute")]
        assert len(sent) == 3 * 60
        by_fire: dict[int, list[datetime]] = {}
        for message in sent:
            by_fire.setdefault(message["fire"]["occurrence"], []).append(parse_iso(message["at"]))
        for occurrence, moments in by_fire.items():
            moments.sort()
            scheduled = first + timedelta(minutes=occurrence - 1)
            assert moments[0] >= scheduled
            assert moments[-1] - moments[0] <= timedelta(seconds=2 + 2 + 1)
            assert moments[-1] < scheduled + timedelta(minutes=1)
    finally:
        receiver.close()


def test_the_time_api_reads_and_moves_virtual_time_never_backwards(stack: Stack) -> None:
    with stack.local.serving_api() as url:
        headers = {"Authorization": f"Bearer {stack.local.api_token}"}

        def call(method: str, body: Any = None) -> tuple[int, dict[str, Any], Any]:
            data = json.dumps(body).encode() if body is not None else None
            request = urllib.request.Request(
                f"{url}/local/time", data=data, headers=headers, method=method
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    return answer.status, json.loads(answer.read()), answer.headers
            except urllib.error.HTTPError as refused:
                return refused.code, json.loads(refused.read()), refused.headers

        status, reading, answer_headers = call("GET")
        assert status == 200 and reading["virtual"] is True
        assert answer_headers["X-Tickwork-Clock"].startswith("virtual; now=")
        before = parse_iso(reading["now"])

        status, moved, _ = call("POST", {"advance": "30d"})
        assert status == 200
        assert parse_iso(moved["to"]) - before >= timedelta(days=30)

        status, refused, _ = call("POST", {"to": "2020-01-01T00:00:00Z"})
        assert status == 400 and refused["problems"][0]["field"] == "to"
        status, refused, _ = call("POST", {"advance": "-5m"})
        assert status == 400 and refused["problems"][0]["field"] == "advance"
        status, refused, _ = call("POST", {"advance": "1d", "to": "2030-01-01T00:00:00Z"})
        assert status == 400 and refused["problems"][0]["field"] == "body"
        # a time past 100 years from now is refused as an advance of over 100 years is, and
        # the clock is left where it was
        status, refused, _ = call("POST", {"to": "2300-01-01T00:00:00Z"})
        assert status == 400 and refused["problems"][0]["field"] == "to"
        assert "100 years" in refused["problems"][0]["fix"]
        for edge in ("0001-01-01T00:00:00+01:00", "9999-12-31T23:00:00-05:00", "9000-01-02T00:00Z"):
            status, refused, _ = call("POST", {"to": edge})
            assert status == 400 and refused["problems"][0]["field"] == "to", refused
        assert parse_iso(call("GET")[1]["now"]) >= parse_iso(moved["to"])
        assert parse_iso(call("GET")[1]["now"]) < parse_iso(moved["to"]) + timedelta(days=1)
        # a request whose Content-Length is not a count is answered, not dropped
        server = urlsplit(url)
        with socket.create_connection((server.hostname, server.port)) as raw:
            raw.sendall(b"POST /local/time HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
            assert raw.recv(4096).startswith(b"HTTP/1.1 400")

        # AND an advance's counts are its own: a minute holds 60 runs of the pump (FAST: every
        # second), 60 of the count function (the local stack's: every second) and at most one
        # of the reconciler (every 5 minutes), made or left out, and none of them is counted in
        # the next advance
        for _ in range(2):
            status, minute, _ = call("POST", {"advance": "60s"})
            assert status == 200
            assert 120 <= minute["scheduledRuns"] + minute["scheduledRunsLeftOut"] <= 121


@pytest.mark.real_time
def test_a_stack_on_the_wall_clock_refuses_to_move_its_time(stack: Stack) -> None:
    with stack.local.serving_api() as url:
        request = urllib.request.Request(
            f"{url}/local/time",
            data=b'{"advance": "1h"}',
            headers={"Authorization": f"Bearer {stack.local.api_token}"},
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 400
        assert "--virtual-time" in json.loads(refused.value.read())["problems"][0]["fix"]


def test_a_dst_policy_of_both_fires_the_repeated_hour_twice_through_the_machines(
    stack: Stack,
) -> None:
    # GIVEN a daily 01:30 New York cron that fires a repeated local time BOTH times
    stack.local.time.advance_to(datetime(2027, 11, 5, 12, tzinfo=UTC).timestamp())
    stack.start(
        {"id": "dst:both", "cron": "30 1 * * *", "timezone": "America/New_York",
         "dstRepeated": "BOTH"}
    )  # fmt: skip
    stack.wait_record("dst:both", lambda a: a.status is Status.PENDING)

    # WHEN the clock is advanced over the night the clocks go back (Nov 7, 02:00 → 01:00)
    stack.local.time.advance(3 * 86400)

    # THEN that night has two fires an hour apart, each at 01:30 local, never early
    ticks = sorted(stack.ticks_for("dst:both"), key=lambda t: t["occurrence"])
    zone = ZoneInfo("America/New_York")
    local = [parse_iso(t["scheduledTime"]).astimezone(zone).isoformat() for t in ticks]
    assert local == [
        "2027-11-06T01:30:00-04:00",
        "2027-11-07T01:30:00-04:00",
        "2027-11-07T01:30:00-05:00",
        "2027-11-08T01:30:00-05:00",
    ]
    assert_never_early(ticks)
