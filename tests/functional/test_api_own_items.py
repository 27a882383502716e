"""GIVEN the stack's own items in its table (the pump's watermark, the calendars, a tab) and
ids shaped like them or like its generated names WHEN each is sent as the action id of every
route of the API that takes one THEN an id of the stack's own items is answered 400 or 404
naming the id, never a 2xx or a 5xx, and the items themselves are left as they were."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.support import Stack
from tests.functional.api_support import Api, action_path, serving
from tickwork.steering.calendars import put_calendar

OWN = ["#pump", "#calendars", "#calendar#uk", "#tab#b-1-0123456789abcdef#0", "#count#*#0#3"]
# a well-formed body for each route that takes one: only the id is wrong
BODIES = {
    "/actions/{id}": {"cron": "5 * * * *"},
    "/actions/{id}/backfill": {
        "startTime": "2026-03-01T00:00:00Z",
        "endTime": "2026-03-02T00:00:00Z",
    },
    "/actions/{id}/occurrences/move": {"occurrence": 2, "to": "2099-03-01T00:00:00Z"},
    "/actions/{id}/occurrences/skip": {"occurrence": 2},
    "/actions/{id}/occurrences/restore": {"occurrence": 2},
}


@pytest.fixture
def api(stack: Stack) -> Iterator[Api]:
    with serving(stack) as api:
        yield api


def _routes(api: Api) -> list[tuple[str, str]]:
    """Every (method, path) of the API whose path names an action's id."""
    paths = api.get("/openapi.json").json["paths"]
    return sorted(
        (method.upper(), path)
        for path, operations in paths.items()
        if "{id}" in path
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    )


def _own_items(stack: Stack) -> dict[str, object]:
    table = boto3.resource("dynamodb").Table(stack.deps.settings.table_name)
    return {i: table.get_item(Key={"id": i}).get("Item") for i in ("#pump", "#calendars")}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    action_id=st.one_of(st.sampled_from(OWN), st.builds(lambda t: "#" + t, st.text(max_size=12)))
)
def test_every_route_refuses_an_id_of_the_stacks_own_items(
    api: Api, stack: Stack, action_id: str
) -> None:
    put_calendar("uk", {"dates": ["2030-12-25"]}, stack.deps)
    stack.deps.parked.due(stack.deps.clock.now())  # the pump's watermark is there
    before = _own_items(stack)
    routes = _routes(api)
    assert len(routes) >= 8, routes

    for method, path in routes:
        url = path.replace("{id}", action_path(action_id).removeprefix("/actions/"))
        body = BODIES.get(path, {}) if method in ("POST", "PUT", "PATCH") else None
        reply = api.call(method, url, body)
        assert reply.status in (400, 404), (method, path, reply.status, reply.text)
        if reply.status == 400:
            assert [p["field"] for p in reply.json["problems"]] == ["id"], (path, reply.text)
        purge = api.call("DELETE", url + "?purge=true") if method == "DELETE" else None
        assert purge is None or purge.status in (400, 404)
    assert _own_items(stack) == before
