"""GIVEN an action with a retry policy of its own (maximumRetryAttempts, maximumEventAgeSeconds)
WHEN its target keeps failing transiently THEN each attempt carries the same key, the machine
retries it while the policy allows, and the task ends the fire as RetriesExhausted when it no
longer does — without calling the target for an attempt the policy does not allow (after
attempts that crashed, or past the fire's age)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from tests.unit.fakes import attempt, fake_dependencies
from tests.unit.machine import fulfill_fire
from tickwork.dependencies import Dependencies
from tickwork.domain.errors import RetriesExhausted, TransientFulfillmentError, ValidationFailed
from tickwork.domain.naming import execution_name
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.steering.start import StartCommand, start_action
from tickwork.views import action_view

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
FIRE = "2026-03-07T12:10:00.000Z"
NAME = execution_name("a:1", 1, 1, key=None)


class _Data(BaseModel):
    model_config = ConfigDict(extra="allow")


class AlwaysDown:
    """A target that answers 503 to every call, and notes each."""

    action_type: ClassVar[str] = "DOWN"
    data_model: ClassVar[type[BaseModel]] = _Data

    def __init__(self) -> None:
        self.calls: list[FulfillmentRequest] = []

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        self.calls.append(request)
        raise TransientFulfillmentError("503 Service Unavailable")


def _deps(**policy: Any) -> tuple[Dependencies, AlwaysDown]:
    deps = fake_dependencies(NOW, retry_max_attempts=5)
    target = AlwaysDown()
    deps.registry.register(target)
    detail = {"id": "a:1", "duration": "10m", "action": "DOWN", **policy}
    start_action(StartCommand(detail, "ev-1"), deps)
    return deps, target


def _try(deps: Dependencies, retry: int, at: datetime) -> type[Exception]:
    deps.clock.current = at  # type: ignore[attr-defined]
    with pytest.raises((TransientFulfillmentError, RetriesExhausted)) as raised:
        fulfill_fire(attempt("a:1", 1, FIRE, NAME, retry=retry), deps)
    return type(raised.value)


@settings(max_examples=25, deadline=None)
@given(retries=st.sampled_from([0, 1, 2, 7, 185]))
def test_a_fire_is_attempted_exactly_as_often_as_its_policy_allows(retries: int) -> None:
    deps, target = _deps(maximumRetryAttempts=retries)
    due = datetime(2026, 3, 7, 12, 10, tzinfo=UTC)
    outcomes = [_try(deps, n, due + timedelta(seconds=n)) for n in range(min(retries, 9) + 1)]
    if retries > 9:
        return  # the first ten attempts are retried: the rest as the short policies show
    # THEN every attempt but the last is retried; the last ends the fire
    assert outcomes == [TransientFulfillmentError] * retries + [RetriesExhausted]
    assert len(target.calls) == 1 + retries
    assert {c.idempotency_key for c in target.calls} == {target.calls[0].idempotency_key}
    assert [c.attempt for c in target.calls] == list(range(1, retries + 2))


def test_without_a_policy_the_stacks_retries_apply() -> None:
    deps, target = _deps()
    due = datetime(2026, 3, 7, 12, 10, tzinfo=UTC)
    outcomes = [_try(deps, n, due + timedelta(seconds=n)) for n in range(6)]
    assert len(target.calls) == 6
    assert outcomes == [TransientFulfillmentError] * 5 + [RetriesExhausted]  # RetryMaxAttempts 5


def test_a_retry_past_the_event_age_calls_nothing_and_ends_the_fire() -> None:
    deps, target = _deps(maximumRetryAttempts=20, maximumEventAgeSeconds=60)
    due = datetime(2026, 3, 7, 12, 10, tzinfo=UTC)
    assert _try(deps, 0, due) is TransientFulfillmentError
    assert _try(deps, 1, due + timedelta(seconds=59)) is TransientFulfillmentError
    # WHEN the machine's next retry comes after the age
    assert _try(deps, 2, due + timedelta(seconds=61)) is RetriesExhausted
    # THEN the target was not called for it
    assert len(target.calls) == 2


def test_a_retry_after_attempts_that_crashed_is_not_made_past_the_policy() -> None:
    deps, target = _deps(maximumRetryAttempts=2)
    due = datetime(2026, 3, 7, 12, 10, tzinfo=UTC)
    assert _try(deps, 0, due) is TransientFulfillmentError
    # attempts 2 and 3 died (timed out) without a word; the machine retries a 4th
    assert _try(deps, 3, due + timedelta(seconds=30)) is RetriesExhausted
    assert len(target.calls) == 1


def test_while_a_fire_retries_its_view_says_what_is_left_and_until_when() -> None:
    deps, _ = _deps(maximumRetryAttempts=3, maximumEventAgeSeconds=600)
    due = datetime(2026, 3, 7, 12, 10, tzinfo=UTC)
    _try(deps, 0, due)
    _try(deps, 1, due + timedelta(seconds=2))
    view = action_view(deps.records.get("a:1"), 5)
    assert view["retrying"] == {
        "occurrence": 1,
        "attemptsMade": 2,
        "attemptsLeft": 2,
        "deadline": "2026-03-07T12:20:00.000Z",
        "lastError": "TransientFulfillmentError: 503 Service Unavailable",
    }
    assert view["maximumRetryAttempts"] == 3 and view["maximumEventAgeSeconds"] == 600


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("maximumRetryAttempts", -1),
        ("maximumRetryAttempts", 186),
        ("maximumEventAgeSeconds", 59),
        ("maximumEventAgeSeconds", 86_401),
        ("lockSeconds", -1),
        ("lockSeconds", 3_601),
        ("maximumRetryAttempts", "3"),
        ("deadLetterArn", "arn:aws:sns:us-east-1:123456789012:topic"),
        ("deadLetterArn", "https://sqs.us-east-1.amazonaws.com/123456789012/q"),
    ],
)
def test_a_policy_out_of_bounds_is_refused_naming_the_field(field: str, value: Any) -> None:
    deps = fake_dependencies(NOW)
    with pytest.raises(ValidationFailed) as refused:
        start_action(StartCommand({"id": "a:1", "duration": "10m", field: value}), deps)
    assert [p.field for p in refused.value.problems] == [field]
    assert deps.records.get("a:1") is None


def test_a_dead_letter_queue_off_the_allow_list_is_refused() -> None:
    deps = fake_dependencies(NOW)
    arn = "arn:aws:sqs:us-east-1:123456789012:dlq"
    with pytest.raises(ValidationFailed, match="SqsTargetArns") as refused:
        start_action(StartCommand({"id": "a:1", "duration": "10m", "deadLetterArn": arn}), deps)
    assert [p.field for p in refused.value.problems] == ["deadLetterArn"]


def test_a_fire_handed_over_by_a_batch_keeps_its_age_from_its_fire_time() -> None:
    """A fifth review: the lone execution a batch hands a failing member to waits from the
    hand-over, and the age was counted from that wait: attempts started after the age."""
    deps, target = _deps(maximumRetryAttempts=185, maximumEventAgeSeconds=60)
    due = datetime(2026, 3, 7, 12, 10, tzinfo=UTC)
    assert _try(deps, 0, due) is TransientFulfillmentError  # the batch's attempt
    handed = attempt("a:1", 1, FIRE, NAME, retry=0)
    order = replace(handed.order, wait_until=due + timedelta(seconds=30), attempts_before=1)
    deps.clock.current = due + timedelta(seconds=61)  # type: ignore[attr-defined]
    with pytest.raises(RetriesExhausted, match="deadline"):
        fulfill_fire(replace(handed, order=order), deps)
    assert len(target.calls) == 1  # nothing started past the age
