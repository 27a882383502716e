"""GIVEN an action type limited to 2 fires at once WHEN 8 of its actions fall due in the same
second THEN the receiver never sees more than 2 at a time, every one fires exactly once, none
early, and every slot is given back."""

from __future__ import annotations

from collections import Counter

from tests.e2e.support import Stack, assert_never_early, in_seconds
from tickwork.domain.action import Status
from tickwork_local.receiver import Receiver


def test_a_burst_never_exceeds_the_limit_and_none_is_lost(make_stack) -> None:
    stack: Stack = make_stack(
        ConcurrencyLimits="HTTP_REQUEST=2", SlotWaitSeconds="1", SlotMaxWaitSeconds="1"
    )
    receiver = Receiver(hold_seconds=1.0)
    try:
        # GIVEN 8 webhook actions due at the same instant
        due = in_seconds(3)
        ids = [f"burst:{n}" for n in range(8)]
        for action_id in ids:
            stack.start(
                {
                    "id": action_id,
                    "at": due,
                    "action": "HTTP_REQUEST",
                    "data": {"url": receiver.url, "method": "POST", "body": {"id": action_id}},
                }
            )

        # WHEN they fire
        for action_id in ids:
            stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=60)
        stack.local.wait_idle(timeout=15)

        # THEN at most 2 requests were ever in flight (and the limit was reached)
        assert receiver.max_in_flight == 2
        # AND each action reached the receiver once and ticked once, none early
        bodies = Counter(r["body"] for r in receiver.requests)
        assert len(bodies) == 8 and set(bodies.values()) == {1}
        ticks = [t for t in stack.ticks.wait_for(lambda evs: len(evs) >= 8, 5)]
        assert sorted(t["detail"]["id"] for t in ticks) == ids
        assert_never_early([t["detail"] for t in ticks])
        # AND each took one fulfillment attempt: its waits for a slot are counted apart
        assert {t["detail"]["attempts"] for t in ticks} == {1}
        assert sum(t["detail"].get("slotWaits", 0) for t in ticks) >= 6
        # AND every slot was given back (the fires' wait counts stay until their TTL)
        slots = stack.local.client("dynamodb").scan(TableName=stack.local.outputs["SlotsTableName"])
        assert [i for i in slots["Items"] if not i["slot"]["S"].startswith("waits#")] == []
    finally:
        receiver.close()
