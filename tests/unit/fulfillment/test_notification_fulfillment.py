"""SEND_NOTIFICATION: the data model, the fulfillment and the recording notifier."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tests.unit.fulfillment.registry_support import builtin_registry
from tickwork.domain.backfill import Overlap
from tickwork.domain.errors import (
    InvalidActionData,
    PermanentFulfillmentError,
    TransientFulfillmentError,
)
from tickwork.fulfillment import (
    FulfillmentRequest,
    LoggingNotifier,
    NotificationData,
    NotificationFulfillment,
)
from tickwork.ports.notifier import Notification
from tickwork.steering.backfill import backfill
from tickwork.steering.start import StartCommand, start_action

SEED = {
    "mobile": "60123456789",
    "subject": "Test",
    "name": "Joojo",
    "templateType": "USER_LATE_PAYMENT_NOTIFICATION",
    "notificationType": "SMS",
}
FIRE = datetime(2025, 1, 15, 8, 35, 17, tzinfo=UTC)
REGISTRY = builtin_registry()


def _request(data: dict[str, Any], action_id: str = "late-payment:42", occurrence: int = 1):
    parsed = REGISTRY.validate("SEND_NOTIFICATION", data)
    key = f"{action_id}:{occurrence}"  # as unique per fire as tickwork's own keys
    return FulfillmentRequest(action_id, "SEND_NOTIFICATION", occurrence, FIRE, parsed, key)


class _RaisingNotifier:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def send(self, notification: Notification) -> str:
        raise self.error


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(SEED, id="seed-sms"),
        pytest.param({**SEED, "mobile": "+60123456789"}, id="sms-leading-plus"),
        pytest.param(
            {"notificationType": "EMAIL", "email": "joojo@example.com", "templateType": "WELCOME"},
            id="email",
        ),
        pytest.param(
            {"notificationType": "PUSH", "userId": "user-7", "templateType": "DAILY_DIGEST_2"},
            id="push",
        ),
    ],
)
def test_valid_notification_data_is_accepted(data: dict[str, Any]) -> None:
    # GIVEN the default registry WHEN notification data is validated
    parsed = builtin_registry().validate("SEND_NOTIFICATION", data)
    # THEN it is accepted as given
    assert isinstance(parsed, NotificationData)
    assert parsed.model_dump(by_alias=True, exclude_none=True) == data


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param({"mobile": None}, "data.mobile", id="sms-without-mobile"),
        pytest.param({"mobile": "6012"}, "data.mobile", id="mobile-too-short"),
        pytest.param({"mobile": "6012345678901234"}, "data.mobile", id="mobile-too-long"),
        pytest.param({"mobile": "60-1234-5678"}, "data.mobile", id="mobile-not-digits"),
        pytest.param({"mobile": 60123456789}, "data.mobile", id="mobile-a-number"),
        pytest.param({"notificationType": "EMAIL"}, "data.email", id="email-without-email"),
        pytest.param(
            {"notificationType": "EMAIL", "email": "joojo"}, "data.email", id="email-malformed"
        ),
        pytest.param({"notificationType": "PUSH"}, "data.userId", id="push-without-user"),
        pytest.param({"templateType": ""}, "data.templateType", id="template-empty"),
        pytest.param({"templateType": "late_payment"}, "data.templateType", id="template-lower"),
        pytest.param({"templateType": None}, "data.templateType", id="template-missing"),
        pytest.param({"subject": 5}, "data.subject", id="subject-not-string"),
        pytest.param({"notificationType": "sms"}, "data.notificationType", id="type-lowercase"),
        pytest.param({"template_type": "X"}, "data.template_type", id="snake-case-key"),
    ],
)
def test_invalid_notification_data_is_refused_naming_the_field(
    change: dict[str, Any], field: str
) -> None:
    # GIVEN the seed data with one change (None removes the key)
    data = {**SEED, **change}
    data = {k: v for k, v in data.items() if v is not None}
    # WHEN it is validated
    with pytest.raises(InvalidActionData) as caught:
        builtin_registry().validate("SEND_NOTIFICATION", data)
    # THEN the refused field is named, with a fix
    problems = {p.field: p for p in caught.value.problems}
    assert field in problems, caught.value.problems
    assert problems[field].fix


def test_fulfill_sends_through_the_notifier_and_returns_its_message_id() -> None:
    # GIVEN a recording notifier behind the fulfillment
    notifier = LoggingNotifier()
    fulfillment = NotificationFulfillment(notifier)
    # WHEN the seed notification is fulfilled
    result = fulfillment.fulfill(_request(SEED, occurrence=2))
    # THEN the notifier got the SMS addressed to the mobile, keyed by (action, occurrence)
    assert notifier.sent == [
        Notification(
            notification_type="SMS",
            recipient="60123456789",
            template_type="USER_LATE_PAYMENT_NOTIFICATION",
            subject="Test",
            name="Joojo",
            action_id="late-payment:42",
            idempotency_key="late-payment:42:2",
            occurrence=2,
            scheduled_time=FIRE,
            attempt=1,
            trigger="SCHEDULED",
            template_data={
                "notificationType": "SMS",
                "templateType": "USER_LATE_PAYMENT_NOTIFICATION",
                "mobile": "60123456789",
                "subject": "Test",
                "name": "Joojo",
            },
        )
    ]
    assert result == {"notificationType": "SMS", "messageId": "logged-1"}


def test_a_retried_fire_is_recorded_once() -> None:
    # GIVEN a fire already sent once
    notifier = LoggingNotifier()
    fulfillment = NotificationFulfillment(notifier)
    first = fulfillment.fulfill(_request(SEED, occurrence=1))
    # WHEN the same fire is retried, and then the next occurrence fires
    again = fulfillment.fulfill(_request(SEED, occurrence=1))
    following = fulfillment.fulfill(_request(SEED, occurrence=2))
    # THEN the retry answers the first message id without a second send
    assert again == first
    assert following["messageId"] != first["messageId"]
    assert [n.idempotency_key for n in notifier.sent] == ["late-payment:42:1", "late-payment:42:2"]


def test_logging_notifier_logs_each_notification(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN the development notifier, which logs instead of sending
    notifier = LoggingNotifier()
    # WHEN a notification is fulfilled
    with caplog.at_level(logging.INFO, logger="tickwork.fulfillment.notifier"):
        NotificationFulfillment(notifier).fulfill(_request(SEED))
    # THEN one log record names the action and the template, and says it was not sent
    (record,) = [r for r in caplog.records if r.getMessage().startswith("notification logged")]
    assert record.action_id == "late-payment:42"
    assert record.template_type == "USER_LATE_PAYMENT_NOTIFICATION"


def test_logging_notifier_is_thread_safe() -> None:
    # GIVEN one notifier shared by many threads
    notifier = LoggingNotifier()
    fulfillment = NotificationFulfillment(notifier)
    start = threading.Barrier(16)
    ids: list[str] = []

    def fire(occurrence: int) -> None:
        start.wait()
        for n in range(25):
            result = fulfillment.fulfill(_request(SEED, occurrence=occurrence * 100 + n))
            ids.append(result["messageId"])

    # WHEN they send distinct fires at once
    threads = [threading.Thread(target=fire, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # THEN every fire is recorded exactly once with its own message id
    assert len(notifier.sent) == 16 * 25
    assert len(set(ids)) == 16 * 25
    assert len({n.idempotency_key for n in notifier.sent}) == 16 * 25


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(TransientFulfillmentError("provider throttled"), id="transient"),
        pytest.param(PermanentFulfillmentError("number barred"), id="permanent"),
    ],
)
def test_notifier_errors_propagate_as_they_are(error: Exception) -> None:
    # GIVEN a notifier that fails
    fulfillment = NotificationFulfillment(_RaisingNotifier(error))
    # WHEN a notification is fulfilled
    with pytest.raises(type(error)) as caught:
        fulfillment.fulfill(_request(SEED))
    # THEN the very error reaches the caller, its class name intact for the state machine
    assert caught.value is error
    assert type(caught.value).__name__ == type(error).__name__


def test_default_registry_uses_the_given_notifier() -> None:
    # GIVEN a notifier passed to the default registry
    notifier = LoggingNotifier()
    registry = builtin_registry(notifier)
    # WHEN SEND_NOTIFICATION is fulfilled through it
    registry.get("SEND_NOTIFICATION").fulfill(_request(SEED))
    # THEN that notifier sent it
    assert len(notifier.sent) == 1


class _ThrottledOnce(LoggingNotifier):
    """A provider that refuses its first send (throttled), then sends; keeps every one tried."""

    def __init__(self) -> None:
        super().__init__()
        self.tried: list[Notification] = []

    def send(self, notification: Notification) -> str:
        self.tried.append(notification)
        if len(self.tried) == 1:
            raise TransientFulfillmentError("provider throttled")
        return super().send(notification)


CREATED = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)


def test_the_notifier_is_told_which_fire_and_that_a_retry_is_attempt_2() -> None:
    # GIVEN an hourly notification whose provider throttles the first send
    notifier = _ThrottledOnce()
    deps = fake_dependencies(CREATED, notifier=notifier)
    detail = {"id": "late:1", "cron": "0 * * * *", "action": "SEND_NOTIFICATION", "data": SEED}
    start_action(StartCommand(detail), deps)
    name = machine.current(deps, "late:1")
    due = datetime(2026, 11, 20, 13, 0, tzinfo=UTC)
    deps.clock.current = due  # type: ignore[attr-defined]
    # WHEN its first fire fails transiently and the state machine retries it
    with pytest.raises(TransientFulfillmentError):
        machine.run(deps, name)
    tick = machine.run(deps, name, retry_count=1)
    # THEN both attempts named the fire (the same key, occurrence and time), the retry as 2
    assert tick is not None and tick.attempts == 2
    first, retry = notifier.tried
    assert (first.attempt, retry.attempt) == (1, 2)
    for sent in (first, retry):
        assert (sent.occurrence, sent.scheduled_time, sent.trigger) == (1, due, "SCHEDULED")
        assert sent.idempotency_key == tick.idempotency_key
    assert notifier.sent == [retry]


def test_a_backfilled_notification_carries_its_own_past_time() -> None:
    # GIVEN an hourly notification created at 12:30
    notifier = LoggingNotifier()
    deps = fake_dependencies(CREATED, notifier=notifier)
    detail = {"id": "late:1", "cron": "0 * * * *", "action": "SEND_NOTIFICATION", "data": SEED}
    start_action(StartCommand(detail), deps)
    # WHEN 09:00 to 11:00 of that day is backfilled and its fires run
    nine = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    backfill("late:1", nine, nine + timedelta(hours=2), Overlap.REFUSE, deps)
    action = deps.records.get("late:1")
    assert action is not None
    for fire in action.manual.in_flight:
        machine.run(deps, machine.manual(deps, "late:1", fire.number))
    # THEN each was told its own past scheduled time and BACKFILL; a fire asked for by hand
    # is numbered apart from the schedule's (occurrence 0), its time saying which it is
    assert sorted((n.scheduled_time, n.occurrence, n.trigger) for n in notifier.sent) == [
        (nine + timedelta(hours=h), 0, "BACKFILL") for h in range(3)
    ]
    assert {n.attempt for n in notifier.sent} == {1}
