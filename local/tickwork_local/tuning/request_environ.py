"""An in-process request reaches moto's handlers without werkzeug's test-client builder.

Found: ``moto/core/request.py``, ``Request.from_primitives``, turns each request botocore sends
to the in-process emulator into a werkzeug request through ``Request.from_values`` — werkzeug's
``EnvironBuilder``, a test client's tool that parses the URL twice, builds a header map and
copies it, and re-encodes the path and the host (``iri_to_uri``). About a sixth of an
in-process call's cost to the emulator.

Replaced: ``from_primitives`` writes the WSGI environ itself for the requests botocore sends —
a non-empty body, an http(s) URL whose host, path and query ``EnvironBuilder`` would leave as
they are (lowercase ASCII host with an optional port, a path of the characters ``iri_to_uri``
keeps and no percent sign, an ASCII query), header values without a line break. Any other
request goes through moto's own ``from_primitives``. The environ is the one ``EnvironBuilder``
writes, key for key: tests/functional/test_emulator_tuning.py holds the two to each other over
generated requests.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from typing import Any
from unittest import mock
from urllib.parse import urlparse

__all__ = ["requests_built_directly"]

_HOST = re.compile(r"(?:[a-z0-9-]{1,63}\.)*[a-z0-9-]{1,63}(?::([1-9][0-9]{0,4}))?\Z")
_PATH = re.compile(r"/[A-Za-z0-9_.~!$&'()*+,/:;=@-]*\Z")  # what iri_to_uri keeps; no "%"


@contextmanager
def requests_built_directly() -> Iterator[None]:
    from moto.core import request as moto_request

    Request = moto_request.Request
    built_by_moto = Request.__dict__["from_primitives"].__func__

    def from_primitives(cls: Any, method: str, url: str, headers: Any, body: Any = None) -> Any:
        environ = _environ(moto_request, method, url, headers, body)
        if environ is None:
            return built_by_moto(cls, method, url, headers, body)
        return cls(environ)

    with mock.patch.object(Request, "from_primitives", classmethod(from_primitives)):
        yield


def _environ(
    moto_request: Any, method: str, url: str, headers: Any, body: Any
) -> dict[str, Any] | None:
    """The environ ``EnvironBuilder`` writes for this request (with the two additions of
    ``moto_request``, moto's module), or None where it might write another."""
    if isinstance(body, str):
        body = body.encode()
    if not isinstance(body, bytes) or not body:
        return None
    parsed = urlparse(url)
    host, path, query = parsed.netloc, parsed.path, parsed.query
    if parsed.scheme not in ("http", "https") or not query.isascii():
        return None
    found = _HOST.match(host)
    if found is None or _PATH.match(path) is None or path.startswith("//"):
        return None
    port = found.group(1)
    if port is not None and int(port) > 65535:
        return None
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "REQUEST_URI": path,
        "RAW_URI": path,
        "SERVER_NAME": host.partition(":")[0],
        "SERVER_PORT": port or ("443" if parsed.scheme == "https" else "80"),
        "HTTP_HOST": host,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": parsed.scheme,
        "wsgi.input": BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    content_type = None
    combined: dict[str, list[str]] = {}
    preserved: dict[str, str] = {}  # moto's: the original spelling of an S3 metadata header
    for key, value in headers.items():
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if not isinstance(key, str) or not isinstance(value, str):
            return None
        if "\n" in value or "\r" in value:
            return None  # werkzeug refuses it: moto's own path says so
        if moto_request.should_preserve_original_header_name(key):
            preserved[moto_request.environ_key_for_header(key)] = key
        lower = key.lower()
        if lower in ("transfer-encoding", "content-length"):
            continue  # moto leaves out the one; werkzeug writes the other from the body
        if lower == "content-type":
            if content_type is None:
                content_type = value
            continue
        combined.setdefault(f"HTTP_{key.upper().replace('-', '_')}", []).append(value)
    if content_type is not None:
        environ["CONTENT_TYPE"] = content_type
    environ["CONTENT_LENGTH"] = str(len(body))
    for name, values in combined.items():
        environ[name] = ", ".join(values)
    environ[moto_request.PRESERVED_HEADER_NAMES_ENVIRON_KEY] = preserved
    return environ
