"""GIVEN an hourly action on the emulated stack (virtual time, the real state machines) WHEN one
occurrence is skipped and another moved through the HTTP API THEN the listing shows them, the
skipped one is recorded SKIPPED at its time without running and announced with its note, the
moved one fires at its new time and the next one where the schedule has it; inside the lock
the imminent occurrence is refused with a 409 naming it, and bad requests are 400s naming the
field."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest

from tests.e2e.support import Stack, assert_never_early, now
from tests.functional.api_support import Api, action_path, serving
from tickwork.domain.action import Status
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome
from tickwork.domain.times import iso


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as api:
        yield api


def test_skip_and_move_one_occurrence_each_through_the_api(stack: Stack, api: Api) -> None:
    assert api.post("/actions", {"id": "hourly", "rate": "rate(1 hour)"}).status == 201
    first = stack.wait_record("hourly", lambda a: a.status is Status.PENDING).execution_time
    assert first is not None
    path = action_path("hourly", "occurrences")

    skipped = api.post(f"{path}/skip", {"occurrence": 2, "note": "maintenance"})
    assert skipped.status == 200, skipped.text
    assert skipped.json["outcome"] == "skipped"
    assert skipped.json["scheduledTime"] == iso(first + timedelta(hours=1))
    third = first + timedelta(hours=2)
    moved_to = third + timedelta(minutes=20)
    moved = api.post(f"{path}/move", {"at": iso(third), "to": iso(moved_to)})
    assert moved.status == 200, moved.text
    assert moved.json["outcome"] == "moved" and moved.json["firesAt"] == iso(moved_to)

    listed = api.get(f"{path}?count=4")
    assert listed.status == 200, listed.text
    rows = listed.json["occurrences"]
    assert [r["occurrence"] for r in rows] == [1, 2, 3, 4]
    assert [r.get("firesAt") for r in rows] == [
        iso(first), None, iso(moved_to), iso(first + timedelta(hours=3))
    ]  # fmt: skip
    assert rows[1]["skipped"] and rows[1]["note"] == "maintenance" and rows[2]["moved"]
    shown = api.get(action_path("hourly")).json["occurrenceChanges"]
    assert [(c["scheduledTime"], c["firesAt"], c["skipped"]) for c in shown] == [
        (iso(first + timedelta(hours=1)), None, True), (iso(third), iso(moved_to), False)
    ]  # fmt: skip

    stack.local.time.advance_to((first + timedelta(hours=3, minutes=30)).timestamp())
    record = stack.wait_record("hourly", lambda a: len(a.history) >= 4)
    assert [(h.occurrence, h.outcome) for h in record.history] == [
        (1, Outcome.FIRED), (2, Outcome.SKIPPED), (3, Outcome.FIRED), (4, Outcome.FIRED)
    ]  # fmt: skip
    # each keeps its own scheduled time; the moved one says where it fired, and why
    assert [h.scheduled_time for h in record.history] == [
        first, first + timedelta(hours=1), third, first + timedelta(hours=3)
    ]  # fmt: skip
    assert [h.moved_to for h in record.history] == [None, None, moved_to, None]
    assert record.history[2].reason and record.history[2].reason.startswith("moved by request")
    assert record.history[1].reason == "skipped by request: maintenance"
    ticks = [t for t in stack.ticks_for("hourly") if t["outcome"] == "FIRED"]
    assert [t["occurrence"] for t in ticks] == [1, 3, 4]
    assert_never_early(ticks)
    announced = [
        e["detail"]
        for e in stack.lifecycle.drain()
        if e["detail-type"] == DetailType.SKIPPED and e["detail"]["id"] == "hourly"
    ]
    assert [(e["occurrence"], e["reason"]) for e in announced] == [
        (2, "skipped by request: maintenance")
    ]


def test_the_imminent_occurrence_inside_its_lock_is_refused(
    make_stack: Callable[..., Stack],
) -> None:
    stack = make_stack(LockSeconds="120")
    with serving(stack) as api:
        _refused_inside_the_lock(stack, api)


def _refused_inside_the_lock(stack: Stack, api: Api) -> None:
    assert api.post("/actions", {"id": "soon", "rate": "rate(1 hour)"}).status == 201
    due = stack.wait_record("soon", lambda a: a.status is Status.PENDING).execution_time
    assert due is not None
    stack.local.time.advance_to((due - timedelta(seconds=30)).timestamp())
    path = action_path("soon", "occurrences")

    refused = api.post(f"{path}/skip", {"occurrence": 1})
    assert refused.status == 409 and refused.fields() == ["occurrence"], refused.text
    assert refused.json["error"] == "OccurrenceLocked"
    # the one after it is not locked
    assert api.post(f"{path}/skip", {"occurrence": 2}).status == 200


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("skip", {}, "occurrence"),
        ("skip", {"occurrence": 1, "at": "2030-01-01T00:00:00Z"}, "occurrence"),
        ("skip", {"at": "2030-01-01T00:00:07Z"}, "at"),
        ("move", {"occurrence": 2}, "to"),
        ("move", {"occurrence": 2, "to": "yesterday"}, "to"),
        ("skip", {"occurrence": 0}, "occurrence"),
        ("skip", {"occurrence": True}, "occurrence"),
        ("skip", {"occurrence": "2"}, "occurrence"),
        ("move", {"occurrence": 2, "to": "9999-12-31T23:59:59.9999Z"}, "to"),
    ],
)
def test_a_bad_request_is_a_400_naming_the_field(
    stack: Stack, api: Api, route: str, body: dict[str, object], field: str
) -> None:
    assert api.post("/actions", {"id": "bad", "rate": "rate(1 hour)"}).status == 201
    before = stack.wait_record("bad", lambda a: a.status is Status.PENDING)
    reply = api.post(action_path("bad", "occurrences", route), body)
    assert reply.status == 400, reply.text
    assert field in reply.fields()
    assert stack.record("bad").version == before.version


def test_a_one_off_is_refused_with_a_409(stack: Stack, api: Api) -> None:
    assert api.post("/actions", {"id": "once", "at": iso(now() + timedelta(hours=1))}).status == 201
    reply = api.post(action_path("once", "occurrences", "skip"), {"occurrence": 1})
    assert reply.status == 409 and reply.json["error"] == "NotRecurring", reply.text
