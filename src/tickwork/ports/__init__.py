"""The ports: what the use cases need from the outside world, as protocols, one module per job.

Adapters in ``tickwork.adapters`` implement them over DynamoDB, Step Functions, EventBridge,
Secrets Manager and the notification services; tests pass in-memory fakes (tests/unit/fakes),
which the contract tests (tests/contract) hold to the same answers as the adapters.
"""

from __future__ import annotations

from tickwork.ports.clock import Clock
from tickwork.ports.events import EventPublisher, OutboundEvent
from tickwork.ports.executions import (
    AlreadyStarted,
    ExecutionInput,
    ExecutionStarter,
    ExecutionState,
)
from tickwork.ports.notifier import Notification, Notifier
from tickwork.ports.secrets import SecretSource
from tickwork.ports.signatures import SignatureLedger, Spent
from tickwork.ports.slots import ConcurrencySlots
from tickwork.ports.stores import (
    ATTENTION,
    ActionQueries,
    ActionRecords,
    CalendarStore,
    CountTabs,
    FireTallies,
    ParkedFires,
    RejectionLog,
    TabbedRecords,
)
from tickwork.ports.targets import TargetClients

__all__ = [
    "ATTENTION",
    "ActionQueries",
    "ActionRecords",
    "AlreadyStarted",
    "CalendarStore",
    "Clock",
    "ConcurrencySlots",
    "CountTabs",
    "EventPublisher",
    "ExecutionInput",
    "ExecutionStarter",
    "ExecutionState",
    "FireTallies",
    "Notification",
    "Notifier",
    "OutboundEvent",
    "ParkedFires",
    "RejectionLog",
    "SecretSource",
    "SignatureLedger",
    "Spent",
    "TabbedRecords",
    "TargetClients",
]
