"""GIVEN the emulated endpoint served on a loopback port WHEN the stack is built there and an
action is scheduled through it THEN it fires once: the harness is not tied to in-process moto."""

from __future__ import annotations

from tests.e2e.support import FAST, Stack, assert_never_early, in_seconds
from tickwork.domain.action import Status
from tickwork_local.server import serving
from tickwork_local.stack import LocalStack


def test_stack_served_on_a_port_fires_once() -> None:
    with serving() as url, LocalStack.from_repo(parameters=FAST).running() as local:
        stack = Stack(local)
        assert local.client("events").meta.endpoint_url == url

        stack.start({"id": "served:1", "at": in_seconds(2)})

        stack.wait_record("served:1", lambda a: a.status == Status.COMPLETED)
        ticks = stack.ticks_for("served:1", count=1, timeout=2)
        assert len(ticks) == 1
        assert_never_early(ticks)
