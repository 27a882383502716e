"""The HTTP API on a loopback port, as API Gateway (HTTP API, payload v2) would call the API
function: each request becomes a v2 event, the function runs in process, its response is sent.

Where the deployed API has IAM (SigV4) authorisation, the local one has a bearer token: with
``token`` set, every request but the dashboard's and the docs' pages (and the docs' assets)
must carry ``Authorization: Bearer <token>``, else 401 before the function runs. Asked to
(``verifier``), it checks SigV4 instead, on every request, as API Gateway does with IAM
authorisation: unsigned or badly signed, 403 before the function runs. It binds loopback only.
"""

from __future__ import annotations

import base64
import hmac
import json
import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tickwork.domain.errors import ValidationFailed
from tickwork_local.server import LOOPBACK, free_port
from tickwork_local.sigv4 import SigV4Verifier

__all__ = ["serving_api", "to_v2_event"]

Invoke = Callable[[dict[str, Any]], tuple[Any, str | None]]
# A route the local stack answers itself: given the query's fields and the JSON body (None
# when there is none); raises ValidationFailed for a 400.
LocalRoute = Callable[[dict[str, str], Any], Any]
_JSON = {"Content-Type": "application/json"}
# How often the server looks whether it is asked to stop (socketserver's default, 0.5 s, is
# what every stop would wait: a stack per test stops hundreds of times).
SHUTDOWN_POLL = 0.05
log = logging.getLogger(__name__)


def to_v2_event(
    method: str, target: str, headers: dict[str, str], body: bytes, stage: str = "$default"
) -> dict[str, Any]:
    """An API Gateway HTTP API (payload format 2.0) event for one request."""
    url = urlsplit(target)
    now = datetime.now(UTC)
    text = body.decode("utf-8", errors="replace") if body else None
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": url.path,
        "rawQueryString": url.query,
        "cookies": [],
        "headers": {k.lower(): v for k, v in headers.items()},
        "queryStringParameters": _query(url.query) or None,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "local",
            "domainName": headers.get("Host", LOOPBACK),
            "domainPrefix": "local",
            "requestId": str(uuid.uuid4()),
            "routeKey": "$default",
            "stage": stage,
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
            "http": {
                "method": method,
                "path": url.path,
                "protocol": "HTTP/1.1",
                "sourceIp": LOOPBACK,
                "userAgent": headers.get("User-Agent", ""),
            },
        },
        "pathParameters": None,
        "body": text,
        "isBase64Encoded": False,
    }


def _json_body(body: bytes) -> Any:
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        raise ValidationFailed.of(
            "body", "is not JSON", 'send a JSON object, e.g. {"advance": "30d"}'
        ) from None


def _query(raw: str) -> dict[str, str]:
    pairs = (part.partition("=") for part in raw.split("&") if part)
    return {unquote(k.replace("+", " ")): unquote(v.replace("+", " ")) for k, _, v in pairs}


_REFUSED = json.dumps(
    {
        "error": "Unauthorized",
        "message": "this local API needs its token",
        "problems": [
            {
                "field": "Authorization",
                "problem": "is missing or not this stack's token",
                "fix": "send 'Authorization: Bearer <token>': the token tickwork local printed "
                "at start (also in .tickwork/local.json as apiToken)",
            }
        ],
    }
).encode()


_ASSETS = "/docs-assets/"


def _authorised(method: str, target: str, headers: Any, token: str) -> bool:
    path = urlsplit(target).path
    if method == "GET" and (path in ("/", "/index.html", "/docs") or path.startswith(_ASSETS)):
        return True  # the dashboard's and the docs' pages hold no data; they send the token
    given = headers.get("Authorization", "")
    scheme, _, value = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip(), token)


@contextmanager
def serving_api(
    invoke: Invoke,
    port: int | None = None,
    token: str | None = None,
    verifier: SigV4Verifier | None = None,
    local_routes: dict[str, LocalRoute] | None = None,
    extra_headers: Callable[[], dict[str, str]] | None = None,
) -> Iterator[str]:
    """``local_routes``: "METHOD /path"s the local stack answers itself, beside the function's
    (its outbox, its time), behind the same token or signature. ``extra_headers()`` are sent
    with every answer (the stack's clock when it is virtual)."""
    # One request at a time through the function, as one Lambda container does: Powertools'
    # resolver keeps the current request on the shared app object.
    container = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = self.headers.get("Content-Length") or "0"
            if not length.isascii() or not length.isdigit():  # answered, never a dropped line
                bad_length = {"message": f"Content-Length {length!r} is not a byte count"}
                self.close_connection = True
                self._send(400, json.dumps(bad_length).encode(), _JSON)
                return
            body = self.rfile.read(int(length))
            if verifier is not None:
                url = f"http://{self.headers.get('Host', LOOPBACK)}{self.path}"
                refused = verifier.refusal(
                    self.command, url, dict(self.headers), body, datetime.now(UTC)
                )
                if refused:
                    message = json.dumps({"message": refused}).encode()
                    self._send(403, message, {"Content-Type": "application/json"})
                    return
            elif token is not None and not _authorised(
                self.command, self.path, self.headers, token
            ):
                self._send(401, _REFUSED, {"Content-Type": "application/json"})
                return
            target = urlsplit(self.path)
            route = (local_routes or {}).get(f"{self.command} {target.path}")
            if route is not None:
                query = {k: v[-1] for k, v in parse_qs(target.query).items()}
                try:
                    given = _json_body(body)
                    answer = json.dumps(route(query, given), default=str).encode()
                except ValidationFailed as refused:  # a field no route can take
                    problems = [p.as_dict() for p in refused.problems]
                    refusal = {"message": str(refused), "problems": problems}
                    self._send(400, json.dumps(refusal).encode(), _JSON)
                    return
                except Exception as failed:  # answered, never a dropped connection
                    log.exception("%s %s failed", self.command, target.path)
                    failure = {"message": str(failed), "errorType": type(failed).__name__}
                    self._send(500, json.dumps(failure).encode(), _JSON)
                    return
                self._send(200, answer, _JSON)
                return
            with container:
                result, error = invoke(
                    to_v2_event(self.command, self.path, dict(self.headers), body)
                )
            if error:
                result = {
                    "statusCode": 502,
                    "headers": {"Content-Type": "application/json"},
                    "body": json.dumps({"message": "Internal Server Error", "errorType": error}),
                }
            status = int(result.get("statusCode", 200))
            payload = result.get("body") or ""
            data = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
            self._send(status, data, result.get("headers") or {}, result.get("cookies") or [])

        def _send(
            self,
            status: int,
            data: bytes,
            headers: dict[str, Any],
            cookies: list[str] | None = None,
        ) -> None:
            self.send_response(status)
            if extra_headers is not None:
                headers = {**extra_headers(), **headers}
            for key, value in headers.items():
                self.send_header(key, str(value))
            for cookie in cookies or []:
                self.send_header("Set-Cookie", cookie)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = do_OPTIONS = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((LOOPBACK, port or free_port()), Handler)
    thread = threading.Thread(
        target=server.serve_forever, args=(SHUTDOWN_POLL,), name="http-api", daemon=True
    )
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
