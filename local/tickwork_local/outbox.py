"""The local stack's outbox: every message a fire sent, kept to be listed and read (MailHog-style).

While ``Outbox.installed()`` is active, each built-in fulfillment runs with the fire it serves
noted (the action id, occurrence, scheduled time, attempt, trigger, idempotency key), and every
call it makes that sends something is kept, as it was sent:

- ``sms``: SNS Publish to a phone number — the rendered text;
- ``push``: SNS Publish to the stack's push topic — the rendered text and the message
  attributes, to the ``userId``;
- ``email``: SES SendTemplatedEmail — the subject and bodies as SES renders the template, and
  its message tags;
- ``queue``: SQS SendMessage — the body and the message attributes, to the queue;
- ``topic``: SNS Publish to any other topic — the subject, message and message attributes;
- ``event``: EventBridge PutEvents of an EVENT_BUS action — each entry's detail;
- ``webhook``: an HTTP_REQUEST — method, URL, body and the status it was answered with.

Only what a fire sent is kept (the stack's own events and the emulator's deliveries are not),
only once it was accepted, and the newest first when read. With a ``path`` each message is also
appended to a JSON-lines file, which ``tickwork outbox`` reads from another process.
"""

from __future__ import annotations

import contextvars
import itertools
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.client import BaseClient

from tickwork.adapters.aws_notifier import render_email
from tickwork.domain.times import iso
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.fulfillment.defaults import builtin_fulfillments
from tickwork_local.virtual_clock import LocalClock

__all__ = ["OUTBOX_FILE", "Outbox", "OutboxRead", "read_outbox"]

log = logging.getLogger(__name__)
OUTBOX_FILE = "outbox.jsonl"
_FIRE: contextvars.ContextVar[FulfillmentRequest | None] = contextvars.ContextVar(
    "tickwork_local_outbox_fire", default=None
)
_SENDS = {("sns", "Publish"), ("ses", "SendTemplatedEmail"), ("sqs", "SendMessage")}
_SENDS |= {("events", "PutEvents")}
_ANSWERED = re.compile(r" answered (\d{3})\b")  # a webhook's error that got an HTTP status


