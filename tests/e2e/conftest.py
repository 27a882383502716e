"""The emulated stack built from template.yaml, with moto's interpreter executing the real
state machine definition and our handlers running in process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
from moto import mock_aws

from tests.e2e.support import FAST, VIRTUAL, Stack
from tickwork_local.receiver import Receiver
from tickwork_local.stack import LocalStack
from tickwork_local.virtual_clock import LocalClock


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.path):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def make_stack(request: pytest.FixtureRequest) -> Iterator[Callable[..., Stack]]:
    """A stack on virtual time that stands still until a wait of tests.e2e.support moves it on
    (so nothing happens between two steps of a test unless it says so), or with
    ``real_time=True`` (or a test marked ``real_time``) on the wall clock, for what tests real
    seconds."""
    with ExitStack() as resources:
        resources.callback(VIRTUAL.clear)

        marked = request.node.get_closest_marker("real_time") is not None

        def make(
            max_open_executions: int | None = None, real_time: bool = marked, **parameters: str
        ) -> Stack:
            resources.enter_context(
                mock_aws(config={"stepfunctions": {"execute_state_machine": True}})
            )
            clock = None if real_time else LocalClock(virtual=True, flowing=False)
            stack = LocalStack.from_repo(parameters={**FAST, **parameters}, clock=clock)
            stack.max_open_executions = max_open_executions
            local = resources.enter_context(stack.running())
            if not real_time:
                VIRTUAL.append(local)
            return Stack(local)

        yield make


@pytest.fixture
def stack(make_stack: Callable[..., Stack]) -> Stack:
    return make_stack()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()
