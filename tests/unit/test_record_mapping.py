"""GIVEN an action with history WHEN mapped to a DynamoDB item and back THEN nothing changes,
and the item keeps the seed schema's camelCase names all the way down."""

from __future__ import annotations

from datetime import UTC, datetime

from tickwork.adapters.dynamodb_record import from_item, status_shard, to_item
from tickwork.domain.action import Action, Occurrence, Status, Transition
from tickwork.domain.fire import Outcome
from tickwork.domain.schedule import Schedule


def _action() -> Action:
    return Action(
        id="a:1",
        action="TICK",
        data={"price": 1.5, "n": 2},
        metadata={},
        status=Status.PENDING,
        schedule=Schedule.of_frequency(
            "DAILY", datetime(2026, 1, 1, 8, tzinfo=UTC), max_occurrences=5
        ),
        execution_time=datetime(2026, 3, 1, 8, 0, 0, 123000, tzinfo=UTC),
        occurrence=2,
        generation=1,
        version=7,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        updated_at=datetime(2026, 3, 1, 8, tzinfo=UTC),
        spec_hash="h",
        history=(
            Occurrence(
                1,
                datetime(2026, 2, 28, 8, tzinfo=UTC),
                datetime(2026, 2, 28, 8, 0, 0, 210_000, tzinfo=UTC),
                2,
                Outcome.FIRED,
            ),
        ),
        transitions=(
            Transition(datetime(2026, 1, 1, tzinfo=UTC), None, Status.PENDING, "created"),
        ),
    )


def test_round_trip_is_lossless() -> None:
    action = _action()
    assert from_item(to_item(action)) == action


def test_item_uses_seed_names_and_camel_case_history() -> None:
    item = to_item(_action())
    assert item["executionTime"] == 1772352000123
    assert (
        item["executionRemainder"] == 4 and item["frequency"] == "DAILY" and item["repeat"] is True
    )
    assert item["history"] == [
        {
            "occurrence": 1,
            "scheduledTime": "2026-02-28T08:00:00.000Z",
            "actualTime": "2026-02-28T08:00:00.210Z",
            "attempts": 2,
            "outcome": "FIRED",
        }
    ]
    assert item["transitions"][0] == {
        "at": "2026-01-01T00:00:00.000Z",
        "fromStatus": None,
        "toStatus": "PENDING",
        "reason": "created",
    }
    assert item["statusShard"] == status_shard("PENDING", "a:1")
    assert item["statusShard"].startswith("PENDING#")
