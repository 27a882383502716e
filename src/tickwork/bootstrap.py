"""The one place ``Dependencies`` are built: for the Lambda functions, the CLI, the local stack
and the tests.

``build(settings, aws)`` gives every port its AWS adapter (each client made at its first call,
so building calls nothing); a caller replaces a port by naming it (``records=FakeRecords(...)``).
Without ``aws`` (unit tests), every AWS-backed port must be given: a port is never quietly
missing or quietly a stand-in. ``from_environment()`` is the Lambda functions' build, once per
container, from the environment template.yaml sets.
"""

from __future__ import annotations

import functools
from functools import cache
from typing import TYPE_CHECKING, TypedDict, Unpack

from tickwork.adapters.clients import AwsClients
from tickwork.adapters.essential_events import EssentialEvents
from tickwork.clock import SystemClock
from tickwork.config import Settings
from tickwork.dependencies import Dependencies
from tickwork.fire import grouping
from tickwork.fulfillment.defaults import default_registry
from tickwork.ports import Spent

if TYPE_CHECKING:
    from datetime import datetime, timedelta

    from tickwork.fulfillment.registry import FulfillmentRegistry
    from tickwork.ports import (
        ActionQueries,
        ActionRecords,
        CalendarStore,
        Clock,
        ConcurrencySlots,
        CountTabs,
        EventPublisher,
        ExecutionStarter,
        FireTallies,
        Notifier,
        ParkedFires,
        RejectionLog,
        SecretSource,
        SignatureLedger,
        TargetClients,
    )

__all__ = ["MissingPort", "Ports", "build", "from_environment", "use_clock"]


class Ports(TypedDict, total=False):
    """What a caller of ``build`` may give in place of the adapter it would make."""

    records: ActionRecords
    queries: ActionQueries
    parked: ParkedFires
    tallies: FireTallies
    tabs: CountTabs
    executions: ExecutionStarter
    batches: ExecutionStarter
    publisher: EventPublisher
    clock: Clock
    slots: ConcurrencySlots
    secrets: SecretSource
    signatures: SignatureLedger
    notifier: Notifier
    targets: TargetClients
    registry: FulfillmentRegistry
    rejections: RejectionLog
    calendars: CalendarStore


