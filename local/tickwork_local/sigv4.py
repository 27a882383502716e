"""Checking AWS Signature Version 4 on a request, as API Gateway does for a route with IAM
authorisation: so the local API can stand in for a deployed one (``tickwork local --api-auth
sigv4``) and ``tickwork dashboard``'s signing proxy is tested against a real check.

The signature is computed again with botocore's own signer from the request as received —
method, path, query, the headers the client says it signed, the body — and the secret of the
access key it names; the scope must be this region and service, the time within 5 minutes.
"""

from __future__ import annotations

import hmac
import re
from datetime import UTC, datetime
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

__all__ = ["SigV4Verifier"]

_AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, ?SignedHeaders=(?P<signed>[a-z0-9;-]+), ?"
    r"Signature=(?P<signature>[0-9a-f]{64})"
)
_SKEW_SECONDS = 300


class SigV4Verifier:
    def __init__(self, secrets: dict[str, str], region: str, service: str = "execute-api") -> None:
        self._secrets = dict(secrets)  # access key id → secret access key
        self._region = region
        self._service = service

    def refusal(
        self, method: str, url: str, headers: dict[str, str], body: bytes, now: datetime
    ) -> str | None:
        """Why the request is not signed by a known key for this API; None when it is."""
        lowered = {name.lower(): value for name, value in headers.items()}
        match = _AUTHORIZATION.fullmatch(lowered.get("authorization", "").strip())
        if match is None:
            return "Missing Authentication Token: sign the request with SigV4 (execute-api)"
        secret = self._secrets.get(match["key"])
        if secret is None:
            return f"The security token included in the request is invalid: {match['key']}"
        if (match["region"], match["service"]) != (self._region, self._service):
            return f"Credential should be scoped to {self._region}/{self._service}"
        stamp = lowered.get("x-amz-date", "")
        try:
            signed_at = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        except ValueError:
            return "Signature expired or missing X-Amz-Date"
        if stamp[:8] != match["date"] or abs((now - signed_at).total_seconds()) > _SKEW_SECONDS:
            return "Signature expired: is now earlier or later than the signed date +/- 5 min"
        names = match["signed"].split(";")
        if "host" not in names or any(name not in lowered for name in names):
            return "SignedHeaders must include host and name only headers the request has"
        expected = self._signature(method, url, lowered, names, body, secret, match["key"])
        if not hmac.compare_digest(expected, match["signature"]):
            return "The request signature we calculated does not match the signature you provided"
        return None

    def _signature(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        names: list[str],
        body: bytes,
        secret: str,
        key: str,
    ) -> str:
        request = AWSRequest(
            method=method, url=url, data=body, headers={name: headers[name] for name in names}
        )
        request.context["timestamp"] = headers["x-amz-date"]
        token = headers.get("x-amz-security-token")
        signer: Any = SigV4Auth(Credentials(key, secret, token), self._service, self._region)
        canonical = signer.canonical_request(request)
        return str(signer.signature(signer.string_to_sign(request, canonical), request))
