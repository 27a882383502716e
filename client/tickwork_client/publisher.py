"""The publisher client: what a team's service calls to schedule and steer actions.

It checks every request with the models the stack itself checks a Start with (the Start
detail's parser, the size limit, each action type's data model), so a bad request raises
``ValidationFailed`` at the call site, naming each field and its fix, before anything is
published. Given the stack's signing key it signs each event (``RequireSignedStarts``). It
returns what it published: the event id, the action id and the next fire times it computed.
Given the stack's API (``StackApi``) it reads an action back and changes a group in bulk.

boto3 is injected (an EventBridge client); nothing of the stack's runtime is imported.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from typing import Any

from tickwork.domain.errors import FieldProblem, ValidationFailed
from tickwork.domain.events import INBOUND, DetailType
from tickwork.domain.identifiers import check_action_id, check_group
from tickwork.domain.start_request import check_payload_size, parse_start_detail
from tickwork.domain.steering import check_note
from tickwork.fulfillment.defaults import builtin_data_models
from tickwork.fulfillment.registry import validate_data
from tickwork.integrity.signed_events import sign_event
from tickwork_client.stack_api import ApiError, StackApi
from tickwork_client.when import When, when_fields

__all__ = ["BusRefused", "Published", "TickworkClient", "check_start_detail"]

DEFAULT_SOURCE = "tickwork.client"
_NEXT_FIRES = 5


class BusRefused(Exception):
    """EventBridge did not take the event: its error code and message."""


@dataclass(frozen=True)
class Published:
    """One event on the bus: what was sent, and what it asks for."""

    event_id: str
    detail_type: str
    action_id: str
    detail: dict[str, Any]
    next_fires: list[datetime] = field(default_factory=list)  # a Start's, computed here


def check_start_detail(detail: dict[str, Any], now: datetime) -> list[datetime]:
    """Refuse what the stack would refuse in a Start detail (``ValidationFailed``, each field
    and its fix); else its next fire times after ``now``, as the stack will schedule them."""
    request = parse_start_detail(detail, now)
    check_payload_size(request)
    models = builtin_data_models()
    model = models.get(request.action)
    if model is None:
        raise ValidationFailed.of(
            "action",
            f"{request.action!r} is not an action type",
            f"give one of {', '.join(sorted(models))}",
        )
    validate_data(model, request.data)
    upcoming = request.schedule.upcoming(now, _NEXT_FIRES)
    if not upcoming:
        raise ValidationFailed.of(
            "endTime", "the schedule has no fire before its end", "move endTime later or drop it"
        )
    return upcoming


class TickworkClient:
    """Publishes Schedule Start, Stop, Pause, Resume and Run Now events on a stack's bus."""

    def __init__(
        self,
        events: Any,
        bus_name: str,
        *,
        source: str = DEFAULT_SOURCE,
        signing_key: bytes | str | None = None,
        api: StackApi | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        """``events``: a boto3 EventBridge client; ``bus_name``: the stack's ``EventBusName``;
        ``signing_key``: the stack's start-signing secret, when it requires signed events;
        ``api``: the stack's API, to read actions back and change groups in bulk."""
        self._events = events
        self._bus = bus_name
        self._source = source
        self._key = signing_key.encode() if isinstance(signing_key, str) else signing_key
        self._api = api
        self._now = clock or (lambda: datetime.now(UTC))

    # --- scheduling -------------------------------------------------------------------------
    def schedule(
        self,
        action_id: str | None = None,
        when: When | datetime | timedelta | str | None = None,
        *,
        action: str = "TICK",
        data: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        group: str | None = None,
        timezone: str | None = None,
        times: int | None = None,
        start: datetime | str | None = None,
        end: datetime | str | None = None,
        catch_up: str | None = None,
        on_failure: str | None = None,
        on_unknown_outcome: str | None = None,
        role_arn: str | None = None,
    ) -> Published:
        """Schedule ``action`` with ``data`` at ``when`` (a Start: an existing id is replaced).
        ``times``: how many fires a recurrence makes; ``start``/``end``: its bounds."""
        if when is None:
            raise ValidationFailed.of(
                "when", "no time given", "pass when=datetime, timedelta, cron(), rate(), ..."
            )
        detail: dict[str, Any] = {} if action_id is None else {"id": action_id}
        detail.update(when_fields(when))
        if times is not None and detail.get("executionRemainder", times) != times:
            raise ValidationFailed.of(
                "times",
                f"{times} fires, where the when says {detail['executionRemainder']}",
                "give the count once: count= on the when, or times= here",
            )
        optional = {
            "action": action,
            "data": data,
            "metadata": metadata,
            "group": group,
            "timezone": timezone,
            "executionRemainder": times,
            "startTime": _text(start),
            "endTime": _text(end),
            "catchUp": catch_up,
            "onFailure": on_failure,
            "onUnknownOutcome": on_unknown_outcome,
            "roleArn": role_arn,
        }
        detail.update({name: value for name, value in optional.items() if value is not None})
        return self.publish_start(detail)

    def publish_start(self, detail: dict[str, Any]) -> Published:
        """Check a Start detail as the stack will, then publish it as it is."""
        fires = check_start_detail(detail, self._now())
        published = self.publish(DetailType.START, detail)
        return Published(
            published.event_id,
            published.detail_type,
            published.action_id,
            published.detail,
            fires,
        )

    # --- steering ---------------------------------------------------------------------------
    def cancel(self, action_id: str) -> Published:
        """Cancel the action (a Stop): no more fires."""
        return self.publish(DetailType.STOP, {"id": check_action_id(action_id)})

    def pause(self, action_id: str, note: str | None = None) -> Published:
        return self.publish(DetailType.PAUSE, _noted(action_id, note))

    def resume(self, action_id: str, note: str | None = None) -> Published:
        return self.publish(DetailType.RESUME, _noted(action_id, note))

    def run_now(self, action_id: str, request_id: str | None = None) -> Published:
        """Fire the action once now, besides its schedule; ``request_id`` makes a repeat of
        the same request fire nothing more."""
        detail: dict[str, Any] = {"id": check_action_id(action_id)}
        if request_id is not None:
            detail["requestId"] = request_id
        return self.publish(DetailType.RUN_NOW, detail)

    def cancel_group(self, group: str) -> dict[str, Any]:
        """Cancel every action of ``group`` (through the stack's API, a page at a time)."""
        return self._stack().bulk("cancel", check_group(group))

    def pause_group(self, group: str, note: str | None = None) -> dict[str, Any]:
        return self._stack().bulk("pause", check_group(group), check_note(note))

    def resume_group(self, group: str, note: str | None = None) -> dict[str, Any]:
        return self._stack().bulk("resume", check_group(group), check_note(note))

    # --- reading back -----------------------------------------------------------------------
    def status(self, action_id: str) -> dict[str, Any]:
        """The action as the stack holds it: ``status``, ``executionTime``, ``history``, ..."""
        return self._stack().action(check_action_id(action_id))

    def wait(
        self,
        action_id: str,
        until: str | Callable[[dict[str, Any]], bool],
        timeout: float = 60.0,
        every: float = 0.5,
    ) -> dict[str, Any]:
        """The action once the stack shows it as ``until`` asks: a status ("PAUSED", ...) or a
        test of the action as ``status`` returns it. The stack applies events a moment after
        they are published; an action it has not created yet is waited for too.
        ``TimeoutError`` names what it last saw."""
        wanted = until if callable(until) else (lambda action: action.get("status") == until)
        deadline = time.monotonic() + timeout
        seen: dict[str, Any] | None = None
        while True:
            try:
                seen = self.status(action_id)
            except ApiError as error:
                if error.status != HTTPStatus.NOT_FOUND:
                    raise
            if seen is not None and wanted(seen):
                return seen
            if time.monotonic() > deadline:
                last = "not created" if seen is None else f"status {seen.get('status')}"
                raise TimeoutError(f"{action_id}: still {last} after {timeout:g} s")
            time.sleep(every)

    def history(self, action_id: str) -> list[dict[str, Any]]:
        """The action's latest fires, oldest first: occurrence, times, outcome, execution."""
        history: list[dict[str, Any]] = self.status(action_id).get("history", [])
        return history

    # --- the bus ----------------------------------------------------------------------------
    def publish(self, detail_type: str, detail: dict[str, Any]) -> Published:
        """Put one event on the bus; an inbound one (a Start, Stop, Pause, Resume or Run Now)
        signed when the client holds the key and it is not signed yet."""
        if self._key is not None and detail_type in INBOUND and "signature" not in detail:
            detail = sign_event(self._key, detail_type, detail, int(time.time()))
        response = self._events.put_events(
            Entries=[
                {
                    "EventBusName": self._bus,
                    "Source": self._source,
                    "DetailType": str(detail_type),
                    "Detail": json.dumps(detail, default=str),
                }
            ]
        )
        entry = response["Entries"][0]
        if response.get("FailedEntryCount") or "EventId" not in entry:
            raise BusRefused(f"{entry.get('ErrorCode')}: {entry.get('ErrorMessage')}")
        event_id = str(entry["EventId"])
        action_id = str(detail.get("id") or f"evt-{event_id}")
        return Published(event_id, str(detail_type), action_id, detail)

    def _stack(self) -> StackApi:
        if self._api is None:
            raise ValidationFailed(
                [
                    FieldProblem(
                        "api",
                        "this client was made without the stack's API",
                        "pass api=StackApi(<ApiUrl output>, <signer>) to TickworkClient",
                    )
                ]
            )
        return self._api


def _noted(action_id: str, note: str | None) -> dict[str, Any]:
    detail: dict[str, Any] = {"id": check_action_id(action_id)}
    checked = check_note(note)
    if checked is not None:
        detail["note"] = checked
    return detail


def _text(moment: datetime | str | None) -> str | None:
    if isinstance(moment, datetime):
        return moment.isoformat().replace("+00:00", "Z")
    return moment
