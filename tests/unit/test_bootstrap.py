"""GIVEN the one bootstrap WHEN dependencies are built for a function, the CLI or a test THEN
every port has an adapter or a given stand-in, and a missing one is refused by name rather
than quietly replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.fakes import (
    FakeExecutions,
    FakePublisher,
    FakeRecords,
    FakeSecrets,
    NoTargets,
)
from tickwork import bootstrap
from tickwork.adapters.aws_notifier import AwsNotifier
from tickwork.adapters.clients import AwsClients
from tickwork.adapters.dynamodb_parked import DynamoDBParkedFires
from tickwork.adapters.dynamodb_queries import DynamoDBQueries
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.adapters.dynamodb_slots import DynamoDBSlots
from tickwork.adapters.dynamodb_tallies import DynamoDBFireTallies
from tickwork.adapters.eventbridge import EventBridgePublisher
from tickwork.adapters.secrets import SecretsManagerSource
from tickwork.adapters.stepfunctions import StepFunctionsExecutions
from tickwork.clock import SystemClock
from tickwork.config import Settings
from tickwork.dependencies import Dependencies
from tickwork.fulfillment.notifier import LoggingNotifier
from tickwork_local.template import Template

REPO = Path(__file__).resolve().parents[2]


def _settings(**overrides: object) -> Settings:
    base: dict[str, object] = {
        "table_name": "t",
        "event_bus_name": "b",
        "state_machine_arn": "arn:aws:states:us-east-1:123456789012:stateMachine:sm",
        "notification_delivery": "log",
    }
    return Settings(**{**base, **overrides})  # type: ignore[arg-type]


def test_with_aws_every_port_gets_its_adapter_and_nothing_is_called() -> None:
    deps = bootstrap.build(_settings(slots_table_name="slots"), AwsClients())

    assert isinstance(deps.records, DynamoDBRecords)
    assert isinstance(deps.queries, DynamoDBQueries)
    assert isinstance(deps.parked, DynamoDBParkedFires)
    assert isinstance(deps.tallies, DynamoDBFireTallies)
    assert isinstance(deps.executions, StepFunctionsExecutions)
    assert isinstance(deps.publisher, EventBridgePublisher)
    assert isinstance(deps.secrets, SecretsManagerSource)
    assert isinstance(deps.slots, DynamoDBSlots)
    assert isinstance(deps.clock, SystemClock)
    assert isinstance(deps.notifier, LoggingNotifier)  # NOTIFICATION_DELIVERY=log, explicitly
    assert len(deps.registry.types()) == 8 and "SQS_MESSAGE" in deps.registry.types()


def test_without_aws_a_missing_port_is_refused_by_name() -> None:
    with pytest.raises(bootstrap.MissingPort) as missing:
        bootstrap.build(_settings(), records=FakeRecords(), publisher=FakePublisher())

    assert "executions" in str(missing.value) and "secrets" in str(missing.value)
    assert "queries" in str(missing.value) and "records" not in str(missing.value)


def test_notifications_without_a_chosen_delivery_are_refused() -> None:
    with pytest.raises(bootstrap.MissingPort, match="NOTIFICATION_DELIVERY"):
        bootstrap.build(_settings(notification_delivery=None), AwsClients())


def test_an_unknown_delivery_is_refused_when_the_settings_load() -> None:
    with pytest.raises(ValueError, match="NOTIFICATION_DELIVERY='sms-gateway'"):
        _settings(notification_delivery="sms-gateway")


def test_a_given_port_replaces_its_adapter() -> None:
    records, notifier = FakeRecords(), LoggingNotifier()
    deps = bootstrap.build(
        _settings(notification_delivery=None),
        AwsClients(),
        records=records,
        notifier=notifier,
    )
    assert deps.records is records and deps.notifier is notifier


def test_a_bundle_cannot_be_made_without_a_port() -> None:
    with pytest.raises(TypeError, match="notifier"):
        Dependencies(  # type: ignore[call-arg]
            settings=_settings(),
            records=FakeRecords(),
            executions=FakeExecutions(),
            publisher=FakePublisher(),
            clock=SystemClock(),
            slots=bootstrap.NoConcurrencySlots(),
            secrets=FakeSecrets(),
            targets=NoTargets(),
            registry=bootstrap.build(_settings(), AwsClients()).registry,
        )


@pytest.mark.parametrize(
    "function", [f.logical_id for f in Template(REPO / "template.yaml").functions()]
)
def test_every_deployed_function_builds_from_the_environment_the_template_gives_it(
    function: str,
) -> None:
    spec = next(f for f in Template(REPO / "template.yaml").functions() if f.logical_id == function)

    deps = bootstrap.build(Settings.from_environment(spec.environment), AwsClients())

    assert deps.settings.notification_delivery == "aws"  # the template's default: it sends
    assert isinstance(deps.notifier, AwsNotifier)
    assert deps.settings.table_name.endswith("ActionsTable")
