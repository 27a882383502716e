"""GIVEN an hourly cron action on the emulated stack (virtual time, the real state machines),
created after some of its occurrences WHEN a past range is backfilled through the HTTP API THEN
each occurrence of the range runs once, a few at a time until all have, through the fire
machine: ticks on the bus with trigger BACKFILL, the occurrence's own past scheduledTime and a
key of its own; the record shows the backfilled span; asked again, nothing runs twice; an
overlap with the live schedule is refused (409) or skipped as asked; and the live schedule
fires as before."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from tests.e2e.support import Stack, assert_never_early, wait_until
from tests.functional.api_support import Api, action_path, serving
from tickwork.domain.action import Status
from tickwork.domain.fire import Trigger
from tickwork.domain.times import iso, parse_iso


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as api:
        yield api


def test_a_past_range_runs_once_each_through_the_machines(stack: Stack, api: Api) -> None:
    assert api.post("/actions", {"id": "report", "cron": "0 * * * *"}).status == 201
    action = stack.wait_record("report", lambda a: a.status is Status.PENDING)
    hour = action.execution_time
    assert hour is not None
    start = hour - timedelta(hours=8)  # 8 hours before the first live fire: all before creation
    end = hour - timedelta(hours=1)
    path = action_path("report", "backfill")

    answer = api.post(path, {"startTime": iso(start), "endTime": iso(end), "note": "outage"})
    assert answer.status == 202, answer.text
    assert answer.json["occurrences"] == 8 and answer.json["outcome"] == "backfilling"
    assert len(answer.json["launched"]) == 5 and answer.json["remaining"] == 3

    seen: dict[str, dict] = {}  # by key: a tick may be put on the bus more than once

    def all_ran() -> bool:
        for tick in stack.ticks_for("report"):
            if tick.get("trigger") == "BACKFILL":
                seen[tick["idempotencyKey"]] = tick
        return len(seen) >= 8

    wait_until(all_ran, 60, "8 backfilled ticks")
    ticks = list(seen.values())
    expected = [iso(start + timedelta(hours=n)) for n in range(8)]
    assert sorted(t["scheduledTime"] for t in ticks) == expected
    assert len({t["manual"] for t in ticks}) == 8
    assert all(t["outcome"] == "FIRED" and t["occurrence"] == 0 for t in ticks)
    assert_never_early(ticks)
    record = stack.wait_record("report", lambda a: a.backfill is None and not a.manual.in_flight)
    assert [(s.first, s.last) for s in record.backfilled] == [(start, end)]
    assert record.status is Status.PENDING and record.execution_time == hour  # unmoved
    assert all(h.trigger is Trigger.BACKFILL for h in record.history)
    # backfilled fires run late by design: never counted late (their ticks, history, /stats)
    assert all(t["lateMs"] == 0 for t in ticks)
    assert all(h.late_ms == 0 for h in record.history)
    stack.wait_counted()
    last_hour = api.get("/stats").json["lastHour"]
    assert last_hour["fired"] == 8 and last_hour["late"] == 0, last_hour

    again = api.post(path, {"startTime": iso(start), "endTime": iso(end)})
    assert again.status == 202 and again.json["outcome"] == "unchanged"
    assert again.json["alreadyBackfilled"] == 8 and again.json["launched"] == []

    stack.local.time.advance_to((hour + timedelta(hours=1, minutes=5)).timestamp())
    live = stack.wait_record("report", lambda a: a.occurrence >= 3)
    past_live = iso(hour + timedelta(hours=1))
    refused = api.post(path, {"startTime": iso(end), "endTime": past_live})
    assert refused.status == 409, refused.text
    assert refused.json["error"] == "BackfillOverlap"
    assert refused.json["problems"][0]["field"] == "endTime"
    skipped = api.post(path, {"startTime": iso(end), "endTime": past_live, "overlap": "SKIP"})
    assert skipped.status == 202, skipped.text
    assert skipped.json["overlapping"] == 2 and skipped.json["alreadyBackfilled"] == 1
    assert skipped.json["outcome"] == "unchanged" and skipped.json["launched"] == []
    assert [h.occurrence for h in live.history if h.trigger is Trigger.SCHEDULED] == [1, 2]
    bad = api.post(
        path,
        {"startTime": iso(end), "endTime": iso(datetime.now().astimezone() + timedelta(days=400))},
    )
    assert bad.status == 400 and bad.json["problems"][0]["field"] == "endTime"
    assert parse_iso(skipped.json["firstOverlapping"]) == hour
