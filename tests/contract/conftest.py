"""One suite per store port, run against the in-memory fake (tests/unit/fakes) and against the
DynamoDB adapter over moto, with the actions table made from template.yaml's own properties:
a case that passes on one and fails on the other is a fake that lies to the unit tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.unit.fakes import (
    FakeClock,
    FakeCountTabs,
    FakeFireTallies,
    FakeParkedFires,
    FakeQueries,
    FakeRecords,
    FakeStore,
)
from tickwork.adapters.counted_memo import CountedMemo
from tickwork.adapters.dynamodb_count_tab import DynamoDBCountTabs
from tickwork.adapters.dynamodb_parked import DynamoDBParkedFires
from tickwork.adapters.dynamodb_queries import DynamoDBQueries
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.adapters.dynamodb_stream_counts import DynamoDBStreamCounts
from tickwork.adapters.dynamodb_tallies import DynamoDBFireTallies
from tickwork.domain.action import Action, Limits
from tickwork.domain.selection import Selection
from tickwork.domain.start_request import parse_start_detail
from tickwork.ports import ActionQueries, ActionRecords, CountTabs, FireTallies, ParkedFires
from tickwork_local.template import Template

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
REPO = Path(__file__).resolve().parents[2]


@dataclass
class Stores:
    records: ActionRecords
    queries: ActionQueries
    parked: ParkedFires
    tallies: FireTallies
    tabs: CountTabs
    clock: FakeClock

    def add(self, action_id: str, **changes: Any) -> Action:
        """A new action due in ``minutes`` (default 10) written through the records port, with
        ``changes`` applied as a later version would hold them."""
        minutes = changes.pop("minutes", 10)
        detail = {
            "id": action_id,
            "at": (self.clock.now() + timedelta(minutes=minutes)).isoformat(),
        }
        request = parse_start_detail(detail, self.clock.now())
        first = request.schedule.first_fire_time(self.clock.now())
        assert first is not None
        action = Action.scheduled(action_id, request, first, self.clock.now(), "h", None, Limits())
        self.records.create(action)
        if changes:
            changed = replace(action, version=action.version + 1, **changes)
            self.records.save(changed, action.version)
            return changed
        return action


def emulated_aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A region and dummy credentials for boto3 inside ``mock_aws``."""
    for key, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        monkeypatch.setenv(key, value)


class FoldedQueries(DynamoDBQueries):
    """The queries as a reader sees them once the count function has folded every write (on
    AWS, within ``CountSchedule``): the real fold runs before each count."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self._counts = DynamoDBStreamCounts(name)

    def count(self, selection: Selection) -> dict[str, int]:
        self._counts.fold()
        return super().count(selection)


class FoldedTallies(DynamoDBFireTallies):
    """The fire totals once every write is folded (see ``FoldedQueries``)."""

    def read(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        DynamoDBStreamCounts(self._name).fold()
        return super().read(group, hourly, first, last)


@pytest.fixture(params=["fake", "dynamodb"])
def stores(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stores]:
    clock = FakeClock(NOW)
    if request.param == "fake":
        store = FakeStore()
        yield Stores(
            FakeRecords(store),
            FakeQueries(store),
            FakeParkedFires(store),
            FakeFireTallies(store),
            FakeCountTabs(store),
            clock,
        )
        return
    emulated_aws_env(monkeypatch)
    with mock_aws():
        name = Template(REPO / "template.yaml").create_table(
            boto3.client("dynamodb"), "ActionsTable"
        )
        memo = CountedMemo()
        yield Stores(
            DynamoDBRecords(name, memo=memo),
            FoldedQueries(name, clock=clock, memo=memo),
            DynamoDBParkedFires(name),
            FoldedTallies(name),
            DynamoDBCountTabs(name, memo=memo),
            clock,
        )
