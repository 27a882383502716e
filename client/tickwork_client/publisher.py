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
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel

from tickwork.domain.action import FINISHED, Status
from tickwork.domain.errors import FieldProblem, ValidationFailed
from tickwork.domain.events import INBOUND, DetailType
from tickwork.domain.identifiers import check_action_id, check_group
from tickwork.domain.start_fields import DEFAULT_ACTION, START_FIELDS
from tickwork.domain.start_request import check_payload_size, parse_start_detail
from tickwork.domain.steering import check_note
from tickwork.domain.times import iso, parse_iso
from tickwork.fulfillment.defaults import builtin_data_models
from tickwork.fulfillment.registry import validate_data
from tickwork.integrity.signed_events import SIGNATURE_FIELD, sign_event
from tickwork_client.local import LOCAL_CREDENTIALS, find_local_stack
from tickwork_client.stack_api import ApiError, BearerSigner, StackApi, action_path
from tickwork_client.views import (
    ActionPage,
    ActionSummary,
    ActionView,
    FireView,
    OccurrenceView,
    OutboxMessage,
    RejectionView,
    StatsView,
)
from tickwork_client.when import When, when_fields

__all__ = [
    "BusRefused",
    "Published",
    "StartRefused",
    "TickworkClient",
    "check_json",
    "check_start_detail",
]

DEFAULT_SOURCE = "tickwork.client"
_NEXT_FIRES = 5
_PUT_ATTEMPTS = 3
_PASSING = {"ThrottlingException", "InternalFailure", "InternalException"}  # worth a retry
_STATUSES = tuple(str(status) for status in Status)
_ENDED = {str(status) for status in FINISHED}
# A Start's field, as the argument of schedule() that sets it, and the other way round. The
# fields a When sets (at, cron, ...) keep their own names: the when is made of them.
_FIELDS = {spec.argument: spec.name for spec in START_FIELDS if spec.argument not in (None, "when")}
_ARGUMENTS = {name: argument for argument, name in _FIELDS.items()}


class BusRefused(Exception):
    """EventBridge did not take the event: its error code and message."""


class StartRefused(Exception):
    """The stack refused a Start this client published (a Schedule Rejected): ``rejection``
    holds its reason and each field's problem and fix; nothing was written."""

    def __init__(self, action_id: str, event_id: str, rejection: RejectionView) -> None:
        self.action_id = action_id
        self.event_id = event_id
        self.rejection = rejection
        problems = "; ".join(
            f"{p.get('field')}: {p.get('problem')}. Fix: {p.get('fix')}"
            for p in rejection.get("problems") or []
        )
        super().__init__(
            f"the stack refused the Start of {action_id!r} (event {event_id}): "
            + (problems or str(rejection.get("message")))
        )


@dataclass(frozen=True)
class Published:
    """One event on the bus: what was sent, and what it asks for."""

    event_id: str
    detail_type: str
    action_id: str
    detail: dict[str, Any]
    next_fires: list[datetime] = field(default_factory=list)  # a Start's, computed here


def check_start_detail(
    detail: dict[str, Any],
    now: datetime,
    action_models: dict[str, type[BaseModel]] | None = None,
) -> list[datetime]:
    """Refuse what the stack would refuse in a Start detail (``ValidationFailed``, each field
    and its fix); else its next fire times after ``now``, as the stack will schedule them.
    ``action_models``: the data models of action types the stack registers beside the
    built-in ones, by type."""
    detail = {k: v for k, v in detail.items() if k != SIGNATURE_FIELD}
    check_json(detail)
    if "id" in detail:
        check_action_id(detail["id"])
    request = parse_start_detail(detail, now)
    check_payload_size(request)
    models = {**builtin_data_models(), **(action_models or {})}
    model = models.get(request.action)
    if model is None:
        raise ValidationFailed.of(
            "action",
            f"{request.action!r} is not an action type",
            f"give one of {', '.join(sorted(models))}, or pass the stack's own type's data "
            "model in TickworkClient(action_models={...})",
        )
    validate_data(model, request.data)
    upcoming = request.schedule.upcoming(now, _NEXT_FIRES)
    if not upcoming:
        raise ValidationFailed.of(
            "endTime", "the schedule has no fire before its end", "move endTime later or drop it"
        )
    return upcoming


