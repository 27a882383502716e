"""GIVEN the stack's exclusion calendars in memory (the fake) or in the actions table (items
``#calendar#<name>`` and the index ``#calendars``) WHEN calendars are created, replaced,
listed and deleted THEN both answer alike: a replace must follow the version it read, a
listing holds each once by name, and nothing lands under an id an action could have."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import boto3
import pytest
from moto import mock_aws

from tests.contract.conftest import NOW, REPO, emulated_aws_env
from tests.unit.fakes import FakeCalendars
from tickwork.adapters.dynamodb_calendars import DynamoDBCalendars
from tickwork.domain.errors import CalendarConflict
from tickwork.domain.identifiers import ID_PATTERN
from tickwork.domain.schedule.calendar import Calendar
from tickwork.ports import CalendarStore
from tickwork_local.template import Template


@pytest.fixture(params=["fake", "dynamodb"])
def store(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[CalendarStore]:
    if request.param == "fake":
        yield FakeCalendars()
        return
    emulated_aws_env(monkeypatch)
    with mock_aws():
        client = boto3.client("dynamodb")
        name = Template(REPO / "template.yaml").create_table(client, "ActionsTable")
        yield DynamoDBCalendars(name)
        ids = [item["id"]["S"] for item in client.scan(TableName=name)["Items"]]
        assert ids and not any(ID_PATTERN.fullmatch(i) for i in ids)


def _calendar(name: str, version: int = 1, *dates: str) -> Calendar:
    body = {
        "timezone": "Europe/London",
        "dates": list(dates),
        "hours": {"MON-FRI": ["09:00-17:00"]},
    }
    return Calendar.parse(name, body, version, NOW)


def test_calendars_are_kept_replaced_listed_and_deleted_alike(store: CalendarStore) -> None:
    first = _calendar("uk", 1, "2026-12-25")
    store.put(first)
    store.put(_calendar("eu.bank-holidays", 1))
    assert store.get("uk") == first and store.get("nope") is None
    with pytest.raises(CalendarConflict):
        store.put(_calendar("uk", 1))  # made twice
    with pytest.raises(CalendarConflict):
        store.put(_calendar("uk", 3))  # not over the version read
    second = _calendar("uk", 2, "2026-12-25", "2026-12-28")
    store.put(second)
    assert store.get("uk") == second
    assert [c.name for c in store.all()] == ["eu.bank-holidays", "uk"]
    assert store.delete("uk") and not store.delete("uk")
    assert [c.name for c in store.all()] == ["eu.bank-holidays"]
    again = replace(_calendar("uk", 1), description="made again")
    store.put(again)
    assert store.get("uk") == again
