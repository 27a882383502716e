"""GIVEN the stack's ApiFunction served on a loopback port as API Gateway (HTTP API) calls it
WHEN a client calls each route THEN it answers JSON with the documented status, and bad input
is a 400 naming the field and the fix — never a 500."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.e2e.support import Stack, in_seconds
from tests.functional.api_support import Api, action_path, ago, serving, with_history
from tickwork.api import routes
from tickwork.config import Settings
from tickwork.domain.action import Status
from tickwork.domain.batch import window_of
from tickwork.domain.times import parse_iso

DASHBOARD = Path(__file__).parents[2] / "src/tickwork/api/dashboard/index.html"


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as client:
        yield client


def _forged(fields: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode()


def fire_time(reply_json: dict) -> datetime:
    return parse_iso(reply_json["executionTime"])


def create(api: Api, action_id: str, **when: object) -> dict:
    reply = api.post("/actions", {"id": action_id, **(when or {"delay": "10m"})})
    assert reply.status == 201, reply.text
    return reply.json


# --- create -----------------------------------------------------------------------------------
def test_create_answers_201_with_the_action(api: Api, stack: Stack) -> None:
    before = datetime.now(UTC)

    reply = api.post("/actions", {"id": "invoice:42", "delay": "10m", "data": {"n": 1}})

    assert reply.status == 201, reply.text
    body = reply.json
    assert (body["id"], body["status"], body["data"]) == ("invoice:42", "PENDING", {"n": 1})
    assert timedelta(minutes=10) <= fire_time(body) - before <= timedelta(minutes=10, seconds=5)
    assert stack.record("invoice:42").status == Status.PENDING


def test_a_parked_action_shows_when_its_execution_starts(api: Api, stack: Stack) -> None:
    # LaunchAheadSeconds is 15 minutes here: a fire an hour away waits in the table
    near, far = create(api, "near:1", delay="10m"), create(api, "far:1", delay="1h")

    shown = {a["id"]: api.get(action_path(a["id"])).json for a in (near, far)}

    assert shown["near:1"]["launchAt"] is None and shown["near:1"]["executionArn"]
    assert shown["far:1"]["executionArn"] is None
    # from the start of its batch window: the fires of one window come due for launch together
    launch_from = window_of(fire_time(far), Settings.batch_window)
    assert launch_from - parse_iso(shown["far:1"]["launchAt"]) == timedelta(minutes=15)


def test_create_with_a_taken_id_is_409_and_keeps_the_action(api: Api, stack: Stack) -> None:
    first = create(api, "invoice:42", delay="10m")

    reply = api.post("/actions", {"id": "invoice:42", "delay": "1h"})

    assert reply.status == 409
    assert reply.fields() == ["id"] and "PATCH" in reply.json["problems"][0]["fix"]
    assert stack.record("invoice:42").execution_time == fire_time(first)


@pytest.mark.parametrize(
    ("body", "field", "fix_mentions"),
    [
        ({"id": "x", "delay": "10m", "executionTme": 1}, "executionTme", "executionTime"),
        ({"id": "x", "cron": "every tuesday"}, "cron", ""),
        ({"id": "x"}, "when", "duration"),
        ({"delay": "10m"}, "id", "id"),
        ({"id": "x", "delay": "10m", "timezone": "Mars/Olympus"}, "timezone", ""),
        ({"id": "x", "delay": "10m", "executionRemainder": "five"}, "executionRemainder", ""),
        ({"id": "bad id!", "delay": "10m"}, "id", ""),
        ({"id": "x", "delay": "10m", "action": "TELEPORT"}, "action", "TICK"),
        ({"id": "acc:x\n", "delay": "10m"}, "id", ""),
        ({"id": "x", "delay": "10m", "group": "grp\n"}, "group", ""),
        ({"id": "x", "rate": "rate(99999999999 days)"}, "rate", "rate(3653 days)"),
        ({"id": "x", "delay": "99999999999d"}, "delay", "100 years"),
        ({"id": "x", "executionTime": 10**30}, "executionTime", ""),
        (
            {"id": "x", "rate": "rate(1 hour)", "catchUp": "ALL", "catchUpWindow": "9" * 40 + "d"},
            "catchUpWindow",
            "",
        ),
    ],
    ids=[
        "unknown-field",
        "bad-cron",
        "no-when",
        "no-id",
        "bad-zone",
        "wrong-type",
        "bad-id",
        "unknown-type",
        "id-newline",
        "group-newline",
        "huge-rate",
        "huge-delay",
        "huge-epoch-ms",
        "huge-window",
    ],
)
def test_invalid_create_is_400_naming_the_field_and_writes_nothing(
    api: Api, stack: Stack, body: dict, field: str, fix_mentions: str
) -> None:
    reply = api.post("/actions", body)

    assert reply.status == 400, reply.text
    problem = next(p for p in reply.json["problems"] if p["field"] == field)
    assert problem["fix"] and fix_mentions in problem["fix"]
    assert stack.records.get(str(body.get("id"))) is None


def test_a_body_that_is_not_json_is_400(api: Api) -> None:
    reply = api.post("/actions", raw='{"id": "x", ')

    assert reply.status == 400
    assert reply.fields() == ["body"]


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"id": "a", "delay": "10m", "id": "b"}', "id"),
        ('{"id": "a", "delay": "10m", "data": {"n": 1, "n": 2}}', "n"),
        ('{"id": "a", "delay": "10m", "data": {"n": ' + "9" * 5000 + "}}", "body"),
    ],
    ids=["id-twice", "nested-twice", "number-past-reading"],
)
def test_a_key_given_twice_is_400_naming_it_and_writes_nothing(
    api: Api, stack: Stack, raw: str, field: str
) -> None:
    reply = api.post("/actions", raw=raw)

    assert reply.status == 400, reply.text
    assert reply.fields() == [field] and reply.json["problems"][0]["fix"]
    assert stack.records.get("a") is None and stack.records.get("b") is None


# --- list -------------------------------------------------------------------------------------
@pytest.fixture
def five(api: Api) -> list[str]:
    ids = [f"list:{n}" for n in range(5)]
    for n, action_id in enumerate(ids):
        create(api, action_id, delay=f"{15 - n}m")  # list:4 fires first
    return ids


def test_list_by_status_pages_in_fire_order_with_the_cursor(api: Api, five: list[str]) -> None:
    pages, path = [], "/actions?status=PENDING&limit=2"
    while True:
        body = api.get(path).json
        pages.append([item["id"] for item in body["items"]])
        if body["nextCursor"] is None:
            break
        path = f"/actions?status=PENDING&limit=2&cursor={body['nextCursor']}"

    assert [len(page) for page in pages] == [2, 2, 1]
    assert [action_id for page in pages for action_id in page] == list(reversed(five))


def test_list_without_status_pages_over_everything_once(api: Api, five: list[str]) -> None:
    seen, cursor, calls = [], None, 0
    while True:
        query = f"&cursor={cursor}" if cursor else ""
        body = api.get(f"/actions?limit=2{query}").json
        seen += [item["id"] for item in body["items"]]
        cursor, calls = body["nextCursor"], calls + 1
        if cursor is None:
            break

    assert calls >= 3
    assert sorted(seen) == sorted(five)


def test_list_by_status_shows_only_that_status(api: Api, five: list[str]) -> None:
    assert api.delete(action_path(five[0])).status == 200

    body = api.get("/actions?status=CANCELLED").json

    assert [item["id"] for item in body["items"]] == [five[0]]
    assert body["items"][0]["status"] == "CANCELLED" and body["nextCursor"] is None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("status=PENDING&cursor=bm90LWEtY3Vyc29y", "cursor"),
        ("cursor=eyJ4IjogMX0=", "cursor"),
        (f"status=PENDING&cursor={_forged({'t': 10**44, 'id': 'list:1'})}", "cursor"),
        (f"cursor={_forged({'id': 'list:1' + chr(10)})}", "cursor"),
        (f"status=PENDING&cursor={_forged({'id': 'list:1'})}", "cursor"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("status=SLEEPING", "status"),
    ],
    ids=[
        "forged-cursor",
        "forged-cursor-all",
        "cursor-huge-time",
        "cursor-id-newline",
        "cursor-of-another-order",
        "limit-0",
        "limit-201",
        "limit-text",
        "status",
    ],
)
def test_bad_list_parameters_are_400_naming_them(api: Api, five: list[str], query, field) -> None:
    reply = api.get(f"/actions?{query}")

    assert reply.status == 400, reply.text
    assert reply.fields() == [field] and reply.json["problems"][0]["fix"]


# --- get --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("action_id", "path"),
    [
        ("invoice:42", "/actions/invoice%3A42"),
        ("team.a@b+c=d", "/actions/team.a%40b%2Bc%3Dd"),
        ("v1.2_x-y:z", "/actions/v1.2_x-y:z"),
    ],
    ids=["colon", "slash-at-plus-equals", "unencoded-colon"],
)
def test_get_finds_ids_with_reserved_characters(api: Api, action_id: str, path: str) -> None:
    create(api, action_id)

    reply = api.get(path)

    assert reply.status == 200, reply.text
    assert reply.json["id"] == action_id
    assert reply.json["history"] == [] and reply.json["transitions"][0]["to"] == "PENDING"


def test_get_of_a_missing_id_is_404(api: Api) -> None:
    reply = api.get(action_path("invoice:404"))

    assert reply.status == 404
    assert reply.fields() == ["id"] and "invoice:404" in reply.json["message"]


# --- update -----------------------------------------------------------------------------------
def test_patch_before_the_lock_moves_the_fire(api: Api, stack: Stack) -> None:
    created = create(api, "invoice:42", delay="10m", data={"n": 1})

    reply = api.patch(action_path("invoice:42"), {"delay": "30m"})

    assert reply.status == 200, reply.text
    moved = fire_time(reply.json) - fire_time(created)
    assert timedelta(minutes=19) < moved < timedelta(minutes=21)
    assert reply.json["data"] == {"n": 1}  # untouched fields are kept
    stored = stack.record("invoice:42").request
    assert stored is not None and stored["delay"] == "30m" and "executionTime" not in stored


def test_patch_of_data_only_keeps_the_fire_time(api: Api) -> None:
    created = create(api, "invoice:42", delay="10m", data={"n": 1})

    reply = api.patch(action_path("invoice:42"), {"data": {"n": 2}})

    assert reply.status == 200, reply.text
    assert reply.json["data"] == {"n": 2}
    assert fire_time(reply.json) == fire_time(created)
    assert reply.json["generation"] == created["generation"] + 1


def test_patch_inside_the_lock_is_409_and_changes_nothing(api: Api, stack: Stack) -> None:
    created = create(api, "soon:1", at=in_seconds(30))

    reply = api.patch(action_path("soon:1"), {"delay": "1h"})

    assert reply.status == 409, reply.text
    assert reply.json["error"] == "ActionLocked" and reply.json["problems"][0]["fix"]
    assert stack.record("soon:1").execution_time == fire_time(created)


def test_patch_of_a_missing_id_is_404(api: Api) -> None:
    assert api.patch(action_path("nope:1"), {"delay": "1h"}).status == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [({"id": "other:1"}, "id"), ({"cron": "61 * * * *"}, "cron"), ({"bogus": 1}, "bogus")],
    ids=["change-id", "bad-cron", "unknown-field"],
)
def test_invalid_patch_is_400_and_keeps_the_action(api: Api, stack: Stack, body, field) -> None:
    created = create(api, "invoice:42")

    reply = api.patch(action_path("invoice:42"), body)

    assert reply.status == 400, reply.text
    assert field in reply.fields()
    assert stack.record("invoice:42").version == created["version"]


# --- cancel, purge, retry ---------------------------------------------------------------------
def test_delete_cancels(api: Api, stack: Stack) -> None:
    create(api, "invoice:42")

    reply = api.delete(action_path("invoice:42"))

    assert reply.status == 200, reply.text
    assert reply.json == {"id": "invoice:42", "outcome": "cancelled", "status": "CANCELLED"}
    assert stack.record("invoice:42").status == Status.CANCELLED


def test_delete_inside_the_lock_cancels_its_fire_not_yet_claimed(api: Api, stack: Stack) -> None:
    create(api, "soon:1", at=in_seconds(30))

    reply = api.delete(action_path("soon:1"))

    assert reply.status == 200
    assert stack.record("soon:1").status == Status.CANCELLED


def test_purge_of_a_finished_action_deletes_it(api: Api, stack: Stack) -> None:
    create(api, "invoice:42")
    api.delete(action_path("invoice:42"))

    reply = api.delete(action_path("invoice:42") + "?purge=true")

    assert reply.status == 204 and reply.text == ""
    assert stack.records.get("invoice:42") is None
    assert api.get(action_path("invoice:42")).status == 404


def test_purge_of_an_active_action_is_409_with_the_fix(api: Api, stack: Stack) -> None:
    create(api, "invoice:42")

    reply = api.delete(action_path("invoice:42") + "?purge=true")

    assert reply.status == 409
    assert reply.fields() == ["purge"] and "cancel it first" in reply.json["problems"][0]["fix"]
    assert stack.record("invoice:42").status == Status.PENDING


def test_delete_of_a_missing_id_is_404(api: Api) -> None:
    assert api.delete(action_path("nope:1")).status == 404


def test_retry_of_an_action_that_did_not_fail_is_409(api: Api, stack: Stack) -> None:
    create(api, "invoice:42")

    reply = api.post(action_path("invoice:42", "retry"))

    assert reply.status == 409
    assert reply.fields() == ["status"]
    assert stack.record("invoice:42").status == Status.PENDING


def test_retry_of_a_failed_action_runs_it_again(api: Api, stack: Stack) -> None:
    create(api, "invoice:42")
    with_history(stack, "invoice:42", [("FAILED", ago(minutes=5), 1)], Status.FAILED)

    reply = api.post(action_path("invoice:42", "retry"))

    assert reply.status == 200, reply.text
    assert (reply.json["outcome"], reply.json["status"]) == ("retried", "PENDING")
    assert stack.record("invoice:42").status == Status.PENDING


def test_retry_of_a_missing_id_is_404(api: Api) -> None:
    assert api.post(action_path("nope:1", "retry")).status == 404


# --- stats ------------------------------------------------------------------------------------
@pytest.fixture
def fired(api: Api, stack: Stack) -> None:
    """Two actions with fires: on time 10 min ago, 5 s late 20 min ago, failed 30 min ago,
    on time 3 h ago (day only) and 2 days ago (neither window)."""
    create(api, "hist:1")
    create(api, "hist:2")
    with_history(
        stack,
        "hist:1",
        [("FIRED", ago(days=2), 0), ("FIRED", ago(hours=3), 0.2), ("FIRED", ago(minutes=20), 5)],
        Status.PENDING,
    )
    with_history(
        stack,
        "hist:2",
        [("FIRED", ago(minutes=10), 0.5), ("FAILED", ago(minutes=30), 2)],
        Status.FAILED,
    )


def test_stats_count_statuses_and_fires_in_the_last_hour_and_day(api: Api, fired) -> None:
    reply = api.get("/stats")

    assert reply.status == 200, reply.text
    body = reply.json
    assert body["byStatus"]["PENDING"] == 1 and body["byStatus"]["FAILED"] == 1
    assert set(body["byStatus"]) == {s.value for s in Status}
    assert body["lastHour"] == {"fired": 2, "late": 1, "failed": 1}
    assert body["lastDay"] == {"fired": 3, "late": 1, "failed": 1}


def test_fires_are_bucketed_on_time_late_failed(api: Api, fired) -> None:
    reply = api.get("/stats/fires?minutes=60&bucket=10")

    assert reply.status == 200, reply.text
    buckets = reply.json["buckets"]
    assert len(buckets) == 6
    starts = [parse_iso(b["start"]) for b in buckets]
    assert starts == sorted(starts) and starts[-1] <= datetime.now(UTC) < starts[-1] + timedelta(
        minutes=10
    )
    totals = {k: sum(b[k] for b in buckets) for k in ("onTime", "late", "failed")}
    assert totals == {"onTime": 1, "late": 1, "failed": 1}
    late_at = ago(minutes=20) + timedelta(seconds=5)
    holding = next(
        b for b, s in zip(buckets, starts, strict=True) if s <= late_at < s + timedelta(minutes=10)
    )
    assert holding["late"] == 1


@pytest.mark.parametrize(
    ("query", "field"),
    [("minutes=5&bucket=10", "bucket"), ("minutes=0", "minutes"), ("bucket=x", "bucket")],
)
def test_bad_fire_buckets_are_400(api: Api, query: str, field: str) -> None:
    reply = api.get(f"/stats/fires?{query}")

    assert reply.status == 400, reply.text
    assert reply.fields() == [field]


# --- preview ----------------------------------------------------------------------------------
def test_preview_lists_the_next_fires_in_utc_and_local_time(api: Api) -> None:
    reply = api.post(
        "/preview",
        {
            "expression": "30 9 * * *",
            "timezone": "Asia/Kuala_Lumpur",
            "count": 2,
            "after": "2026-01-01T00:00:00Z",
        },
    )

    assert reply.status == 200, reply.text
    assert reply.json["times"] == [
        {
            "n": 1,
            "utc": "2026-01-01T01:30:00Z",
            "local": "2026-01-01T09:30:00+08:00",
            "zone": "Asia/Kuala_Lumpur",
        },
        {
            "n": 2,
            "utc": "2026-01-02T01:30:00Z",
            "local": "2026-01-02T09:30:00+08:00",
            "zone": "Asia/Kuala_Lumpur",
        },
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"expression": "30 1 * * *", "dstRepeated": "BOTH"},
        {"cron": "30 1 * * *", "dstRepeated": "BOTH"},
    ],
    ids=["expression", "start-fields"],
)
def test_preview_shows_a_dst_policy_and_the_fires_around_the_next_change(
    api: Api, body: dict
) -> None:
    reply = api.post(
        "/preview",
        {**body, "timezone": "America/New_York", "count": 3, "after": "2027-11-05T12:00:00Z"},
    )

    assert reply.status == 200, reply.text
    assert [t["local"] for t in reply.json["times"]] == [
        "2027-11-06T01:30:00-04:00", "2027-11-07T01:30:00-04:00", "2027-11-07T01:30:00-05:00"
    ]  # fmt: skip
    around = reply.json["aroundDstChange"]
    assert around["change"] == "2027-11-07T06:00:00Z"
    assert around["after"][0]["local"] == "2027-11-07T01:30:00-05:00"
    # a rate counts elapsed time: nothing around a change to show, and no policy to take
    refused = api.post("/preview", {"rate": "rate(1 hour)", "dstMissing": "SHIFT"})
    assert refused.status == 400 and refused.fields() == ["dstMissing"], refused.text


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"expression": "whenever"}, "expression"),
        ({"expression": "DAILY", "count": 0}, "count"),
        ({"expression": "DAILY", "after": "2026-01-01T00:00:00"}, "after"),
        ({"expression": "30 9 * * *", "timezone": "Nowhere/City"}, "timezone"),
        ({"expression": "DAILY", "first": "soon"}, "first"),
        ({"expression": "rate(99999999999 days)"}, "rate"),
    ],
    ids=["expression", "count", "after-without-zone", "timezone", "first", "huge-rate"],
)
def test_bad_preview_is_400_naming_the_field(api: Api, body: dict, field: str) -> None:
    reply = api.post("/preview", body)

    assert reply.status == 400, reply.text
    assert field in reply.fields()


# --- documents --------------------------------------------------------------------------------
def test_openapi_document_has_every_route(api: Api) -> None:
    reply = api.get("/openapi.json")

    assert reply.status == 200 and reply.content_type.startswith("application/json")
    paths = {path: set(ops) for path, ops in reply.json["paths"].items()}
    assert paths == {
        "/actions": {"get", "post"},
        "/actions/{id}": {"get", "patch", "delete"},
        "/actions/{id}/retry": {"post"},
        "/actions/{id}/pause": {"post"},
        "/actions/{id}/resume": {"post"},
        "/actions/{id}/run-now": {"post"},
        "/actions/{id}/occurrences": {"get"},
        "/actions/{id}/occurrences/skip": {"post"},
        "/actions/{id}/occurrences/move": {"post"},
        "/actions/{id}/occurrences/restore": {"post"},
        "/actions/{id}/backfill": {"post"},
        "/calendars": {"get"},
        "/calendars/{name}": {"get", "put", "delete"},
        "/bulk/pause": {"post"},
        "/bulk/resume": {"post"},
        "/bulk/cancel": {"post"},
        "/stats": {"get"},
        "/stats/fires": {"get"},
        "/rejections": {"get"},
        "/preview": {"post"},
    }
    create_op = reply.json["paths"]["/actions"]["post"]
    assert "201" in create_op["responses"] and "422" not in create_op["responses"]


def test_swagger_ui_is_served_at_docs_with_its_assets_from_the_api_itself(api: Api) -> None:
    reply = api.get("/docs")

    assert reply.status == 200 and reply.content_type.startswith("text/html")
    assert "SwaggerUIBundle" in reply.text and "validatorUrl: null" in reply.text
    assert "http" not in reply.text.lower()  # nothing from elsewhere: no CDN, no validator
    for name, kind in (("swagger-ui-bundle.min.js", "javascript"), ("swagger-ui.min.css", "css")):
        asset = api.get(f"/docs-assets/{name}")
        assert asset.status == 200 and kind in asset.content_type
        assert len(asset.text) > 10_000
    assert api.get("/docs-assets/..%2Froutes.py").status == 404


def test_an_unknown_route_is_a_json_404(api: Api) -> None:
    reply = api.get("/nowhere")

    assert reply.status == 404
    assert reply.fields() == ["path"]


def test_root_serves_the_dashboard_when_it_is_installed(api: Api) -> None:
    reply = api.get("/")

    if DASHBOARD.is_file():
        assert reply.status == 200 and reply.content_type.startswith("text/html")
        assert reply.text == routes.DASHBOARD_HTML  # the file as read once, at import
        assert reply.text.lstrip().lower().startswith("<!doctype html")
    else:
        assert reply.status == 404 and reply.json["message"] == "the dashboard is not installed"


@pytest.mark.parametrize("depth", [25, 600])
def test_data_nested_past_what_a_record_holds_is_400_naming_its_place(
    api: Api, stack: Stack, depth: int
) -> None:
    """DynamoDB nests 32 levels; a record keeps the data inside its own fields. Deeper data was
    a 502 (a RecursionError past a few hundred levels), now a 400 naming where."""
    nested: dict = {}
    for _ in range(depth):
        nested = {"k": nested}

    reply = api.post("/actions", {"id": "deep:1", "duration": "5m", "metadata": nested})

    assert reply.status == 400, reply.text
    assert reply.json["problems"][0]["field"] == "metadata" + ".k" * 25
    assert stack.records.get("deep:1") is None
