"""``tickwork dashboard``: a stack's dashboard and /docs on this machine, the API kept IAM-only.

The deployed API authorises every route with IAM (SigV4), which a browser cannot sign. This
serves the pages on 127.0.0.1 and forwards each API call the page makes to the stack's API,
signed with *your* AWS credentials (botocore's SigV4, service ``execute-api``) — so what you
may do is what your IAM policy allows, and no credential ever reaches the browser.

The proxy itself is guarded like the local API: it binds loopback only, answers only requests
addressed to it by name (``Host`` 127.0.0.1 or localhost: no DNS rebinding), and forwards an API
call only with the random token of the link it prints (``#token=``). It never follows a
redirect and uses no proxy from the environment.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tickwork_client.stack_api import BearerSigner, Signer, SigV4Signer

__all__ = ["BearerSigner", "SigV4Signer", "Signer", "serving_dashboard"]

LOOPBACK = "127.0.0.1"
# How often the server looks whether it is asked to stop (socketserver's default is 0.5 s).
SHUTDOWN_POLL = 0.05
_PAGES = ("/", "/index.html", "/docs")
_ASSETS = "/docs-assets/"
_FORWARDED_REQUEST_HEADERS = ("content-type", "accept")
_FORWARDED_RESPONSE_HEADERS = ("content-type", "cache-control", "location")
_TIMEOUT_SECONDS = 30


def _refusal(status: int, field: str, problem: str, fix: str) -> tuple[int, bytes]:
    body = {
        "error": "Unauthorized" if status == 401 else "Forbidden",
        "message": f"{field}: {problem}",
        "problems": [{"field": field, "problem": problem, "fix": fix}],
    }
    return status, json.dumps(body).encode()


@contextmanager
def serving_dashboard(
    api_url: str, sign: Signer, port: int | None = None, token: str | None = None
) -> Iterator[tuple[str, str]]:
    """Serve the proxy; yields (its URL, its token). ``api_url`` is the stack's ApiUrl."""
    key = token or secrets.token_urlsafe(24)
    base = api_url.rstrip("/")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)
    served: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            refused = self._refused()
            if refused is not None:
                self._send(*refused, {"Content-Type": "application/json"})
                return
            if not self.path.startswith("/") or self.path.startswith("//"):
                self._send(400, b'{"message": "a path on this server"}', {})
                return
            forwarded = {
                name: value
                for name, value in self.headers.items()
                if name.lower() in _FORWARDED_REQUEST_HEADERS
            }
            url = base + self.path
            signed = sign(self.command, url, forwarded, body)
            request = urllib.request.Request(
                url, data=body or None, headers=signed, method=self.command
            )
            try:
                with opener.open(request, timeout=_TIMEOUT_SECONDS) as response:
                    self._relay(response.status, response.headers, response.read())
            except urllib.error.HTTPError as error:
                with error:
                    self._relay(error.code, error.headers, error.read())
            except OSError as error:
                problem = f"the stack's API at {base} did not answer: {error}"
                message = json.dumps({"error": "BadGateway", "message": problem, "problems": []})
                self._send(502, message.encode(), {"Content-Type": "application/json"})

        def _refused(self) -> tuple[int, bytes] | None:
            host = self.headers.get("Host", "")
            if host not in (served["host"], f"localhost:{served['port']}"):
                return _refusal(
                    403, "Host", f"{host!r} is not this proxy", f"open {served['url']}/ itself"
                )
            path = urlsplit(self.path).path
            if self.command == "GET" and (path in _PAGES or path.startswith(_ASSETS)):
                return None  # the pages hold no data: their calls carry the token
            scheme, _, value = self.headers.get("Authorization", "").partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(value.strip(), key):
                return None
            return _refusal(
                401,
                "Authorization",
                "is missing or not this dashboard's token",
                "open the link `tickwork dashboard` printed (it ends in #token=...)",
            )

        def _relay(self, status: int, headers: Any, data: bytes) -> None:
            kept = {k: v for k, v in headers.items() if k.lower() in _FORWARDED_RESPONSE_HEADERS}
            self._send(status, data, kept)

        def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((LOOPBACK, port or 0), Handler)
    bound = int(server.server_address[1])
    served.update(host=f"{LOOPBACK}:{bound}", port=str(bound), url=f"http://{LOOPBACK}:{bound}")
    thread = threading.Thread(
        target=server.serve_forever, args=(SHUTDOWN_POLL,), name="dashboard", daemon=True
    )
    thread.start()
    try:
        yield served["url"], key
    finally:
        server.shutdown()
        server.server_close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None
