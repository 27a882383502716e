"""A request the emulator answers in this process is not signed.

Found: ``botocore/signers.py``, ``RequestSigner.handler``, signs every request (SigV4, through
awscrt) before it is sent: about a seventh of an in-process call's cost, for a signature moto
never checks. moto reads only the ``Authorization`` header's credential: the access key picks
the account (an assumed role's key, its role's account) and the scope the region.

Replaced: a request moto answers in this process — ``mock_aws`` on (its ``botocore_stubber``
enabled), to an AWS host with no port of its own, with no passthrough configured — gets the
header a signature would carry, credential and scope as the signer would write them, with a
signature not computed (``Signature=0``), and the session token beside it. Any other request is
signed as before: one to an endpoint URL of its own (``tickwork local``'s port, served by moto's
server), one moto passes through to the network, a presigned URL (``sign`` called directly), and
anything signed with ``botocore.auth`` by hand (the local API's SigV4, an HTTP target).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

__all__ = ["in_process_requests_unsigned"]


@contextmanager
def in_process_requests_unsigned() -> Iterator[None]:
    from botocore.signers import RequestSigner
    from moto.core.config import default_user_config
    from moto.core.models import botocore_stubber

    sign = RequestSigner.handler

    def handler(signer: Any, operation_name: Any = None, request: Any = None, **kwargs: Any) -> Any:
        if (
            botocore_stubber.enabled
            and request is not None
            and _answered_here(request.url, default_user_config)
        ):
            _credential_without_signature(signer, request)
            return None
        return sign(signer, operation_name, request, **kwargs)

    with mock.patch.object(RequestSigner, "handler", handler):
        yield


def _answered_here(url: str, config: Any) -> bool:
    """Whether moto answers ``url`` in this process, under its ``config`` (mock_aws's)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    passthrough = config.get("core", {}).get("passthrough", {})
    return (
        host.endswith(".amazonaws.com")
        and parts.port is None
        and not passthrough.get("services")
        and not passthrough.get("urls")
    )


def _credential_without_signature(signer: Any, request: Any) -> None:
    credentials = signer._credentials
    if credentials is None:  # an anonymous client: nothing to say who it is
        return
    frozen = credentials.get_frozen_credentials()
    day = datetime.now(UTC).strftime("%Y%m%d")
    scope = f"{day}/{signer._region_name}/{signer._signing_name}/aws4_request"
    request.headers["Authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={frozen.access_key}/{scope}, SignedHeaders=host, Signature=0"
    )
    if frozen.token:
        request.headers["X-Amz-Security-Token"] = frozen.token
