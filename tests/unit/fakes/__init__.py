"""In-memory fakes of the ports: they hold state, and tests assert on it.

``fake_dependencies`` builds through ``tickwork.bootstrap.build`` like every other caller; the
type checker (``make typecheck``) holds each fake against the port it stands for, and
tests/contract runs the store fakes and their DynamoDB adapters through the same cases.
"""

from __future__ import annotations

from tests.unit.fakes.aws import (
    FakeExecutions,
    FakePublisher,
    FakeSecrets,
    FakeSignatures,
    NoTargets,
)
from tests.unit.fakes.deps import FakeClock, attempt, fake_dependencies
from tests.unit.fakes.stores import (
    FakeCalendars,
    FakeCountTabs,
    FakeFireTallies,
    FakeParkedFires,
    FakeQueries,
    FakeRecords,
    FakeRejections,
    FakeStore,
)

__all__ = [
    "FakeCalendars",
    "FakeClock",
    "FakeCountTabs",
    "FakeExecutions",
    "FakeFireTallies",
    "FakeParkedFires",
    "FakePublisher",
    "FakeQueries",
    "FakeRecords",
    "FakeRejections",
    "FakeSecrets",
    "FakeSignatures",
    "FakeStore",
    "NoTargets",
    "attempt",
    "fake_dependencies",
]
