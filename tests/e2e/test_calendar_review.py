"""What a fourth outside review found in calendars, through the emulated stack (virtual time,
the real state machines, the table the review wrote to):

GIVEN a daily schedule naming a calendar put through tickwork WHEN the calendar's item is
edited in the table (today's and tomorrow's dates added, its version and write time bumped, its
seal left as it was) THEN the next fire still fires as planned — not SKIPPED, not moved — a
Schedule Tampered names the calendar, the action needs attention, and the record's sealed copy
of the calendar is never sealed again over the edited content.

GIVEN live schedules naming a calendar WHEN it is put with 1,000 consecutive dates, then put
back THEN the minute schedule's fire, pushed to 2029, comes back at once (plannedAgain); a
calendar allowing only Monday 09:00-09:01 leaves the minute schedule PENDING for Monday, and is
refused (409, naming it) for a daily 10:30 it would leave no fire — held only when asked by
name (paused on it, in attention), and resumed when the calendar allows it again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from tests.e2e.support import Stack, advance_to
from tests.functional.api_support import Api, serving
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome
from tickwork.fire.sealing import seal_holds


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as api:
        yield api


def test_a_calendar_edited_in_the_table_neither_skips_nor_delays_a_fire(
    stack: Stack, api: Api
) -> None:
    assert api.put("/calendars/work", {"timezone": "UTC"}).status == 201
    body = {"id": "daily", "cron": "0 10 * * *", "calendar": "work"}
    assert api.post("/actions", body).status == 201
    first = stack.wait_record("daily", lambda a: a.execution_time is not None).execution_time
    assert first is not None
    # what a holder of the table's write credential does
    table = boto3.resource("dynamodb").Table(stack.local.outputs["ActionsTableName"])
    item = table.get_item(Key={"id": "#calendar#work"})["Item"]
    content = json.loads(str(item["calendar"]))
    days = [first.date(), first.date() + timedelta(days=1)]
    content.update(
        dates=[d.isoformat() for d in days],
        version=2,
        updatedAt=datetime.now(UTC).isoformat(),
    )
    table.put_item(Item={**item, "calendar": json.dumps(content), "version": 2})
    advance_to(first + timedelta(minutes=1))
    record = stack.wait_record("daily", lambda a: len(a.history) >= 1)
    assert [(h.scheduled_time, h.outcome) for h in record.history] == [(first, Outcome.FIRED)]
    assert record.execution_time == first + timedelta(days=1), "planned on the sealed copy"
    held = record.schedule.calendar
    assert held is not None and held.calendar is not None
    assert held.calendar.version == 1 and not held.calendar.dates, "not sealed over the edit"
    assert seal_holds(record, stack.deps)
    assert record.needs_attention and record.tampered_calendar is not None
    events = stack.lifecycle.drain()
    said = [e["detail"] for e in events if e["detail-type"] == DetailType.TAMPERED]
    assert [e["id"] for e in said] == ["daily"] and "calendar 'work'" in said[0]["reason"]
    assert not [e for e in events if e["detail-type"] == DetailType.SKIPPED]
    listed = api.get("/actions?attention=true").json["items"]
    assert [a["id"] for a in listed] == ["daily"]
    shown = api.get("/actions/daily").json
    assert shown["calendarTampered"]["calendar"] == "work" and shown["needsAttention"]
    # the calendar itself says its item is not as tickwork wrote it; put again, it is
    assert api.get("/calendars/work").json["sealed"] is False
    assert [c["sealed"] for c in api.get("/calendars").json["calendars"]] == [False]
    assert api.put("/calendars/work", {"timezone": "UTC"}).status == 200
    assert api.get("/calendars/work").json["sealed"] is True


def test_a_calendar_edit_never_ends_or_freezes_the_schedules_naming_it(
    stack: Stack, api: Api
) -> None:
    assert api.put("/calendars/c", {"timezone": "UTC"}).status == 201
    for body in (
        {"id": "minutely", "cron": "* * * * *", "calendar": "c"},
        {"id": "daily", "cron": "30 10 * * *", "calendar": "c"},
    ):
        assert api.post("/actions", body).status == 201, body
    first = stack.wait_record("minutely", lambda a: a.execution_time is not None).execution_time
    assert first is not None
    today = stack.local.clock.now().date()
    dates = [(today + timedelta(days=n)).isoformat() for n in range(1000)]
    assert api.put("/calendars/c", {"timezone": "UTC", "dates": dates}).status == 200
    advance_to(first + timedelta(seconds=30))  # the planned fire: skipped when due
    far = datetime.combine(today + timedelta(days=1000), datetime.min.time(), UTC)
    pushed = stack.wait_record("minutely", lambda a: (a.execution_time or far) >= far)
    assert pushed.status.value == "PENDING"
    # put back: the fire comes back at once, not in 2029
    back = api.put("/calendars/c", {"timezone": "UTC"})
    assert back.status == 200 and back.json["plannedAgain"] == ["minutely"], back.json
    now = stack.local.clock.now()
    returned = stack.record("minutely")
    assert returned.execution_time is not None
    assert now < returned.execution_time <= now + timedelta(minutes=1)
    advance_to(returned.execution_time + timedelta(seconds=30))
    fired = stack.wait_record("minutely", lambda a: len(a.history) >= 2)
    assert fired.history[-1].outcome is Outcome.FIRED
    # Monday 09:00-09:01 only: the minute schedule keeps a fire; the daily 10:30 would have none
    monday = {"timezone": "UTC", "hours": {"MON": ["09:00-09:01"]}}
    refused = api.put("/calendars/c", monday)
    assert refused.status == 409, refused.json
    assert refused.json["error"] == "CalendarEndsSchedules" and "'daily'" in refused.json["message"]
    assert "holdSchedules=true" in refused.json["problems"][0]["fix"]
    assert api.get("/calendars/c").json["version"] == 3, "nothing written"
    held = api.put("/calendars/c?holdSchedules=true", monday)
    assert held.status == 200 and held.json["held"] == ["daily"], held.json
    shown = api.get("/actions/daily").json
    assert shown["status"] == "PAUSED" and shown["heldByCalendar"] == "c"
    assert shown["needsAttention"]
    planned = stack.record("minutely").execution_time  # planned before: skipped when due
    assert planned is not None
    advance_to(planned + timedelta(seconds=30))
    minutely = stack.wait_record("minutely", lambda a: a.execution_time != planned)
    assert minutely.status.value == "PENDING" and minutely.execution_time is not None
    assert minutely.execution_time.weekday() == 0 and minutely.execution_time.hour == 9
    events = stack.lifecycle.drain()
    assert not [e for e in events if e["detail-type"] == DetailType.COMPLETED]
    paused = [e["detail"] for e in events if e["detail-type"] == DetailType.PAUSED]
    assert [(p["id"], p.get("heldByCalendar")) for p in paused] == [("daily", "c")]
    # allowed again: resumed by itself
    again = api.put("/calendars/c", {"timezone": "UTC"})
    assert again.status == 200 and again.json["resumed"] == ["daily"], again.json
    assert api.get("/actions/daily").json["status"] == "PENDING"


def test_an_older_sealed_calendar_put_back_in_the_table_is_not_taken(
    stack: Stack, api: Api
) -> None:
    """A fifth review: version 1 of a calendar, its own genuine seal and all, put back over
    version 2 with put-item. It skipped the next fire with no Schedule Tampered, and the record
    was sealed again on version 1. Now the fire runs on the record's version 2, says so, and
    the action needs attention."""
    today = stack.local.clock.now().date()
    days = [(today + timedelta(days=n)).isoformat() for n in range(3)]
    assert api.put("/calendars/k", {"timezone": "UTC", "dates": days}).status == 201
    table = boto3.resource("dynamodb").Table(stack.local.outputs["ActionsTableName"])
    version_1 = table.get_item(Key={"id": "#calendar#k"})["Item"]  # excludes these 3 days
    assert api.put("/calendars/k", {"timezone": "UTC", "dates": ["2032-01-01"]}).status == 200
    assert (
        api.post("/actions", {"id": "hourly", "cron": "0 * * * *", "calendar": "k"}).status == 201
    )
    first = stack.wait_record("hourly", lambda a: a.execution_time is not None).execution_time
    assert first is not None and first.date().isoformat() in days
    table.put_item(Item=version_1)  # the genuine version 1, replayed as it was
    advance_to(first + timedelta(minutes=1))
    record = stack.wait_record("hourly", lambda a: len(a.history) >= 1)
    assert [h.outcome for h in record.history] == [Outcome.FIRED]
    held = record.schedule.calendar
    assert held is not None and held.calendar is not None and held.calendar.version == 2
    assert record.needs_attention and record.tampered_calendar is not None
    said = [e["detail"] for e in stack.lifecycle.drain() if e["detail-type"] == DetailType.TAMPERED]
    assert said and "earlier version put back" in said[0]["reason"]


def test_a_paused_schedule_pushed_out_by_its_calendar_resumes_on_the_calendar_put_back(
    stack: Stack, api: Api
) -> None:
    start = stack.local.clock.now().date()
    dates = [(start + timedelta(days=n)).isoformat() for n in range(1000)]
    assert api.put("/calendars/pp", {"timezone": "UTC", "dates": dates}).status == 201
    assert (
        api.post("/actions", {"id": "pp-1", "cron": "50 * * * *", "calendar": "pp"}).status == 201
    )
    pushed = stack.wait_record("pp-1", lambda a: a.execution_time is not None).execution_time
    assert pushed is not None and pushed.year >= 2029
    assert api.post("/actions/pp-1/pause").status == 200
    assert api.put("/calendars/pp", {"timezone": "UTC", "dates": ["2035-01-01"]}).status == 200

    resumed = api.post("/actions/pp-1/resume").json

    assert resumed["outcome"] == "resumed"
    record = stack.record("pp-1")
    assert record.execution_time is not None
    assert record.execution_time - stack.local.clock.now() <= timedelta(hours=1)
