"""Reading a stack back through its HTTP API: an action's status and history, and the bulk
changes by group (``POST /bulk/pause`` and the like, a page at a time until done).

The deployed API authorises with IAM: ``SigV4Signer`` signs each call with botocore and the
caller's credentials (service ``execute-api``). The local stack's API takes its bearer token
instead (``BearerSigner``; ``tickwork local`` prints it when it starts).
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, NoReturn, cast
from urllib.parse import quote, urlsplit

from tickwork_client.views import (
    ActionPage,
    ActionView,
    OccurrenceView,
    OutboxMessage,
    RejectionView,
    StatsView,
)

__all__ = ["ApiError", "BearerSigner", "SigV4Signer", "Signer", "StackApi", "action_path"]

Signer = Callable[[str, str, dict[str, str], bytes], dict[str, str]]


def action_path(action_id: str, tail: str = "") -> str:
    """``/actions/{id}`` (the id quoted whole: ids hold ``:`` and ``/``), then ``tail``."""
    return f"/actions/{quote(action_id, safe='')}{tail}"


def _with_query(path: str, query: Mapping[str, str | None]) -> str:
    """``path`` with the query's values given (None: left out), each quoted."""
    filled = "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items() if v is not None)
    return f"{path}?{filled}" if filled else path


class ApiError(Exception):
    """The API refused a call: its status, and the error it named (``NotFound``, ...)."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(f"{status} {error}: {message}")
        self.status = status
        self.error = error
        self.message = message


class SigV4Signer:
    """Signs a request for API Gateway (``execute-api``) with the caller's credentials."""

    def __init__(self, credentials: Any, region: str) -> None:
        self._credentials = credentials  # botocore credentials: refreshed as they expire
        self._region = region

    def __call__(
        self, method: str, url: str, headers: dict[str, str], body: bytes
    ) -> dict[str, str]:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        request = AWSRequest(method=method, url=url, data=body, headers=dict(headers))
        frozen = self._credentials.get_frozen_credentials()
        SigV4Auth(frozen, "execute-api", self._region).add_auth(request)
        return dict(request.headers.items())


