"""The HTTP API on a loopback port, and records with a history written straight to the table."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import requests

from tests.e2e.support import Stack
from tickwork.domain.action import Occurrence, Status
from tickwork.domain.fire import Outcome
from tickwork_local.http_api import serving_api

__all__ = ["Api", "Reply", "action_path", "ago", "serving", "with_history"]


@dataclass(frozen=True)
class Reply:
    status: int
    text: str
    content_type: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)

    def fields(self) -> list[str]:
        """The fields an error reply names."""
        return [p["field"] for p in self.json["problems"]]


class Api:
    def __init__(self, base: str) -> None:
        self.base = base

    def call(self, method: str, path: str, body: Any = None, *, raw: str | None = None) -> Reply:
        data = raw if raw is not None else None if body is None else json.dumps(body)
        response = requests.request(
            method,
            self.base + path,
            data=data,
            headers={"Content-Type": "application/json"} if data is not None else {},
            timeout=30,
        )
        return Reply(response.status_code, response.text, response.headers.get("Content-Type", ""))

    def get(self, path: str) -> Reply:
        return self.call("GET", path)

    def post(self, path: str, body: Any = None, *, raw: str | None = None) -> Reply:
        return self.call("POST", path, body, raw=raw)

    def patch(self, path: str, body: Any) -> Reply:
        return self.call("PATCH", path, body)

    def delete(self, path: str) -> Reply:
        return self.call("DELETE", path)

    def put(self, path: str, body: Any) -> Reply:
        return self.call("PUT", path, body)


@contextmanager
def serving(stack: Stack) -> Iterator[Api]:
    """The ApiFunction of the template, behind API Gateway's HTTP API event format."""
    name = next(f.name for f in stack.local.functions if f.logical_id == "ApiFunction")
    with serving_api(lambda event: stack.local.runtime.invoke(name, event)) as base:
        yield Api(base)


def action_path(action_id: str, *rest: str) -> str:
    """/actions/<id, percent-encoded>[/rest]."""
    return "/".join(("/actions", quote(action_id, safe=""), *rest))


def ago(**delta: float) -> datetime:
    return datetime.now(UTC) - timedelta(**delta)


def with_history(
    stack: Stack, action_id: str, fires: list[tuple[str, datetime, float]], status: Status
) -> None:
    """Give a stored action a history of (outcome, scheduled time, seconds late) and a status,
    as the state machine would have left it."""
    action = stack.record(action_id)
    history = tuple(
        Occurrence(
            occurrence=n,
            scheduled_time=scheduled,
            actual_time=scheduled + timedelta(seconds=late),
            attempts=1,
            outcome=Outcome(outcome),
            error="TransientFulfillmentError: 503" if outcome == "FAILED" else None,
        )
        for n, (outcome, scheduled, late) in enumerate(fires, start=1)
    )
    for n, occurrence in enumerate(history):  # each recorded in turn, counted as it is
        last = n == len(history) - 1
        changed = replace(
            action,
            history=history[: n + 1],
            status=status if last else action.status,
            version=action.version + 1,
            last_error=occurrence.error,
        )
        stack.records.save(changed, expected_version=action.version, recorded=occurrence)
        action = changed
    stack.wait_counted()  # and folded into the counts, as the count function does