class MissingPort(Exception):
    """``build`` was asked for dependencies without an adapter for a port, nor one given."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(
            f"no adapter for {', '.join(names)}: pass aws=AwsClients() or give "
            + ", ".join(f"{name}=..." for name in names)
        )


def build(
    settings: Settings, aws: AwsClients | None = None, **given: Unpack[Ports]
) -> Dependencies:
    ports: Ports = {**given}
    ports.setdefault("clock", SystemClock())
    if aws is not None:
        _aws_adapters(settings, aws, ports)
    if "slots" not in ports and not settings.slots_table_name:
        ports["slots"] = NoConcurrencySlots()
    if "signatures" not in ports and not settings.start_secret_id:
        ports["signatures"] = NoSignatures()
    if "notifier" not in ports:
        ports["notifier"] = _notifier(settings, aws)
    missing = [
        name
        for name in (
            "records",
            "queries",
            "parked",
            "tallies",
            "tabs",
            "executions",
            "batches",
            "publisher",
            "slots",
            "secrets",
            "signatures",
            "targets",
            "rejections",
            "calendars",
        )
        if name not in ports
    ]
    if missing:
        raise MissingPort(missing)
    secrets = ports["secrets"]
    http_secret_id = settings.http_secret_id
    ports.setdefault(
        "registry",
        default_registry(
            notifier=ports["notifier"],
            http_secret=(lambda: secrets.get(http_secret_id)) if http_secret_id else None,
            allow_private_targets=settings.allow_private_targets,
            targets=ports["targets"],
        ),
    )
    publisher = ports["publisher"]
    if settings.lifecycle_events == "essential":
        publisher = EssentialEvents(publisher)
    return Dependencies(
        settings=settings,
        records=ports["records"],
        queries=ports["queries"],
        parked=ports["parked"],
        tallies=ports["tallies"],
        tabs=ports["tabs"],
        executions=ports["executions"],
        batches=ports["batches"],
        publisher=publisher,
        clock=ports["clock"],
        slots=ports["slots"],
        secrets=secrets,
        signatures=ports["signatures"],
        notifier=ports["notifier"],
        targets=ports["targets"],
        registry=ports["registry"],
        rejections=ports["rejections"],
        calendars=ports["calendars"],
    )


_process_clock: list[Clock] = []  # the clock use_clock gave (none: the system clock)


def use_clock(clock: Clock | None) -> None:
    """Build this process's functions' dependencies on ``clock`` from now on (None: the system
    clock): the local stack runs its functions in its own process on its clock, which may be
    virtual. The dependencies built so far are forgotten (a cold start). Never on Lambda."""
    _process_clock.clear()
    if clock is not None:
        _process_clock.append(clock)
    from_environment.cache_clear()


@cache
def from_environment() -> Dependencies:
    """The dependencies of this container, built on first use (the cold start) and kept."""
    given: Ports = {"clock": _process_clock[0]} if _process_clock else {}
    return build(Settings.from_environment(), AwsClients(), **given)


def _aws_adapters(settings: Settings, aws: AwsClients, ports: Ports) -> None:
    # Imported here: a unit test's build never loads botocore.
    from tickwork.adapters.counted_memo import CountedMemo
    from tickwork.adapters.dynamodb_calendars import DynamoDBCalendars
    from tickwork.adapters.dynamodb_count_tab import DynamoDBCountTabs
    from tickwork.adapters.dynamodb_parked import DynamoDBParkedFires
    from tickwork.adapters.dynamodb_queries import DynamoDBQueries
    from tickwork.adapters.dynamodb_records import DynamoDBRecords
    from tickwork.adapters.dynamodb_rejections import DynamoDBRejections
    from tickwork.adapters.dynamodb_slots import DynamoDBSlots
    from tickwork.adapters.dynamodb_tallies import DynamoDBFireTallies
    from tickwork.adapters.eventbridge import EventBridgePublisher
    from tickwork.adapters.execution_refs import ExecutionRefs
    from tickwork.adapters.secrets import SecretsManagerSource
    from tickwork.adapters.stepfunctions import StepFunctionsExecutions
    from tickwork.adapters.target_clients import TargetClients

    table = settings.table_name
    memo = CountedMemo()  # what the loaded versions count as: writes of them need no read
    refs = ExecutionRefs(
        settings.state_machine_arn,
        settings.named_batch_machine_arn or settings.batch_state_machine_arn,
    )
    ports.setdefault("records", DynamoDBRecords(table, clients=aws, memo=memo, refs=refs))
    ports.setdefault(
        "queries",
        DynamoDBQueries(
            table,
            clients=aws,
            expiry_days=settings.finished_ttl.days + 1,
            clock=ports["clock"],
            memo=memo,
            refs=refs,
        ),
    )
    ports.setdefault(
        "parked",
        DynamoDBParkedFires(
            table,
            clients=aws,
            launch_moment=functools.partial(grouping.launch_moment, settings=settings),
            first_not_due=functools.partial(grouping.first_not_due, settings=settings),
        ),
    )
    ports.setdefault("tallies", DynamoDBFireTallies(table, clients=aws))
    ports.setdefault("rejections", DynamoDBRejections(table, settings.keep_rejections, clients=aws))
    ports.setdefault("calendars", DynamoDBCalendars(table, clients=aws))
    ports.setdefault("tabs", DynamoDBCountTabs(table, clients=aws, memo=memo, refs=refs))
    ports.setdefault("executions", StepFunctionsExecutions(settings.state_machine_arn, clients=aws))
    # Without a batch machine (FireBatching=false), nothing is batched: it is never started.
    batch_machine = settings.batch_state_machine_arn or settings.state_machine_arn
    ports.setdefault("batches", StepFunctionsExecutions(batch_machine, clients=aws))
    ports.setdefault(
        "publisher",
        EventBridgePublisher(settings.event_bus_name, settings.event_source, clients=aws),
    )
    ports.setdefault("secrets", SecretsManagerSource(clients=aws))
    ports.setdefault("targets", TargetClients(aws))
    if settings.slots_table_name:
        ports.setdefault("slots", DynamoDBSlots(settings.slots_table_name, clients=aws))
    if settings.signatures_table_name:
        from tickwork.adapters.dynamodb_signatures import DynamoDBSignatures

        ports.setdefault(
            "signatures", DynamoDBSignatures(settings.signatures_table_name, clients=aws)
        )


def _notifier(settings: Settings, aws: AwsClients | None) -> Notifier:
    if settings.notification_delivery == "log":
        from tickwork.fulfillment.notifier import LoggingNotifier

        return LoggingNotifier()
    if settings.notification_delivery == "aws" and aws is not None:
        from tickwork.adapters.aws_notifier import AwsNotifier

        return AwsNotifier(
            aws,  # configured as a target's clients (one attempt each) at the first send
            email_from=settings.email_from,
            email_template_prefix=settings.email_template_prefix,
            text_parameter_path=settings.text_parameter_path,
            push_topic_arn=settings.push_topic_arn,
            stack_name=settings.stack_name,
            text_cache_seconds=settings.text_cache_seconds,
        )
    raise MissingPort(
        [
            "notifier (set NOTIFICATION_DELIVERY to aws, or log for development: "
            "SEND_NOTIFICATION must be told how it delivers)"
        ]
    )


class NoConcurrencySlots:
    """The slots of a stack with no concurrency limits (no slots table): never asked for one,
    since only an action type with a limit takes a slot."""

    def acquire(
        self, key: str, limit: int, holder: str, now: datetime, lease: timedelta
    ) -> str | None:
        raise RuntimeError(f"a concurrency limit is set for {key} but the stack has no slots table")

    def waits(self, holder: str) -> int:
        raise RuntimeError("the stack has no slots table")

    def release(self, slot: str, holder: str) -> None:
        raise RuntimeError("the stack has no slots table")


class NoSignatures:
    """The signature ledger of a stack that takes unsigned events: never asked."""

    def spend(self, digest: str, event_id: str | None, until: datetime) -> Spent:
        raise RuntimeError("signatures are checked but the stack has no signatures table")

    def advance(self, action_id: str, signed_at: int, until: datetime) -> bool:
        raise RuntimeError("signatures are checked but the stack has no signatures table")
