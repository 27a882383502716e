"""GIVEN a fleet of actions on one hourly cron with a flexible window, on the emulated stack
(virtual time, the real state machines) WHEN three hours pass THEN each occurrence fires once,
at the instant its id fixes in its window — the one the occurrence listing and the preview
showed before — in order, never before it; and the fleet does not fire together at :00. Half
the fleet asks for its window AROUND the hour: some of its fires come before :00, by request,
each still at its own instant and never before it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from tests.e2e.support import Stack, advance_to, assert_never_early, now
from tests.functional.api_support import Api, action_path, serving
from tickwork.domain.action import Status
from tickwork.domain.fire import Outcome
from tickwork.domain.times import iso, parse_iso

FLEET = [f"tenant:{n}" for n in range(4)]
AROUND = FLEET[2:]  # centred on the hour: up to 10 minutes before it


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as api:
        yield api


def _instants(api: Api, action_id: str) -> list[datetime]:
    listed = api.get(f"{action_path(action_id, 'occurrences')}?count=3")
    assert listed.status == 200, listed.text
    return [parse_iso(row["firesAt"]) for row in listed.json["occurrences"]]


def test_a_fleet_on_one_cron_fires_spread_over_its_windows(stack: Stack, api: Api) -> None:
    # a quarter past an hour: no window around the next hour has opened yet
    advance_to(now().replace(minute=15, second=0, microsecond=0) + timedelta(hours=1))
    for action_id in FLEET:
        body = {"id": action_id, "cron": "0 * * * *", "flexibleWindow": "20m"}
        if action_id in AROUND:
            body["windowMode"] = "AROUND"
        assert api.post("/actions", body).status == 201
    planned = {}
    for action_id in FLEET:
        stack.wait_record(action_id, lambda a: a.status is Status.PENDING)
        planned[action_id] = _instants(api, action_id)
    preview = api.post(
        "/preview",
        {"cron": "0 * * * *", "flexibleWindow": "20m", "id": FLEET[0], "count": 3,
         "after": iso(planned[FLEET[0]][0] - timedelta(minutes=20))},
    )  # fmt: skip
    assert preview.status == 200, preview.text
    assert [parse_iso(t["utc"]) for t in preview.json["times"]] == planned[FLEET[0]]
    hours = [i.replace(minute=0, second=0, microsecond=0) for i in planned[FLEET[0]]]
    for action_id in FLEET:
        lead = timedelta(minutes=10 if action_id in AROUND else 0)
        for hour, instant in zip(hours, planned[action_id], strict=True):
            assert hour - lead <= instant < hour - lead + timedelta(minutes=20)
    assert any(i < h for a in AROUND for h, i in zip(hours, planned[a], strict=True))
    assert len({i[0] for i in planned.values()}) == len(planned), "the fleet does not fire at once"

    stack.local.time.advance_to((hours[-1] + timedelta(minutes=45)).timestamp())
    for action_id in FLEET:
        record = stack.wait_record(action_id, lambda a: len(a.history) >= 3)
        assert [(h.occurrence, h.outcome) for h in record.history[:3]] == [
            (1, Outcome.FIRED), (2, Outcome.FIRED), (3, Outcome.FIRED)
        ]  # fmt: skip
        assert [h.scheduled_time for h in record.history[:3]] == planned[action_id]
        ticks = stack.ticks_for(action_id)
        assert [t["occurrence"] for t in ticks][:3] == [1, 2, 3]
        assert_never_early(ticks)
