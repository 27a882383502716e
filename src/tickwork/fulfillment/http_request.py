"""HTTP_REQUEST: call a URL, signed, and classify the answer for the state machine's retry.

The connection goes to the address the SSRF guard checked (``network_guard``): the name is
resolved once, every address checked, and no proxy from the environment is used. Not followed:
redirects (a 3xx is a success, reported with its status) — a signed request is never forwarded
to a host the action did not name. The body, when given, is sent as JSON. The response is read
up to 64 KiB and its first 1 KiB returned as text.

``timeout_seconds`` is one deadline over the whole exchange (``deadline``): connecting, the TLS
handshake, sending the request, the status line, the headers and the capped body together.
A receiver that answers slowly, a byte at a time, is cut off at it; the attempt fails as
transient and is retried, as any timeout (the request may have reached the receiver: it
carries the fire's idempotency key on every attempt).

The request's framing and its Host belong to tickwork: ``data.headers`` may not set Host,
Content-Length, Transfer-Encoding or a hop-by-hop header, nor the headers tickwork signs with.
"""

from __future__ import annotations

import codecs
import http.client
import json
import re
import ssl
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, JsonValue, field_validator

from tickwork.domain.errors import PermanentFulfillmentError, TransientFulfillmentError
from tickwork.domain.times import iso
from tickwork.fulfillment.base import FulfillmentData, FulfillmentRequest, data_problem
from tickwork.fulfillment.deadline import Deadline
from tickwork.fulfillment.delivery import Delivery
from tickwork.fulfillment.network_guard import Resolver, Target, checked_target, resolve_once
from tickwork.integrity.signature import SIGNATURE_HEADER, signature_header

__all__ = [
    "FRAMING_HEADERS",
    "MAX_READ_BYTES",
    "RESULT_BODY_BYTES",
    "HttpRequestData",
    "HttpRequestFulfillment",
]

MAX_READ_BYTES = 64 * 1024
RESULT_BODY_BYTES = 1024
_CHUNK_BYTES = 8 * 1024
_RETRIED_4XX = frozenset({408, 425, 429})  # timeout, too early, too many requests
_USER_AGENT = "tickwork"
# A header name is an RFC 9110 token: no spaces, colons, controls or separators.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_RESERVED_HEADERS = frozenset(
    h.lower()
    for h in (
        SIGNATURE_HEADER,
        "X-Tickwork-Action-Id",
        "X-Tickwork-Occurrence",
        "X-Tickwork-Scheduled-Time",
        "X-Tickwork-Attempt",
        "X-Tickwork-Trigger",
        "Idempotency-Key",
    )
)
# The request's target and framing, and the hop-by-hop headers (RFC 9110 7.6.1): set by the
# connection, never by an action. A Host naming another host, or a Content-Length or chunked
# encoding that disagrees with the body, would reframe the request a receiver reads.
FRAMING_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "upgrade",
        "te",
        "trailer",
        "keep-alive",
    }
)


class HttpRequestData(FulfillmentData):
    """An HTTP request, signed with the stack's key (the X-Tickwork-Signature header) and
    carrying the fire's idempotency key; 429, 5xx and timeouts are retried."""

    url: str
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    body: JsonValue = None
    timeout_seconds: int = Field(default=10, ge=1, le=30)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or not _valid_port(value):
            raise data_problem(
                f"{value!r} is not an http(s) URL", "give an absolute URL such as https://host/path"
            )
        return value

    @field_validator("headers")
    @classmethod
    def _settable_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, content in value.items():
            lowered = name.strip().lower()
            if lowered in _RESERVED_HEADERS:
                raise data_problem(
                    f"header {name!r} is set by tickwork", "remove it from data.headers"
                )
            if lowered in FRAMING_HEADERS or lowered.startswith("proxy-"):
                raise data_problem(
                    f"header {name!r} frames the request or names its host, which tickwork sets "
                    "from the URL and the body",
                    "remove it from data.headers (put the host in data.url)",
                )
            if not _TOKEN.fullmatch(name) or any(c in content for c in "\r\n\x00"):
                raise data_problem(
                    f"header {name!r} is not a valid HTTP header",
                    "use a name without spaces or colons and values on one line",
                )
        return value


def _valid_port(url: str) -> bool:
    try:
        urlsplit(url).port  # noqa: B018 -- the property raises ValueError on a malformed port
    except ValueError:
        return False
    return True


def _utc_now() -> datetime:
    return datetime.now(UTC)


