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
from tickwork.domain.errors import CalendarConflict, CalendarTampered
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


def test_a_calendars_seal_is_kept_with_it_and_read_back_alike(store: CalendarStore) -> None:
    sealed = replace(_calendar("uk", 1, "2026-12-25"), seal="c1=" + "ab" * 16)
    store.put(sealed)
    read = store.get("uk")
    assert read is not None and read.seal == sealed.seal and read.to_dict() == sealed.to_dict()
    (listed,) = store.all()
    assert listed.seal == sealed.seal
    store.put(_calendar("uk", 2))  # written without one: none is read back
    again = store.get("uk")
    assert again is not None and again.seal is None


def test_a_calendar_item_that_cannot_be_read_is_named_tampered_with_its_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    emulated_aws_env(monkeypatch)
    with mock_aws():
        client = boto3.client("dynamodb")
        name = Template(REPO / "template.yaml").create_table(client, "ActionsTable")
        store = DynamoDBCalendars(name)
        store.put(_calendar("uk", 1))
        store.put(_calendar("eu", 1))
        client.update_item(  # an edit in the table that leaves no calendar behind
            TableName=name,
            Key={"id": {"S": "#calendar#uk"}},
            UpdateExpression="SET calendar = :bad, version = :v",
            ExpressionAttributeValues={":bad": {"S": "{not json"}, ":v": {"N": "7"}},
        )
        with pytest.raises(CalendarTampered) as unreadable:
            store.get("uk")
        assert unreadable.value.name == "uk" and unreadable.value.version == 7
        assert [c.name for c in store.all()] == ["eu"], "left out of the list, not an error"
        store.put(_calendar("uk", 8))  # put again after the version its item says
        assert store.get("uk") == _calendar("uk", 8)
