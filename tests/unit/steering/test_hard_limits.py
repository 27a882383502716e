"""GIVEN a Start or a setting past one of tickwork's hard limits WHEN it is checked THEN it is
refused with the field, the limit and the fix, and nothing is written."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from tests.unit.fakes import fake_dependencies
from tickwork.config import Settings, parse_limits
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.identifiers import MAX_ID_LENGTH
from tickwork.steering.start import MAX_PAYLOAD_BYTES, StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("detail", "field", "words"),
    [
        ({"id": "x" * (MAX_ID_LENGTH + 1), "duration": "5m"}, "id", "1-200 characters"),
        ({"id": "a b", "duration": "5m"}, "id", "letters, digits"),
        ({"id": "a/b", "duration": "5m"}, "id", "letters, digits"),
        (
            {"id": "big", "duration": "5m", "data": {"blob": "x" * MAX_PAYLOAD_BYTES}},
            "data",
            "byte limit",
        ),
        (
            {"id": "n", "rate": "rate(1 minute)", "executionRemainder": 1_000_001},
            "executionRemainder",
            "1,000,000",
        ),
        ({"id": "far", "duration": "3700d"}, "duration", "10 years"),
        ({"id": "far", "at": "2040-01-01T00:00:00Z"}, "at", "10 years"),
        ({"id": "w", "duration": "5m", "misfireThreshold": "2d"}, "misfireThreshold", "1s to 1d"),
        (
            {"id": "w", "rate": "rate(1 hour)", "catchUp": "ALL", "catchUpWindow": "60d"},
            "catchUpWindow",
            "30 days",
        ),
    ],
)
def test_a_start_past_a_limit_is_refused_and_writes_nothing(detail, field, words) -> None:
    deps = fake_dependencies(NOW)

    with pytest.raises(ValidationFailed) as refused:
        start_action(StartCommand(detail), deps)

    (problem,) = refused.value.problems
    assert problem.field == field
    assert words in f"{problem.problem} {problem.fix}"
    assert deps.records.items == {} and deps.executions.started == {}


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("HISTORY_LIMIT", "500", "HISTORY_LIMIT=500 is outside 1-200"),
        ("TRANSITION_LIMIT", "0", "TRANSITION_LIMIT=0 is outside 1-200"),
        ("BATCH_MIN_FIRES", "1", "give 2 <= BatchMinFires <= BatchMaxFires <= 500"),
        ("BATCH_MAX_FIRES", "501", "give 2 <= BatchMinFires <= BatchMaxFires <= 500"),
        ("LIFECYCLE_EVENTS", "some", "LIFECYCLE_EVENTS='some': give one of all, essential"),
        ("BATCH_WINDOW_SECONDS", "21", "BATCH_WINDOW_SECONDS=21: give whole seconds, 1-20"),
        ("BATCH_WINDOW_SECONDS", "2.5", "BATCH_WINDOW_SECONDS=2.5: give whole seconds, 1-20"),
        ("BATCH_WINDOW_SECONDS", "0", "BATCH_WINDOW_SECONDS=0: give whole seconds, 1-20"),
        ("NEAR_PARK_SECONDS", "-1", "NEAR_PARK_SECONDS=-1 is outside 120-900"),
        ("NEAR_PARK_SECONDS", "60", "NEAR_PARK_SECONDS=60 is outside 120-900"),
        ("NEAR_PARK_SECONDS", "900", "NEAR_PARK_SECONDS=900 is outside 120-900"),
    ],
)
def test_the_bounds_of_a_record_and_a_batch_are_checked_when_settings_load(
    setting: str, value: str, message: str
) -> None:
    env = {"TABLE_NAME": "t", "EVENT_BUS_NAME": "b", "STATE_MACHINE_ARN": "arn"}
    with pytest.raises(ValueError, match=re.escape(message)):
        Settings.from_environment({**env, setting: value})


def test_batches_are_off_when_the_stack_turns_them_off() -> None:
    env = {"TABLE_NAME": "t", "EVENT_BUS_NAME": "b", "STATE_MACHINE_ARN": "arn"}
    on = {**env, "BATCH_STATE_MACHINE_ARN": "arn:batch", "FIRE_BATCHING": "true"}
    assert Settings.from_environment(on).batch_state_machine_arn == "arn:batch"
    off = {**on, "FIRE_BATCHING": "false"}
    assert Settings.from_environment(off).batch_state_machine_arn is None


def test_concurrency_limits_parse_and_bad_entries_name_the_fix() -> None:
    assert parse_limits("HTTP_REQUEST=10, SEND_NOTIFICATION=2") == {
        "HTTP_REQUEST": 10,
        "SEND_NOTIFICATION": 2,
    }
    assert parse_limits("") == {}
    with pytest.raises(ValueError, match="HTTP_REQUEST=10,SEND_NOTIFICATION=50"):
        parse_limits("HTTP_REQUEST=0")
    with pytest.raises(ValueError, match="SLOTS_TABLE_NAME"):
        Settings("t", "b", "arn", concurrency_limits={"TICK": 1})
