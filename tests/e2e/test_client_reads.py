"""GIVEN the local stack with its API served WHEN a service reads back what it needs through the
publisher client's typed calls THEN it lists (by status, group, prefix, attention, paged),
counts, updates, retries and reads the rejections without touching the client's private
parts — and a Start the stack refused makes wait() raise at once with the stack's reasons."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from tests.e2e.support import Stack, in_seconds, now
from tickwork.domain.action import Status
from tickwork_client import BearerSigner, StackApi, StartRefused, TickworkClient
from tickwork_local.receiver import Receiver


def _client(stack: Stack, url: str) -> TickworkClient:
    return TickworkClient(
        stack.local.client("events"),
        stack.local.outputs["EventBusName"],
        source="team.billing",
        api=StackApi(url, BearerSigner(str(stack.local.api_token))),
        clock=now,
    )


@pytest.mark.real_time  # the client waits on wall-clock seconds
def test_a_service_lists_counts_updates_and_retries_through_typed_calls(
    stack: Stack, receiver: Receiver
) -> None:
    with stack.local.serving_api() as url:
        client = _client(stack, url)
        # GIVEN five actions of a group, one of another, and one whose fire fails for good
        for n in range(5):
            client.schedule(f"bill:{n}", when=timedelta(hours=1 + n), group="billing")
        client.schedule("ops:1", when=timedelta(hours=2), group="ops")
        receiver.failures = 10
        client.publish_start(
            {
                "id": "bill:hook",
                "at": in_seconds(2),
                "group": "billing",
                "action": "HTTP_REQUEST",
                "data": {"url": receiver.url, "method": "POST", "body": {}},
                "maximumRetryAttempts": 0,
            }
        )
        client.wait("bill:hook", "FAILED", timeout=60)
        for n in range(5):
            client.wait(f"bill:{n}", "PENDING")

        # THEN a page at a time, by group, in id order; and every page walked
        first = client.list_actions(group="billing", limit=2)
        assert [a["id"] for a in first["items"]] == ["bill:0", "bill:1"] and first["nextCursor"]
        walked = [a["id"] for a in client.actions(group="billing", page=2)]
        assert walked == ["bill:0", "bill:1", "bill:2", "bill:3", "bill:4", "bill:hook"]
        # by status in fire order, by prefix, and those needing attention
        pending = [a["id"] for a in client.list_actions(status="PENDING")["items"]]
        assert pending[0] == "bill:0" and set(pending) == {*walked[:5], "ops:1"}
        assert [a["id"] for a in client.list_actions(prefix="ops:")["items"]] == ["ops:1"]
        assert [a["id"] for a in client.list_actions(attention=True)["items"]] == ["bill:hook"]

        # AND counts as GET /stats gives them: each action once, attention apart
        stack.wait_counted()
        counted = client.count(group="billing")
        assert counted["byStatus"]["PENDING"] == 5 and counted["byStatus"]["FAILED"] == 1
        assert counted["needsAttention"] == 1 and sum(counted["byStatus"].values()) == 6
        assert counted["lastHour"]["failed"] == 1

        # AND a partial update keeps what it does not name
        updated = client.update("bill:2", metadata={"tenant": "acme"})
        assert updated["metadata"] == {"tenant": "acme"} and updated["group"] == "billing"

        # AND a retry by hand runs the failed fire again, which now succeeds
        receiver.failures = 0
        answer = client.retry("bill:hook")
        assert answer["outcome"] and answer["occurrence"] == 1
        done = client.wait("bill:hook", "COMPLETED", timeout=60)
        assert [h["outcome"] for h in done["history"]] == ["FAILED", "FIRED"]


@pytest.mark.real_time  # the client waits on wall-clock seconds
def test_wait_on_a_refused_start_raises_at_once_with_the_stacks_reasons(stack: Stack) -> None:
    with stack.local.serving_api() as url:
        client = _client(stack, url)
        # WHEN a Start goes out that only the stack can refuse (a calendar it does not hold)
        sent = client.publish_start(
            {"id": "bill:cal", "cron": "0 9 * * *", "calendar": "no-such-holidays"}
        )

        # THEN wait() raises as soon as the refusal is kept, not after its timeout
        began = time.monotonic()
        with pytest.raises(StartRefused) as refused:
            client.wait("bill:cal", Status.PENDING, timeout=120)
        assert time.monotonic() - began < 60
        assert refused.value.event_id == sent.event_id
        assert refused.value.rejection["problems"], refused.value.rejection
        assert "bill:cal" in str(refused.value) and "Fix:" in str(refused.value)
        # and the same refusal is in rejections(), this sender's
        kept = client.rejections(source="team.billing")
        assert any(r.get("eventId") == sent.event_id for r in kept)
