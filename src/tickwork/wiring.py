"""Builds the production Dependencies from the environment: AWS adapters, system clock.

Each handler calls ``from_environment()``; the first call builds, later calls reuse. Nothing
here calls AWS or makes a client: each client is made at its first use (adapters/clients.py).
Clients honour ``AWS_ENDPOINT_URL``: that is how the same code talks to the local stack.
"""

from __future__ import annotations

from functools import cache

from tickwork.adapters.clients import AwsClients
from tickwork.adapters.dynamodb_repository import DynamoDBActionRepository
from tickwork.adapters.dynamodb_slots import DynamoDBSlots
from tickwork.adapters.eventbridge import EventBridgePublisher
from tickwork.adapters.secrets import SecretsManagerSource
from tickwork.adapters.stepfunctions import StepFunctionsExecutions
from tickwork.clock import SystemClock
from tickwork.config import Settings
from tickwork.dependencies import Dependencies
from tickwork.fulfillment.defaults import default_registry

__all__ = ["from_environment"]


@cache
def from_environment() -> Dependencies:
    """The dependencies of this container, built on first use (the cold start) and kept."""
    settings = Settings.from_environment()
    clients = AwsClients()  # each made at its first call, one per service
    secrets = SecretsManagerSource(clients=clients)
    http_secret_id = settings.http_secret_id
    return Dependencies(
        settings=settings,
        repository=DynamoDBActionRepository(settings.table_name, clients=clients),
        executions=StepFunctionsExecutions(settings.state_machine_arn, clients=clients),
        publisher=EventBridgePublisher(
            settings.event_bus_name, settings.event_source, clients=clients
        ),
        registry=default_registry(
            http_secret=(lambda: secrets.get(http_secret_id)) if http_secret_id else None,
            allow_private_targets=settings.allow_private_targets,
        ),
        clock=SystemClock(),
        slots=(
            DynamoDBSlots(settings.slots_table_name, clients=clients)
            if settings.slots_table_name
            else None
        ),
        secrets=secrets,
    )
