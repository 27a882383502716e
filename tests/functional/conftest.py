"""Each handler run with the events/ files, against the template's resources in moto.

The state machine is created but not executed here (that is the e2e suite's job): a started
execution is only recorded, so each handler's own effects can be asserted one at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.contract.conftest import REPO, emulated_aws_env
from tests.e2e.support import Stack
from tickwork_local.stack import LocalStack
from tickwork_local.template import Template


@pytest.fixture
def stack() -> Iterator[Stack]:
    with mock_aws(), LocalStack.from_repo().running() as local:
        yield Stack(local)


@pytest.fixture
def invoke(stack: Stack) -> Callable[[str, dict[str, Any]], tuple[Any, str | None]]:
    def call(logical_id: str, event: dict[str, Any]) -> tuple[Any, str | None]:
        name = next(f.name for f in stack.local.functions if f.logical_id == logical_id)
        return stack.local.runtime.invoke(name, event)

    return call


@pytest.fixture
def table_name(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The template's actions table alone (its indexes and stream), in moto."""
    emulated_aws_env(monkeypatch)
    with mock_aws():
        yield Template(REPO / "template.yaml").create_table(
            boto3.client("dynamodb"), "ActionsTable"
        )
