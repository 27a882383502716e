"""GIVEN the HTTP API served as API Gateway calls it WHEN an operator creates, reads, lists,
replaces and deletes exclusion calendars, schedules an action that names one and previews a
schedule with it THEN each answers with the documented status and shape (201 made, 200
replaced with its version up, 204 deleted, 404 unknown), the action holds the calendar's copy
and fires past its dates, the preview shows the effect, and bad input is a 400 naming the
field."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.e2e.support import Stack
from tests.functional.api_support import Api, action_path, serving
from tickwork.domain.times import parse_iso

UK = {
    "timezone": "Europe/London",
    "dates": ["2030-12-25", "2030-12-26"],
    "hours": {"MON-FRI": ["09:00-17:00"]},
    "description": "England and Wales",
}


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as client:
        yield client


def test_calendars_are_made_read_listed_replaced_and_deleted(api: Api) -> None:
    made = api.put("/calendars/uk", UK)
    assert made.status == 201, made.text
    assert "updatedAt" in made.json and "updated_at" not in made.json
    assert made.json["version"] == 1 and made.json["hours"] == {"MON": ["09:00-17:00"],
        "TUE": ["09:00-17:00"], "WED": ["09:00-17:00"], "THU": ["09:00-17:00"],
        "FRI": ["09:00-17:00"]}  # fmt: skip
    replaced = api.put("/calendars/uk", {**UK, "dates": ["2030-12-25"]})
    assert replaced.status == 200 and replaced.json["version"] == 2
    assert api.get("/calendars/uk").json["dates"] == ["2030-12-25"]
    api.put("/calendars/us", {"dates": ["2030-07-04"]})
    assert [c["name"] for c in api.get("/calendars").json["calendars"]] == ["uk", "us"]
    deleted = api.delete("/calendars/us")
    assert deleted.status == 200 and deleted.json == {"name": "us", "outcome": "deleted"}
    missing = api.get("/calendars/us")
    assert missing.status == 404 and missing.json["problems"][0]["field"] == "name"
    assert api.delete("/calendars/us").status == 404
    bad = api.put("/calendars/uk", {"dates": ["2030-13-01"], "hours": {"MONDAY": ["9-5"]}})
    assert bad.status == 400
    assert {p["field"] for p in bad.json["problems"]} == {"dates[0]", "hours.MONDAY"}
    assert api.get("/calendars/uk").json["version"] == 2, "a refused replace writes nothing"
    # a value of the wrong type is named as the domain names it, by its index
    typed = api.put("/calendars/uk", {"dates": ["2030-12-25", 7], "hours": {"MON": [9]}})
    assert typed.status == 400
    assert {p["field"] for p in typed.json["problems"]} == {"dates[1]", "hours.MON[0]"}
    assert api.put("/calendars/u%20k", UK).status == 400


def test_a_schedule_names_a_calendar_and_the_preview_shows_it(api: Api, stack: Stack) -> None:
    api.put("/calendars/uk", UK)
    refused = api.post("/actions", {"id": "r", "cron": "0 10 * * *", "calendar": "nope"})
    assert refused.status == 400 and refused.json["problems"][0]["field"] == "calendar"
    made = api.post(
        "/actions",
        {"id": "r", "cron": "0 10 * * *", "calendar": "uk", "onExcluded": "SHIFT"},
    )
    assert made.status == 201, made.text
    record = stack.record("r")
    assert record.schedule.calendar is not None and record.schedule.calendar.calendar is not None
    assert not record.schedule.calendar.calendar.excludes(record.execution_time)
    preview = api.post(
        "/preview",
        {"cron": "0 10 * * *", "timezone": "Europe/London", "calendar": "uk",
         "onExcluded": "SHIFT", "after": "2030-12-20T12:00:00Z", "count": 4},
    )  # fmt: skip
    assert preview.status == 200, preview.text
    assert [parse_iso(t["utc"]) for t in preview.json["times"]] == [
        datetime(2030, 12, 23, 9, tzinfo=UTC),  # Sunday's 10:00, to Monday's opening
        datetime(2030, 12, 23, 10, tzinfo=UTC),
        datetime(2030, 12, 24, 10, tzinfo=UTC),
        datetime(2030, 12, 27, 9, tzinfo=UTC),  # the 26th's, past the holidays
    ]
    unknown = api.post("/preview", {"cron": "0 10 * * *", "calendar": "nope"})
    assert unknown.status == 400 and unknown.json["problems"][0]["field"] == "calendar"
    shown = api.get(action_path("r"))
    assert shown.json["scheduleSpec"]["calendar"]["name"] == "uk"