def check_json(detail: dict[str, Any]) -> None:
    """Every value is JSON as the bus carries it (no datetime, set or object), or the first
    place that is not is named."""
    for name, value in detail.items():
        if not _is_json(value):
            path, bad = _first_bad(name, value)
            raise ValidationFailed.of(
                path,
                f"is not JSON ({type(bad).__name__})",
                "give strings, numbers, booleans, null, lists and objects: a time as ISO "
                "8601 text, a Decimal as a number",
            )


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _first_bad(path: str, value: Any) -> tuple[str, Any]:
    """The first place inside ``value`` that JSON cannot hold (``data.items.0.at``), and what
    it holds."""
    if isinstance(value, dict):
        inner: list[tuple[Any, Any]] = list(value.items())
    else:
        inner = list(enumerate(value)) if isinstance(value, list | tuple) else []
    for key, item in inner:
        if not _is_json(item):
            return _first_bad(f"{path}.{key}", item)
    return path, value


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
        action_models: dict[str, type[BaseModel]] | None = None,
        clock: Callable[[], datetime] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``events``: a boto3 EventBridge client; ``bus_name``: the stack's ``EventBusName``;
        ``signing_key``: the stack's start-signing secret, when it requires signed events;
        ``api``: the stack's API, to read actions back and change groups in bulk;
        ``action_models``: the data models of the stack's own action types, by type."""
        self._events = events
        self._bus = bus_name
        self._source = source
        self._key = signing_key.encode() if isinstance(signing_key, str) else signing_key
        self._api = api
        self._models = dict(action_models or {})
        self._now = clock or (lambda: datetime.now(UTC))
        self._sleep = sleep
        self._starts: dict[str, str] = {}  # the event id of the last Start published, by id

    @classmethod
    def for_local(cls, state_dir: str | Path | None = None, **options: Any) -> TickworkClient:
        """A client of the local stack (``tickwork local``) found in ``state_dir`` (default:
        ``$TICKWORK_STATE_DIR``, else ``./.tickwork``): its bus, its API with its token, and
        the dummy credentials it takes. ``options`` as ``TickworkClient``'s (``signing_key``,
        ...). ``LocalStackNotFound`` when none runs there."""
        import boto3

        found = find_local_stack(state_dir)
        events = boto3.session.Session().client(
            "events",
            endpoint_url=found.endpoint,
            region_name=found.region,
            aws_access_key_id=LOCAL_CREDENTIALS["aws_access_key_id"],
            aws_secret_access_key=LOCAL_CREDENTIALS["aws_secret_access_key"],
        )
        api = (
            StackApi(found.api_url, BearerSigner(found.api_token or "")) if found.api_url else None
        )
        # On virtual time, "now" (relative times, signatures) is the stack's.
        clock = found.now if found.virtual_time else None
        return cls(events, found.bus_name, **{"api": api, "clock": clock, **options})

    # --- scheduling -------------------------------------------------------------------------
    def schedule(
        self,
        action_id: str | None = None,
        when: When | datetime | timedelta | str | None = None,
        *,
        action: str = DEFAULT_ACTION,
        data: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        group: str | None = None,
        timezone: str | None = None,
        dst_repeated: str | None = None,
        dst_missing: str | None = None,
        flexible_window: str | timedelta | None = None,
        window_mode: str | None = None,
        calendar: str | None = None,
        on_excluded: str | None = None,
        times: int | None = None,
        start: datetime | str | None = None,
        end: datetime | str | None = None,
        catch_up: str | None = None,
        catch_up_window: str | timedelta | None = None,
        misfire_threshold: str | timedelta | None = None,
        on_failure: str | None = None,
        on_unknown_outcome: str | None = None,
        lock_seconds: int | None = None,
        maximum_retry_attempts: int | None = None,
        maximum_event_age_seconds: int | timedelta | None = None,
        dead_letter_arn: str | None = None,
        catch_up_on_resume: str | None = None,
        overlap_policy: str | None = None,
        role_arn: str | None = None,
    ) -> Published:
        # The docstring is made from the Start fields' definitions: see _schedule_doc below.
        if when is None:
            raise ValidationFailed.of(
                "when", "no time given", "pass when=datetime, timedelta, cron(), rate(), ..."
            )
        naive = (isinstance(when, datetime) and when.tzinfo is None) or (
            isinstance(when, When) and when.naive
        )
        for name, given, is_naive in (
            ("when", when, naive),
            ("start", start, isinstance(start, datetime) and start.tzinfo is None),
            ("end", end, isinstance(end, datetime) and end.tzinfo is None),
        ):
            if is_naive and timezone is None:
                raise ValidationFailed.of(
                    name,
                    f"{given!s} is a datetime without a zone: it would be read as UTC, not this "
                    "machine's time",
                    "give an aware datetime (datetime(..., tzinfo=UTC) or ZoneInfo(...)), or "
                    "timezone= the zone it is in",
                )
        detail: dict[str, Any] = {} if action_id is None else {_FIELDS["action_id"]: action_id}
        detail.update(when_fields(when))
        if times is not None and detail.get("executionRemainder", times) != times:
            raise ValidationFailed.of(
                "times",
                f"{times} fires, where the when says {detail['executionRemainder']}",
                "give the count once: count= on the when, or times= here",
            )
        arguments = {
            "action": action,
            "data": data,
            "metadata": metadata,
            "group": group,
            "timezone": timezone,
            "dst_repeated": dst_repeated,
            "dst_missing": dst_missing,
            "flexible_window": _span(flexible_window),
            "window_mode": window_mode,
            "calendar": calendar,
            "on_excluded": on_excluded,
            "times": times,
            "start": _text(start),
            "end": _text(end),
            "catch_up": catch_up,
            "catch_up_window": _span(catch_up_window),
            "misfire_threshold": _span(misfire_threshold),
            "on_failure": on_failure,
            "on_unknown_outcome": on_unknown_outcome,
            "lock_seconds": lock_seconds,
            "maximum_retry_attempts": maximum_retry_attempts,
            "maximum_event_age_seconds": (
                int(maximum_event_age_seconds.total_seconds())
                if isinstance(maximum_event_age_seconds, timedelta)
                else maximum_event_age_seconds
            ),
            "dead_letter_arn": dead_letter_arn,
            "catch_up_on_resume": catch_up_on_resume,
            "overlap_policy": overlap_policy,
            "role_arn": role_arn,
        }
        detail.update(
            {_FIELDS[name]: value for name, value in arguments.items() if value is not None}
        )
        try:
            return self.publish_start(detail)
        except ValidationFailed as refused:  # named as this call's arguments are
            raise ValidationFailed(
                [replace(p, field=_argument(p.field)) for p in refused.problems]
            ) from None

    def publish_start(self, detail: dict[str, Any]) -> Published:
        """Check a Start detail as the stack will, then publish it as it is."""
        fires = check_start_detail(detail, self._now(), self._models)
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
            detail["requestId"] = check_note(request_id, "requestId")
        return self.publish(DetailType.RUN_NOW, detail)

    # --- one occurrence -----------------------------------------------------------------------
    def skip(
        self,
        action_id: str,
        occurrence: int | None = None,
        *,
        at: datetime | str | None = None,
        note: str | None = None,
    ) -> Published:
        """Skip one occurrence of a recurrence, by its number or its scheduled time ``at``: it
        is recorded SKIPPED at its time and the schedule goes on (a Schedule Skip Occurrence
        event). Inside the lock the imminent occurrence is fixed: the stack refuses it."""
        detail = _occurrence_detail(action_id, occurrence, at, note)
        return self.publish(DetailType.SKIP_OCCURRENCE, detail)

    def move(
        self,
        action_id: str,
        occurrence: int | None = None,
        *,
        at: datetime | str | None = None,
        to: datetime | str,
        note: str | None = None,
    ) -> Published:
        """Fire one occurrence (by number, or its scheduled time ``at``) at ``to`` instead: in
        the future, strictly between the occurrences around it (a Schedule Move Occurrence
        event)."""
        detail = _occurrence_detail(action_id, occurrence, at, note)
        detail["to"] = _instant(to, "to")
        return self.publish(DetailType.MOVE_OCCURRENCE, detail)

    def restore(
        self,
        action_id: str,
        occurrence: int | None = None,
        *,
        at: datetime | str | None = None,
        note: str | None = None,
    ) -> Published:
        """Undo the skip or move of one occurrence: it fires as its schedule says."""
        detail = _occurrence_detail(action_id, occurrence, at, note)
        return self.publish(DetailType.RESTORE_OCCURRENCE, detail)

    def backfill(
        self,
        action_id: str,
        start: datetime | str,
        end: datetime | str,
        *,
        overlap: str = "REFUSE",
        note: str | None = None,
        request_id: str | None = None,
    ) -> Published:
        """Run each occurrence the schedule has from ``start`` to ``end`` (inclusive, both past)
        now, once (a Schedule Backfill event, Temporal's backfill): fires recorded BACKFILL,
        each tick carrying its occurrence's own scheduled time and a key of its own.
        Occurrences of the action's own schedule (at or after its creation) refuse it
        (``overlap="REFUSE"``) or are passed over (``"SKIP"``); those backfilled before never
        run again, so publishing it again goes on where it is."""
        policy = str(overlap).strip().upper()
        if policy not in ("REFUSE", "SKIP"):
            raise ValidationFailed.of(
                "overlap", f"{overlap!r} is not an overlap policy", "give REFUSE or SKIP"
            )
        detail = _noted(action_id, note)
        detail |= {
            "startTime": _instant(start, "start"),
            "endTime": _instant(end, "end"),
            "overlap": policy,
        }
        if request_id is not None:
            detail["requestId"] = check_note(request_id, "requestId")
        return self.publish(DetailType.BACKFILL, detail)

    def occurrences(self, action_id: str, count: int = 10) -> list[OccurrenceView]:
        """The action's coming occurrences, skipped and moved ones shown (through the API)."""
        return self._stack().occurrences(check_action_id(action_id), count)

    def cancel_group(self, group: str) -> dict[str, Any]:
        """Cancel every action of ``group`` (through the stack's API, a page at a time)."""
        return self._stack().bulk("cancel", check_group(group))

    def pause_group(self, group: str, note: str | None = None) -> dict[str, Any]:
        return self._stack().bulk("pause", check_group(group), check_note(note))

    def resume_group(self, group: str, note: str | None = None) -> dict[str, Any]:
        return self._stack().bulk("resume", check_group(group), check_note(note))

    # --- reading back -----------------------------------------------------------------------
    def list_actions(
        self,
        *,
        status: str | None = None,
        group: str | None = None,
        prefix: str | None = None,
        attention: bool = False,
        limit: int = 50,
        cursor: str | None = None,
    ) -> ActionPage:
        """A page of actions (``GET /actions``): by ``status`` in fire order; by ``group``,
        id ``prefix`` or ``attention`` (a failed fire waiting for a retry) in id order.
        ``nextCursor`` of the page asks for the next; ``actions()`` walks them all."""
        if status is not None and status not in _STATUSES:
            raise ValidationFailed.of(
                "status", f"{status!r} is not a status", f"give one of {', '.join(_STATUSES)}"
            )
        if not 1 <= limit <= 200:
            raise ValidationFailed.of("limit", f"is {limit}", "give 1 to 200")
        query = {
            "status": status,
            "group": None if group is None else check_group(group),
            "prefix": prefix,
            "attention": "true" if attention else None,
            "limit": str(limit),
            "cursor": cursor,
        }
        return self._stack().actions(query)

    def actions(
        self,
        *,
        status: str | None = None,
        group: str | None = None,
        prefix: str | None = None,
        attention: bool = False,
        page: int = 200,
    ) -> Iterator[ActionSummary]:
        """Every action ``list_actions`` selects, page after page."""
        cursor: str | None = None
        while True:
            found = self.list_actions(
                status=status,
                group=group,
                prefix=prefix,
                attention=attention,
                limit=page,
                cursor=cursor,
            )
            yield from found["items"]
            cursor = found.get("nextCursor")
            if not cursor:
                return

    def count(self, *, group: str | None = None, prefix: str | None = None) -> StatsView:
        """How many actions there are by status (each once), how many need attention, and the
        fires of the last hour and day (``GET /stats``), all or of a group / id prefix."""
        query = {"group": None if group is None else check_group(group), "prefix": prefix}
        return self._stack().stats(query)

    def retry(self, action_id: str, occurrence: int | None = None) -> dict[str, Any]:
        """Run a failed fire again now (``POST /actions/{id}/retry``; ``occurrence``: which of
        its failed fires, default the latest): the stack's answer (``outcome``, ...)."""
        body = None if occurrence is None else {"occurrence": occurrence}
        path = action_path(check_action_id(action_id), "/retry")
        return self._stack().call("POST", path, body)

    def update(self, action_id: str, **changes: Any) -> ActionView:
        """Change some of an action's fields, the rest kept (``PATCH /actions/{id}``): the
        Start's fields by their names (``data=...``, ``cron=...``, ``timezone=...``; a new
        when replaces the old one). The action as the stack holds it after."""
        if not changes:
            raise ValidationFailed.of("changes", "none given", "name a field, e.g. data={...}")
        path = action_path(check_action_id(action_id))
        return cast(ActionView, self._stack().call("PATCH", path, changes))

    def rejections(self, limit: int = 20, source: str | None = None) -> list[RejectionView]:
        """What the stack refused and kept, newest first (``GET /rejections``): each with the
        request, the action id, the event id, the sender, and each field's problem and fix.
        ``source``: one sender's (default: all)."""
        return self._stack().rejections(limit, source)

    def status(self, action_id: str) -> ActionView:
        """The action as the stack holds it: ``status``, ``executionTime``, ``history``, ..."""
        return self._stack().action(check_action_id(action_id))

    def wait(
        self,
        action_id: str,
        until: str | Callable[[ActionView], bool],
        timeout: float = 60.0,
        every: float = 0.5,
    ) -> ActionView:
        """The action once the stack shows it as ``until`` asks: a status ("PAUSED", ...) or a
        test of the action as ``status`` returns it. The stack applies events a moment after
        they are published; an action it has not created yet is waited for too.
        ``TimeoutError`` names what it last saw."""
        if isinstance(until, str) and until not in _STATUSES:
            raise ValidationFailed.of(
                "until", f"{until!r} is not a status", f"give one of {', '.join(_STATUSES)}"
            )
        wanted = until if callable(until) else (lambda action: action.get("status") == until)
        deadline = time.monotonic() + timeout
        seen: ActionView | None = None
        while True:
            try:
                seen = self.status(action_id)
            except ApiError as error:
                if error.status != HTTPStatus.NOT_FOUND:
                    raise
            if seen is not None and wanted(seen):
                return seen
            if seen is None:
                self._raise_if_refused(action_id)
            status = None if seen is None else seen.get("status")
            if status in _ENDED and isinstance(until, str):  # an ended action stays ended
                raise TimeoutError(f"{action_id} ended {status}, never {until}")
            if time.monotonic() > deadline:
                last = "not created" if seen is None else f"status {seen.get('status')}"
                hint = " (a Start the stack refused: see its Schedule Rejected event)"
                raise TimeoutError(
                    f"{action_id}: still {last} after {timeout:g} s"
                    + (hint if seen is None else "")
                )
            self._sleep(every)

    def _raise_if_refused(self, action_id: str) -> None:
        """``StartRefused`` when the stack refused the last Start this client published for
        ``action_id`` (its event id among the rejections kept)."""
        event_id = self._starts.get(action_id)
        if event_id is None:
            return
        for rejection in self._stack().rejections(50, self._source):
            if rejection.get("eventId") == event_id:
                raise StartRefused(action_id, event_id, rejection)

    def history(self, action_id: str) -> list[FireView]:
        """The action's latest fires, oldest first: occurrence, times, outcome, execution."""
        return list(self.status(action_id).get("history", []))

    def outbox(
        self, kind: str | None = None, action_id: str | None = None, limit: int = 20
    ) -> list[OutboxMessage]:
        """The local stack's outbox: the messages its fires sent, rendered, newest first
        (``kind``: sms, push, email, queue, topic, event, webhook; ``action_id``: one action's
        fires). Only the local stack has one: a deployed stack's messages are really sent."""
        return self._stack().outbox(kind, action_id, limit)

    # --- the local stack's time ---------------------------------------------------------------
    def local_time(self) -> datetime:
        """The local stack's now: its virtual time when it runs on one (``tickwork local
        --virtual-time``), else the wall clock."""
        return parse_iso(str(self._stack().local_time()["now"]), "now")

    def advance_time(
        self, by: timedelta | str | None = None, *, to: datetime | str | None = None
    ) -> dict[str, Any]:
        """Move a virtual-time local stack on ``by`` (``timedelta(days=30)`` or ``"30d"``) or
        ``to`` an instant; returns once everything due by then has happened, in order, each at
        its own instant (fires, retries, the pump's and the reconciler's runs): what it took.
        A test says "advance to the fire" with it instead of sleeping."""
        if (by is None) == (to is None):
            raise ValidationFailed.of("by", "give by or to, not both nor neither", 'e.g. by="30d"')
        if by is not None:
            text = f"{int(by.total_seconds())}s" if isinstance(by, timedelta) else by
            return self._stack().advance_time({"advance": text})
        moment = iso(to) if isinstance(to, datetime) else str(to)
        return self._stack().advance_time({"to": moment})

    # --- the bus ----------------------------------------------------------------------------
    def publish(self, detail_type: str, detail: dict[str, Any]) -> Published:
        """Put one event on the bus; an inbound one (a Start, Stop, Pause, Resume or Run Now)
        signed when the client holds the key and it is not signed yet."""
        check_json(detail)
        if self._key is not None and detail_type in INBOUND and SIGNATURE_FIELD not in detail:
            detail = sign_event(self._key, detail_type, detail, int(self._now().timestamp()))
        entry = self._put(
            {
                "EventBusName": self._bus,
                "Source": self._source,
                "DetailType": str(detail_type),
                "Detail": json.dumps(detail),
            }
        )
        event_id = str(entry["EventId"])
        action_id = str(detail.get("id") or f"evt-{event_id}")
        if detail_type == DetailType.START:
            self._starts[action_id] = event_id  # for wait(): a refusal names this event
        return Published(event_id, str(detail_type), action_id, detail)

    def _put(self, entry: dict[str, Any]) -> dict[str, Any]:
        """One entry on the bus; an entry the bus failed for a passing reason (throttled, an
        internal error) is put again, up to 3 times with backoff, as boto3 retries a call."""
        for attempt in range(_PUT_ATTEMPTS):
            response = self._events.put_events(Entries=[entry])
            answer: dict[str, Any] = response["Entries"][0]
            if not response.get("FailedEntryCount") and "EventId" in answer:
                return answer
            code = str(answer.get("ErrorCode"))
            if code not in _PASSING or attempt == _PUT_ATTEMPTS - 1:
                raise BusRefused(f"{code}: {answer.get('ErrorMessage')}")
            self._sleep(0.1 * 2**attempt)
        raise AssertionError("the loop returns or raises")

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