class _PinnedHTTP(http.client.HTTPConnection):
    """HTTP to the checked address, within the deadline; the Host header names the host."""

    def __init__(self, target: Target, port: int | None, deadline: Deadline) -> None:
        super().__init__(target.host, port, timeout=deadline.seconds)
        self._address = target.address
        self._deadline = deadline

    def connect(self) -> None:
        self.sock = self._deadline.connection((self._address, self.port))


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to the checked address, within the deadline; SNI and the certificate check use
    the host name."""

    def __init__(self, target: Target, port: int | None, deadline: Deadline) -> None:
        context = ssl.create_default_context()
        super().__init__(target.host, port, timeout=deadline.seconds, context=context)
        self._address = target.address
        self._deadline = deadline

    def connect(self) -> None:
        sock = self._deadline.connection((self._address, self.port))
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


class HttpRequestFulfillment:
    action_type: ClassVar[str] = "HTTP_REQUEST"
    data_model: ClassVar[type[BaseModel]] = HttpRequestData

    @classmethod
    def built(cls, delivery: Delivery) -> HttpRequestFulfillment:
        return cls(secret=delivery.http_secret, allow_private=delivery.allow_private_targets)

    def __init__(
        self,
        secret: bytes | Callable[[], bytes | None] | None = None,
        clock: Callable[[], datetime] = _utc_now,
        allow_private: bool = False,
        resolve: Resolver | None = None,
    ) -> None:
        # A callable is asked at the first signed request, not at import: only the fulfill
        # function needs the key, and it is read (and cached) through the secret source.
        self._secret = secret
        self._clock = clock
        self._allow_private = allow_private
        self._resolve = resolve or resolve_once

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = HttpRequestData.model_validate(request.data)
        parts = urlsplit(data.url)
        target = checked_target(parts.hostname or "", self._resolve, self._allow_private)
        body = b"" if data.body is None else json.dumps(data.body, separators=(",", ":")).encode()
        described = f"{data.method} {_redacted(data.url)}"
        pinned = _PinnedHTTPS if parts.scheme == "https" else _PinnedHTTP
        deadline = Deadline(data.timeout_seconds)
        connection = pinned(target, parts.port, deadline)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            connection.request(
                data.method,
                path,
                body=body if data.body is not None else None,
                headers=self._headers(data, request, body),
            )
            response = connection.getresponse()
            raw = _read_capped(response)
        except (OSError, http.client.HTTPException) as err:
            # refused, reset or timed-out connections, TLS failures, malformed responses
            raise TransientFulfillmentError(
                _timed_out(described, deadline)
                if deadline.expired
                else f"{described} failed: {_reason(err)}"
            ) from err
        finally:
            connection.close()
            deadline.close()
        if deadline.expired:  # cut off in the body: what was read is not the whole answer
            raise TransientFulfillmentError(_timed_out(described, deadline))
        if response.status < 400:
            return _result(response.status, raw)
        raise _classified(response.status, described, raw)

    def _headers(
        self, data: HttpRequestData, request: FulfillmentRequest, body: bytes
    ) -> dict[str, str]:
        headers = {"User-Agent": _USER_AGENT}
        if data.body is not None:
            headers["Content-Type"] = "application/json"
        headers.update(data.headers)
        headers["X-Tickwork-Action-Id"] = request.action_id
        headers["X-Tickwork-Occurrence"] = str(request.occurrence)
        # which period it runs for (a backfilled or caught-up one: its own past time), and
        # which attempt this is (the same key on every one)
        headers["X-Tickwork-Scheduled-Time"] = iso(request.scheduled_time)
        headers["X-Tickwork-Attempt"] = str(request.attempt)
        headers["X-Tickwork-Trigger"] = str(request.trigger)
        headers["Idempotency-Key"] = request.idempotency_key
        secret = self._secret() if callable(self._secret) else self._secret
        if secret is not None:
            timestamp = int(self._clock().timestamp())
            headers[SIGNATURE_HEADER] = signature_header(secret, timestamp, body)
        return headers


def refuse_unsafe_target(url: str, resolve: Resolver, allow_private: bool) -> Target:
    """The checked address for ``url``'s host (see ``network_guard``), or a permanent refusal."""
    return checked_target(urlsplit(url).hostname or "", resolve, allow_private)


def _timed_out(target: str, deadline: Deadline) -> str:
    return (
        f"{target} failed: timed out after {deadline.seconds:g}s (the whole exchange: "
        "connect, request, status line, headers and body)"
    )


def _read_capped(response: Any) -> bytes:
    """Read at most MAX_READ_BYTES (the deadline cuts off a body that drips)."""
    chunks: list[bytes] = []
    remaining = MAX_READ_BYTES
    while remaining > 0:
        chunk = response.read1(min(_CHUNK_BYTES, remaining))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _result(status: int, raw: bytes) -> dict[str, Any]:
    return {"status": status, "body": _text(raw)}


def _text(raw: bytes) -> str:
    # An incremental decoder drops a character cut in half at the 1 KiB boundary.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return decoder.decode(raw[:RESULT_BODY_BYTES], final=False)


def _classified(status: int, target: str, raw: bytes) -> Exception:
    message = f"{target} answered {status}: {_text(raw)[:200]}"
    if status >= 500 or status in _RETRIED_4XX:
        return TransientFulfillmentError(message)
    return PermanentFulfillmentError(message)


def _redacted(url: str) -> str:
    """The URL without credentials or query string, which may hold secrets."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _reason(err: BaseException) -> str:
    reason = getattr(err, "reason", None)
    if isinstance(reason, BaseException):
        err = reason
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
