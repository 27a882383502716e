"""GIVEN at-least-once delivery WHEN a Start or a Tick arrives twice THEN nothing extra happens."""

from __future__ import annotations

from tests.e2e.support import Stack, assert_never_early, in_seconds, wait_until
from tickwork.domain.action import Status


def test_same_start_delivered_twice_makes_one_chain_one_fire(stack: Stack, event) -> None:
    # GIVEN a Start event, published, and the very same envelope delivered again to the function
    detail = {"id": "dup:start", "at": in_seconds(2)}
    stack.start(detail)
    stack.start(detail)  # the same detail again under a new event id
    stack.wait_record("dup:start", lambda a: a.status == Status.PENDING)
    envelope = event("start/duration-5m")
    envelope["detail"] = detail
    first = stack.local.runtime.invoke(_name(stack, "StartFunction"), envelope)[0]
    again = stack.local.runtime.invoke(_name(stack, "StartFunction"), envelope)[0]

    # WHEN it comes due
    stack.wait_record("dup:start", lambda a: a.status == Status.COMPLETED)
    stack.local.wait_idle()

    # THEN one generation, one execution, one fire
    assert first["outcome"] == again["outcome"] == "unchanged"
    assert stack.record("dup:start").generation == 1
    assert len(stack.executions()) == 1
    ticks = stack.ticks_for("dup:start", count=1, timeout=2)
    assert len(ticks) == 1
    assert_never_early(ticks)


def test_same_tick_delivered_twice_adds_no_fire(stack: Stack) -> None:
    # GIVEN a recurring action, 2 fires 2 seconds apart
    stack.start({"id": "dup:tick", "rate": "rate(2 seconds)", "executionRemainder": 2})
    wait_until(
        lambda: any(e["detail"]["id"] == "dup:tick" for e in stack.ticks.drain()),
        10,
        "dup:tick's first tick",
    )
    tick_event = next(e for e in stack.ticks.events if e["detail"]["id"] == "dup:tick")
    stack.wait_record("dup:tick", lambda a: a.occurrence == 2)

    # WHEN the first tick is delivered to the tick function again (twice)
    tick = _name(stack, "TickFunction")
    repeats = [stack.local.runtime.invoke(tick, tick_event)[0] for _ in range(2)]

    # THEN the repeats are ignored and the chain still ends after exactly 2 fires
    assert [r["outcome"] for r in repeats] == ["ignored", "ignored"]
    action = stack.wait_record("dup:tick", lambda a: a.status == Status.COMPLETED, timeout=10)
    stack.local.wait_idle()
    ticks = stack.ticks_for("dup:tick", count=2, timeout=2)
    assert [t["occurrence"] for t in ticks] == [1, 2]
    assert len(stack.executions()) == 2
    assert [h.occurrence for h in action.history] == [1, 2]
    assert_never_early(ticks)


def _name(stack: Stack, logical_id: str) -> str:
    return next(f.name for f in stack.local.functions if f.logical_id == logical_id)