def _argument(field: str) -> str:
    """A problem's field named as schedule()'s argument, the Start's own name beside it."""
    head, dot, rest = field.partition(".")
    name = _ARGUMENTS.get(head)
    return field if name is None or name == head else f"{name} ({head}{dot}{rest})"


def _span(span: str | timedelta | None) -> str | None:
    """A duration field's text: a timedelta as whole seconds ("90s"), a text as it is."""
    if isinstance(span, timedelta):
        return f"{span.total_seconds():g}s"
    return span


_WHEN = (
    "a datetime (at; a naive one is read in timezone=), a timedelta (delay, from when the "
    "stack takes the Start), or at(), cron(), rate(), every() of tickwork_client, or any "
    "expression `tickwork next` takes"
)


def _schedule_doc() -> str:
    """TickworkClient.schedule's docstring: each argument from its Start field's definition."""
    lines = [
        "Schedule ``action`` with ``data`` at ``when``: publish a Schedule Start (an existing",
        "id is replaced), checked first as the stack checks it (``ValidationFailed`` names each",
        "argument and its fix). Returns what was published and the next fire times.",
        "",
        "Arguments (the Start field each sets is in brackets):",
    ]
    whens = ", ".join(spec.name for spec in START_FIELDS if spec.argument == "when")
    described = [(f"when [{whens}]", f"{_WHEN}.")] + [
        (f"{spec.argument} [{spec.name}]", spec.text("client"))
        for spec in START_FIELDS
        if spec.argument and spec.argument != "when"
    ]
    for head, text in described:
        wrapped = textwrap.fill(
            f"{head}: {text}",
            92,
            initial_indent="    ",
            subsequent_indent="        ",
            break_on_hyphens=False,
        )
        lines.append(wrapped)
    return "\n".join(lines)


TickworkClient.schedule.__doc__ = _schedule_doc()


def _occurrence_detail(
    action_id: str, occurrence: int | None, at: datetime | str | None, note: str | None
) -> dict[str, Any]:
    """``{"id", "occurrence" | "at", "note"?}``, checked as the stack will."""
    if (occurrence is None) == (at is None):
        raise ValidationFailed.of(
            "occurrence",
            "give exactly one of the occurrence's number and its time",
            "pass occurrence=3, or at=its scheduled time",
        )
    detail = _noted(action_id, note)
    if occurrence is not None:
        if isinstance(occurrence, bool) or not isinstance(occurrence, int) or occurrence < 1:
            raise ValidationFailed.of("occurrence", f"{occurrence!r} is not 1 or more", "give 1+")
        detail["occurrence"] = occurrence
    else:
        assert at is not None
        detail["at"] = _instant(at, "at")
    return detail


def _instant(moment: datetime | str, field: str) -> str:
    """An aware instant as the wire carries it; a naive datetime or a bad text is refused."""
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            raise ValidationFailed.of(
                field, f"{moment!s} has no zone", "give an aware datetime (tzinfo=UTC, ...)"
            )
        return iso(moment)
    return iso(parse_iso(moment, field))


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