class Outbox:
    def __init__(self, path: Path | None = None, push_topic_arn: str | None = None) -> None:
        self.path = path
        self.push_topic_arn = push_topic_arn
        self.clock = LocalClock()  # the stack's: a message is stamped on its time
        self._messages: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)

    def messages(
        self, kind: str | None = None, action_id: str | None = None
    ) -> list[dict[str, Any]]:
        """What fires sent, newest first; only of ``kind``, or of one action."""
        with self._lock:
            kept = list(self._messages)
        return _chosen(kept, kind, action_id)

    def keep(self, kind: str, fields: dict[str, Any], fire: FulfillmentRequest) -> None:
        message = {
            "kind": kind,
            **fields,
            "fire": {
                "id": fire.action_id,
                "occurrence": fire.occurrence,
                "action": fire.action,
                "attempt": fire.attempt,
                "idempotencyKey": fire.idempotency_key,
                "scheduledTime": iso(fire.scheduled_time),
                "trigger": fire.trigger,
            },
        }
        with self._lock:  # numbered and stamped in the order kept: newest first holds
            message["number"] = next(self._numbers)
            message["at"] = iso(self.clock.now())
            if self.clock.virtual:
                message["virtualTime"] = True
            self._messages.append(message)
            if self.path is not None:
                with _private_append(self.path) as out:
                    out.write(json.dumps(message, default=str) + "\n")

    @contextmanager
    def installed(self) -> Iterator[Outbox]:
        """Note each fulfillment's fire, and keep what its calls send, until the block ends."""
        if self.path is not None and self.path.exists():
            self.path.chmod(0o600)  # what fires sent is for the owner only, as the keys are
            with self._lock:
                self._messages = _read(self.path).messages
                self._numbers = itertools.count(len(self._messages) + 1)
        kinds = builtin_fulfillments()
        originals = {kind: kind.fulfill for kind in kinds}
        call = getattr(BaseClient, "_make_api_call")  # noqa: B009 - moto patches it alike
        for kind, fulfill in originals.items():
            setattr(kind, "fulfill", self._noting(fulfill))  # noqa: B010
        setattr(BaseClient, "_make_api_call", self._watching(call))  # noqa: B010
        try:
            yield self
        finally:
            setattr(BaseClient, "_make_api_call", call)  # noqa: B010
            for kind, fulfill in originals.items():
                setattr(kind, "fulfill", fulfill)  # noqa: B010

    def _noting(self, fulfill: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        outbox = self

        def noted(fulfillment: Any, request: FulfillmentRequest) -> dict[str, Any]:
            token = _FIRE.set(request)
            try:
                result = fulfill(fulfillment, request)
            except Exception as error:
                answered = _ANSWERED.search(str(error))
                if request.action == "HTTP_REQUEST" and answered:  # sent, answered an error
                    outbox._keep_webhook(request, {"status": int(answered[1]), "error": str(error)})
                raise
            finally:
                _FIRE.reset(token)
            if request.action == "HTTP_REQUEST":
                outbox._keep_webhook(request, result)
            return result

        return noted

    def _watching(self, call: Callable[..., Any]) -> Callable[..., Any]:
        outbox = self

        def watched(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
            answer = call(client, operation, params)
            fire = _FIRE.get()
            service = client.meta.service_model.service_name
            if fire is not None and (service, operation) in _SENDS:
                try:
                    outbox._keep_call(client, service, params, answer, fire)
                except Exception:  # the outbox never fails a fire: it says what it missed
                    log.exception("the outbox could not keep a %s %s", service, operation)
            return answer

        return watched

    def _keep_call(
        self,
        client: Any,
        service: str,
        params: dict[str, Any],
        answer: dict[str, Any],
        fire: FulfillmentRequest,
    ) -> None:
        if service == "sqs":
            fields = {"to": params["QueueUrl"], "body": params["MessageBody"]}
            fields["attributes"] = _attributes(params)
            self.keep("queue", {**fields, "messageId": answer.get("MessageId")}, fire)
        elif service == "ses":
            self.keep("email", self._email(client, params, answer), fire)
        elif service == "events":
            results = answer.get("Entries", [])
            for n, entry in enumerate(params.get("Entries", [])):
                if n >= len(results) or "EventId" not in results[n]:
                    continue  # the bus refused this one: not sent
                fields = {"to": entry.get("EventBusName", "default"), "body": entry.get("Detail")}
                self.keep("event", {**fields, "detailType": entry.get("DetailType")}, fire)
        elif "PhoneNumber" in params:
            fields = {"to": params["PhoneNumber"], "body": params["Message"]}
            self.keep("sms", {**fields, "messageId": answer.get("MessageId")}, fire)
        elif params.get("TopicArn") and params["TopicArn"] == self.push_topic_arn:
            attributes = params.get("MessageAttributes", {})
            user = attributes.get("userId", {}).get("StringValue")
            fields = {"to": user, "topic": params["TopicArn"], "body": params["Message"]}
            fields["attributes"] = _attributes(params)
            self.keep("push", {**fields, "messageId": answer.get("MessageId")}, fire)
        else:
            fields = {
                "to": params.get("TopicArn") or params.get("TargetArn"),
                "subject": params.get("Subject"),
                "body": params.get("Message"),
                "attributes": _attributes(params),
            }
            self.keep("topic", {**fields, "messageId": answer.get("MessageId")}, fire)

    def _email(self, client: Any, params: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "to": ", ".join(params.get("Destination", {}).get("ToAddresses", [])),
            "from": params.get("Source"),
            "template": params.get("Template"),
            "messageId": answer.get("MessageId"),
            "tags": {tag["Name"]: tag["Value"] for tag in params.get("Tags", [])},
        }
        parts = render_email(client, params["Template"], params.get("TemplateData", "{}"))
        fields["subject"] = parts["subject"]
        if "text" in parts:  # the outbox's "body" of every kind: the text an e-mail reads
            fields["body"] = parts["text"]
        if "html" in parts:
            fields["html"] = parts["html"]
        return fields

    def _keep_webhook(self, request: FulfillmentRequest, result: dict[str, Any]) -> None:
        data = request.data
        body = getattr(data, "body", None)
        fields = {
            "to": getattr(data, "url", None),
            "method": getattr(data, "method", None),
            "body": None if body is None else json.dumps(body),
            "status": result.get("status"),
            **({"error": result["error"]} if "error" in result else {}),
        }
        self.keep("webhook", fields, request)


def _attributes(params: dict[str, Any]) -> dict[str, Any]:
    """A message's attributes as sent, by name (tickwork sends strings only)."""
    return {
        name: value.get("StringValue")
        for name, value in params.get("MessageAttributes", {}).items()
    }


@dataclass(frozen=True)
class OutboxRead:
    """The messages of an outbox file, and the lines in it that are not one (named, skipped)."""

    messages: list[dict[str, Any]]
    skipped: list[str] = field(default_factory=list)


def read_outbox(path: Path, kind: str | None = None, action_id: str | None = None) -> OutboxRead:
    """What the local stack's fires sent, from its outbox file, newest first."""
    read = _read(path) if path.exists() else OutboxRead([])
    return OutboxRead(_chosen(read.messages, kind, action_id), read.skipped)


def _read(path: Path) -> OutboxRead:
    messages: list[dict[str, Any]] = []
    skipped: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            skipped.append(f"line {number} of {path.name}: not JSON (torn by a kill?)")
            continue
        if not _is_message(message):
            skipped.append(f"line {number} of {path.name}: JSON, but not a message a fire sent")
            continue
        messages.append(message)
    return OutboxRead(messages, skipped)


def _is_message(value: Any) -> bool:
    fire = value.get("fire") if isinstance(value, dict) else None
    return (
        isinstance(value, dict)
        and isinstance(value.get("kind"), str)
        and isinstance(fire, dict)
        and isinstance(fire.get("id"), str)
    )


@contextmanager
def _private_append(path: Path) -> Iterator[Any]:
    """``path`` opened to append, created readable by its owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        yield out


def _chosen(
    messages: list[dict[str, Any]], kind: str | None, action_id: str | None
) -> list[dict[str, Any]]:
    return [
        m
        for m in reversed(messages)
        if (kind is None or m["kind"] == kind)
        and (action_id is None or m["fire"]["id"] == action_id)
    ]
