"""The emulated stack built from template.yaml, with moto's interpreter executing the real
state machine definition and our handlers running in process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest
from moto import mock_aws

from tests.e2e.support import FAST, Stack
from tickwork_local.receiver import Receiver
from tickwork_local.stack import LocalStack


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.path):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture
def make_stack() -> Iterator[Callable[..., Stack]]:
    with ExitStack() as resources:

        def make(max_open_executions: int | None = None, **parameters: str) -> Stack:
            resources.enter_context(
                mock_aws(config={"stepfunctions": {"execute_state_machine": True}})
            )
            stack = LocalStack.from_repo(parameters={**FAST, **parameters})
            stack.max_open_executions = max_open_executions
            local = resources.enter_context(stack.running())
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
