"""The bus sender of a batch task: events go to the bus as they come, at most 10 a call, from a
thread of their own; a refusal fails the task at its end, after the rest went out."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.unit.fakes.aws import FakePublisher
from tickwork.domain.announcements import Stopped
from tickwork.fire.bus_sender import BusSender


def _events(count: int) -> list[Stopped]:
    return [Stopped(f"a{n}", 1) for n in range(count)]


def test_events_put_at_once_go_out_in_calls_of_at_most_ten() -> None:
    publisher = FakePublisher()

    with BusSender(publisher, linger=0.05) as sender:
        for event in _events(25):
            sender.put(event)

    assert sum(publisher.chunks) == 25 and max(publisher.chunks) <= 10
    assert [d["id"] for _, d in publisher.events] == [f"a{n}" for n in range(25)]


def test_an_event_goes_out_without_waiting_for_the_ones_after_it() -> None:
    publisher = FakePublisher()
    sent = threading.Event()
    publish_all = publisher.publish_all

    def observed(events: list[Any]) -> None:
        publish_all(events)
        sent.set()

    publisher.publish_all = observed  # type: ignore[method-assign]
    sender = BusSender(publisher, linger=0.01)
    try:
        sender.put(Stopped("first", 1))
        # WHEN nothing else comes THEN it is sent all the same (before the sender closes)
        assert sent.wait(timeout=30)
        assert [d["id"] for _, d in publisher.events] == ["first"]
    finally:
        sender.close()


class _Refusing(FakePublisher):
    def __init__(self) -> None:
        super().__init__()
        self.refused = threading.Event()

    def publish_all(self, events: list[Any]) -> None:
        if any(e.to_wire()["id"] == "refused" for e in events):
            self.refused.set()
            raise RuntimeError("the bus refused an entry")
        super().publish_all(events)


def test_a_refusal_is_raised_at_close_after_the_rest_went_out() -> None:
    publisher = _Refusing()
    sender = BusSender(publisher, linger=0.0)
    sender.put(Stopped("refused", 1))
    assert publisher.refused.wait(timeout=30)
    for event in _events(3):
        sender.put(event)

    with pytest.raises(RuntimeError, match="refused"):
        sender.close()
    assert {d["id"] for _, d in publisher.events} >= {"a0", "a1", "a2"}
