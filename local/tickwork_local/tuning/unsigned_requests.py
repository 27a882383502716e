"""A request the emulator answers in this process is not signed.

Found: ``botocore/signers.py``, ``RequestSigner.handler``, signs every request (SigV4, through
awscrt) before it is sent: about a seventh of an in-process call's cost, for a signature moto
never checks (it reads only the access key, to pick the account, and takes the default account
for the local stack's key as for none).

Replaced: a request to an AWS endpoint while moto intercepts them (``mock_aws`` on, its
``botocore_stubber`` enabled) is not signed; any other is signed as before — one to an endpoint
URL of its own (``tickwork local``'s port, served by moto's server, which reads the service
from the signature) leaves the process. Presigned URLs (``sign`` called
directly) are signed as before, and so is anything signed with ``botocore.auth`` by hand (the
local API's SigV4, a request to an HTTP target).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

__all__ = ["in_process_requests_unsigned"]


@contextmanager
def in_process_requests_unsigned() -> Iterator[None]:
    from botocore.signers import RequestSigner
    from moto.core.models import botocore_stubber

    sign = RequestSigner.handler

    def handler(signer: Any, operation_name: Any = None, request: Any = None, **kwargs: Any) -> Any:
        if botocore_stubber.enabled and _aws_endpoint(request.url):
            return None
        return sign(signer, operation_name, request, **kwargs)

    with mock.patch.object(RequestSigner, "handler", handler):
        yield


def _aws_endpoint(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host.endswith(".amazonaws.com")
