"""GIVEN the HTTP API served as API Gateway calls it WHEN an operator pauses, resumes, runs now,
retries, and lists, counts, pauses and cancels by group or id prefix THEN each answers with the
documented status and shape; a change inside the lock is 202 and says when it applies; bad
input is a 400 naming the field and the fix, and a state that refuses it a 409."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.support import Stack
from tests.functional.api_support import Api, action_path, serving
from tickwork.domain.action import Status


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as client:
        yield client


def create(api: Api, action_id: str, **fields: object) -> dict:
    reply = api.post("/actions", {"id": action_id, **(fields or {"rate": "rate(1 hour)"})})
    assert reply.status == 201, reply.text
    return reply.json


def test_pause_and_resume_show_in_the_record_lists_and_counts(api: Api, stack: Stack) -> None:
    create(api, "sub:1")

    paused = api.post(action_path("sub:1", "pause"), {"note": "card expired"})

    assert paused.status == 200, paused.text
    assert paused.json == {
        "id": "sub:1",
        "outcome": "paused",
        "status": "PAUSED",
        "note": "card expired",
    }
    shown = api.get(action_path("sub:1")).json
    assert shown["status"] == "PAUSED" and shown["pauseNote"] == "card expired"
    listed = api.get("/actions?status=PAUSED").json["items"]
    assert [a["id"] for a in listed] == ["sub:1"] and listed[0]["pauseNote"] == "card expired"
    stack.wait_counted()
    assert api.get("/stats").json["byStatus"]["PAUSED"] == 1

    resumed = api.post(action_path("sub:1", "resume"))

    assert resumed.status == 200 and resumed.json["outcome"] == "resumed"
    assert stack.record("sub:1").status == Status.PENDING


def test_run_now_is_202_with_the_fires_key(api: Api, stack: Stack) -> None:
    create(api, "sub:2")

    reply = api.post(action_path("sub:2", "run-now"), {"requestId": "ops-ticket-7"})
    again = api.post(action_path("sub:2", "run-now"), {"requestId": "ops-ticket-7"})

    assert reply.status == 202, reply.text
    assert reply.json["outcome"] == "triggered" and reply.json["trigger"] == "RUN_NOW"
    assert len(reply.json["idempotencyKey"]) == 36
    assert again.json["outcome"] == "unchanged" and again.json["manual"] == reply.json["manual"]


@pytest.mark.parametrize(
    ("path", "status"),
    [("pause", 409), ("resume", 409), ("run-now", 409), ("retry", 409)],
)
def test_steering_a_cancelled_action_is_409_naming_the_status(
    api: Api, path: str, status: int
) -> None:
    create(api, "gone")
    api.delete(action_path("gone"))

    reply = api.post(action_path("gone", path))

    assert reply.status == status, reply.text
    assert reply.fields() == ["status"]
    assert reply.json["problems"][0]["fix"]


def _claimed(stack: Stack, action_id: str) -> None:
    """The fire the record is at, claimed by its execution: under way."""
    action = stack.record(action_id)
    assert action.execution_arn is not None
    claimed = action.claimed(stack.local.clock.now(), action.execution_arn, 20)
    stack.records.save(claimed, action.version)


def test_a_cancel_inside_the_lock_of_a_recurrence_is_200_until_its_fire_is_claimed(
    api: Api,
) -> None:
    create(api, "minutely", rate="rate(1 minute)")  # inside the 2-minute lock from the start

    reply = api.delete(action_path("minutely"))

    assert reply.status == 200, reply.text
    assert reply.json["outcome"] == "cancelled"


def test_a_cancel_of_a_recurrence_under_way_is_202_and_says_when(api: Api, stack: Stack) -> None:
    create(api, "minutely", rate="rate(1 minute)")
    _claimed(stack, "minutely")

    reply = api.delete(action_path("minutely"))

    assert reply.status == 202, reply.text
    assert reply.json["outcome"] == "deferred" and reply.json["change"] == "CANCEL"
    assert reply.json["appliesAfter"]["occurrence"] == 1
    assert "next occurrence" in reply.json["message"] and "under way" in reply.json["message"]
    assert api.get(action_path("minutely")).json["deferred"] == "CANCEL"


def test_a_patch_inside_the_lock_of_a_recurrence_is_202(api: Api) -> None:
    create(api, "minutely", rate="rate(1 minute)", data={"v": 1})

    reply = api.patch(action_path("minutely"), {"data": {"v": 2}})

    assert reply.status == 202, reply.text
    assert reply.json["deferred"] == "UPDATE" and reply.json["data"] == {"v": 1}


def test_a_patch_inside_the_lock_too_large_to_keep_is_400_naming_the_limit(api: Api) -> None:
    """A change waiting for the imminent fire is kept on the record beside the data and the
    Start it came in: one that would take the record past DynamoDB's 400 KB is refused up
    front (it answered 502 before), and the record is left as it was."""
    big = "x" * (150 * 1024)
    create(api, "heavy", rate="rate(1 minute)", data={"v": big})
    before = api.get(action_path("heavy")).json

    reply = api.patch(action_path("heavy"), {"data": {"v": big + "y"}})

    assert reply.status == 400, reply.text
    [problem] = reply.json["problems"]
    assert problem["field"] == "data" and "400 KB" in problem["problem"]
    after = api.get(action_path("heavy")).json
    assert after.get("deferred") is None and after["updatedAt"] == before["updatedAt"]


def test_a_one_off_inside_its_lock_is_409_to_a_patch_and_200_to_a_pause(api: Api) -> None:
    create(api, "soon", delay="90s")
    reply = api.patch(action_path("soon"), {"data": {"v": 2}})
    assert reply.status == 409, reply.text
    assert "one-off" in reply.json["message"]
    reply = api.post(action_path("soon", "pause"))
    assert reply.status == 200 and reply.json["outcome"] == "paused", reply.text


def test_a_one_off_under_way_is_409_to_a_cancel_and_a_pause(api: Api, stack: Stack) -> None:
    create(api, "soon", delay="90s")
    _claimed(stack, "soon")
    for reply in (api.delete(action_path("soon")), api.post(action_path("soon", "pause"))):
        assert reply.status == 409, reply.text
        assert "under way" in reply.json["message"]
        assert reply.json["error"] == "FireUnderWay"
    assert stack.record("soon").status == Status.IN_PROGRESS


def test_groups_and_prefixes_list_count_pause_and_cancel_a_page_at_a_time(
    api: Api, stack: Stack
) -> None:
    for n in range(5):
        create(api, f"sub:42:{n}", rate="rate(1 hour)", group="subscription-42")
    create(api, "sub:43:0", rate="rate(1 hour)", group="subscription-43")

    first = api.get("/actions?group=subscription-42&limit=3").json
    rest = api.get(f"/actions?group=subscription-42&limit=3&cursor={first['nextCursor']}").json
    assert [a["id"] for a in first["items"] + rest["items"]] == [f"sub:42:{n}" for n in range(5)]
    assert rest["nextCursor"] is None
    prefixed = api.get("/actions?prefix=sub:4").json["items"]
    assert len(prefixed) == 6 and all(a["id"].startswith("sub:4") for a in prefixed)
    stack.wait_counted()
    counts = api.get("/stats?group=subscription-42").json["byStatus"]
    assert counts["PENDING"] == 5 and counts["PAUSED"] == 0

    page = api.post("/bulk/pause", {"group": "subscription-42", "limit": 3, "note": "dunning"})
    assert page.status == 200, page.text
    assert page.json["matched"] == 3 and page.json["nextCursor"]
    done = api.post(
        "/bulk/pause", {"group": "subscription-42", "cursor": page.json["nextCursor"]}
    ).json
    assert done["nextCursor"] is None
    assert {r["outcome"] for r in page.json["results"] + done["results"]} == {"paused"}
    stack.wait_counted()
    assert api.get("/stats?group=subscription-42").json["byStatus"]["PAUSED"] == 5
    assert api.get("/stats?group=subscription-43").json["byStatus"]["PAUSED"] == 0

    cancelled = api.post("/bulk/cancel", {"prefix": "sub:42:"}).json
    assert [r["outcome"] for r in cancelled["results"]] == ["cancelled"] * 5


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("get", "/actions?group=bad%20name", None, "group"),
        ("get", "/actions?prefix=a%2Fb", None, "prefix"),
        ("post", "/bulk/pause", {}, "group"),
        ("post", "/bulk/cancel", {"group": "a b"}, "group"),
        ("post", "/actions", {"id": "x", "rate": "rate(1 hour)", "group": "a/b"}, "group"),
        ("post", "/actions", {"id": "x", "rate": "rate(1 hour)", "onFailure": "NO"}, "onFailure"),
    ],
)
def test_bad_steering_input_is_400_naming_the_field(
    api: Api, method: str, path: str, body: dict | None, field: str
) -> None:
    reply = api.get(path) if method == "get" else api.post(path, body)
    assert reply.status == 400, reply.text
    assert field in reply.fields()


def test_preview_takes_a_start_details_when_fields_as_they_are(api: Api) -> None:
    reply = api.post(
        "/preview",
        {"cron": "30 9 * * *", "timezone": "Asia/Kuala_Lumpur", "count": 1,
         "after": "2026-01-01T01:30:00Z"},
    )  # fmt: skip

    assert reply.status == 200, reply.text
    # strictly after: 09:30 KL on Jan 1 is the "after" itself
    assert reply.json["times"][0]["utc"] == "2026-01-02T01:30:00Z"


def test_an_unknown_field_is_never_told_to_rename_itself(api: Api) -> None:
    reply = api.post("/preview", {"expression": "DAILY", "crons": "30 9 * * *"})

    assert reply.status == 400
    (problem,) = reply.json["problems"]
    assert problem["field"] == "crons" and "rename it to 'crons'" not in problem["fix"]