class BearerSigner:
    """The local API in its token mode: the stack's own token, as `tickwork local` printed."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __call__(
        self, method: str, url: str, headers: dict[str, str], body: bytes
    ) -> dict[str, str]:
        return {**headers, "Authorization": f"Bearer {self._token}"}


class StackApi:
    """A stack's HTTP API at ``url`` (its ``ApiUrl`` output), every call signed by ``sign``."""

    def __init__(self, url: str, sign: Signer, timeout: float = 30.0) -> None:
        self._url = url.rstrip("/")
        self._sign = sign
        self._timeout = timeout
        # The local stack's API is on loopback: never through a proxy from the environment.
        loopback = urlsplit(self._url).hostname in ("127.0.0.1", "localhost", "::1")
        handlers = [urllib.request.ProxyHandler({})] if loopback else []
        self._opener = urllib.request.build_opener(*handlers)

    def action(self, action_id: str) -> ActionView:
        """The action as the API shows it: status, next fire, history and transitions."""
        return cast(ActionView, self.call("GET", action_path(action_id)))

    def actions(self, query: Mapping[str, str | None]) -> ActionPage:
        """``GET /actions``: a page of actions (``status``, ``group``, ``prefix``,
        ``attention``, ``limit``, ``cursor``; None: not given)."""
        return cast(ActionPage, self.call("GET", _with_query("/actions", query)))

    def stats(self, query: Mapping[str, str | None]) -> StatsView:
        """``GET /stats``: counts by status, attention apart, fires of the last hour and day."""
        return cast(StatsView, self.call("GET", _with_query("/stats", query)))

    def rejections(self, limit: int = 20, source: str | None = None) -> list[RejectionView]:
        """``GET /rejections``: the refusals the stack kept, newest first."""
        query = {"limit": str(limit), "source": source}
        answer = self.call("GET", _with_query("/rejections", query))
        return cast(list[RejectionView], answer.get("rejections", []))

    def occurrences(self, action_id: str, count: int = 10) -> list[OccurrenceView]:
        """``GET /actions/{id}/occurrences``: the coming ones, skips and moves shown."""
        answer = self.call("GET", action_path(action_id, f"/occurrences?count={count}"))
        return cast(list[OccurrenceView], answer.get("occurrences", []))

    def outbox(
        self, kind: str | None = None, action_id: str | None = None, limit: int = 20
    ) -> list[OutboxMessage]:
        """``GET /local/outbox``: what the local stack's fires sent, newest first."""
        query = {"kind": kind, "id": action_id, "limit": str(limit)}
        try:
            answer = self.call("GET", _with_query("/local/outbox", query))
        except ApiError as error:
            if error.status == 404:
                raise ApiError(
                    404,
                    "NotFound",
                    "only the local stack keeps an outbox: a deployed stack "
                    "sends for real (see each fire's result in the action's history)",
                ) from None
            raise
        return cast(list[OutboxMessage], answer.get("messages", []))

    def local_time(self) -> dict[str, Any]:
        """``GET /local/time``: the local stack's now, and whether it is virtual."""
        return self._local("GET", "/local/time")

    def advance_time(self, body: dict[str, str], timeout: float = 900.0) -> dict[str, Any]:
        """``POST /local/time``: move a virtual-time local stack on (``{"advance": "30d"}`` or
        ``{"to": ISO}``); answers once everything due by then has happened."""
        return self._local("POST", "/local/time", body, timeout)

    def _local(
        self, method: str, path: str, body: Any = None, timeout: float | None = None
    ) -> dict[str, Any]:
        try:
            return self.call(method, path, body, timeout)
        except ApiError as error:
            if error.status == 404:
                raise ApiError(
                    404,
                    "NotFound",
                    "only the local stack has a clock of its own to read and "
                    "move: a deployed stack runs on AWS's time",
                ) from None
            raise

    def bulk(self, operation: str, group: str, note: str | None = None) -> dict[str, Any]:
        """Pause, resume or cancel every action of ``group``: each page until none is left.
        The counts of every page, added up, and each action's result."""
        cursor: str | None = None
        total: dict[str, Any] = {"matched": 0, "results": []}
        while True:
            body: dict[str, Any] = {"group": group}
            if note is not None:
                body["note"] = note
            if cursor is not None:
                body["cursor"] = cursor
            page = self.call("POST", f"/bulk/{operation}", body)
            total["matched"] += int(page.get("matched", 0))
            total["results"].extend(page.get("results", []))
            cursor = page.get("nextCursor")
            if not cursor:
                return total

    def call(
        self, method: str, path: str, body: Any = None, timeout: float | None = None
    ) -> dict[str, Any]:
        data = b"" if body is None else json.dumps(body).encode()
        url = f"{self._url}{path}"
        headers = {"Content-Type": "application/json"} if body is not None else {}
        signed = self._sign(method, url, headers, data)
        request = urllib.request.Request(url, data=data or None, headers=signed, method=method)
        try:
            with self._opener.open(request, timeout=timeout or self._timeout) as response:
                answer: dict[str, Any] = json.loads(response.read() or b"{}")
                return answer
        except urllib.error.HTTPError as error:
            self._refused(error)
        except urllib.error.URLError as error:  # never reached: nothing was asked of it
            raise ApiError(0, "Unreachable", f"{url}: {error.reason}") from None
        except TimeoutError:  # asked, and still at it when the wait ran out
            raise ApiError(
                0, "Timeout", f"{url}: no answer within {timeout or self._timeout:g}s"
            ) from None
        except (http.client.HTTPException, OSError) as error:  # it hung up mid-call
            raise ApiError(
                0, "Disconnected", f"{url}: hung up without an answer ({error!r})"
            ) from None

    @staticmethod
    def _refused(error: urllib.error.HTTPError) -> NoReturn:
        try:
            text = error.read().decode("utf-8", errors="replace")
        except (http.client.HTTPException, OSError):  # the refusal's body cut short
            text = ""
        try:
            refusal = json.loads(text)
        except ValueError:
            refusal = {"message": text}
        raise ApiError(
            error.code, str(refusal.get("error", error.reason)), str(refusal.get("message"))
        ) from None
