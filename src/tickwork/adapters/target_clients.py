"""Clients for an action's target: with the fulfill function's own role (the stack's allow-list
of target ARNs), or — as EventBridge Scheduler runs a schedule under its own execution role —
with the action's ``roleArn``, assumed through STS and kept until shortly before it expires."""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any

from tickwork.adapters.clients import AwsClients
from tickwork.fulfillment.aws_errors import classified

if TYPE_CHECKING:
    from botocore.config import Config

__all__ = ["TargetClients"]

_SESSION_SECONDS = 900
_RENEW_BEFORE_SECONDS = 300
_READ_SECONDS = 45


def target_config() -> Config:
    """One attempt per call: the state machine's Retry (RetryMaxAttempts, backoff with jitter)
    is the one retry policy of a fire, and each attempt is recorded. A read stays inside the
    fulfill function's 60 s timeout, so a slow target is a classified, retried timeout."""
    from botocore.config import Config

    return Config(
        retries={"mode": "standard", "total_max_attempts": 1},
        connect_timeout=5,
        read_timeout=_READ_SECONDS,
    )


class TargetClients:
    def __init__(self, clients: AwsClients) -> None:
        self._base = clients
        self._own: AwsClients | None = None  # made at the first target call, not a cold start
        self._assumed: dict[str, tuple[float, AwsClients]] = {}
        self._lock = threading.Lock()

    @property
    def _clients(self) -> AwsClients:
        with self._lock:
            if self._own is None:
                self._own = self._base.configured(target_config())
            return self._own

    def client(self, service: str, role_arn: str | None = None) -> Any:
        if role_arn is None:
            return self._clients.client(service)
        return self._role(role_arn).client(service)

    def _role(self, role_arn: str) -> AwsClients:
        with self._lock:
            known = self._assumed.get(role_arn)
            if known is not None and known[0] - _RENEW_BEFORE_SECONDS > time.time():
                return known[1]
        try:
            answer = self._clients.client("sts").assume_role(
                RoleArn=role_arn,
                RoleSessionName=_session_name(role_arn),
                DurationSeconds=_SESSION_SECONDS,
            )
        except Exception as error:
            raise classified(error, f"assume {role_arn}") from error
        credentials = answer["Credentials"]
        import boto3  # here: only an action with a roleArn pays for a session of its own

        session = boto3.Session(
            aws_access_key_id=credentials["AccessKeyId"],
            aws_secret_access_key=credentials["SecretAccessKey"],
            aws_session_token=credentials["SessionToken"],
        )
        assumed = self._clients.for_session(session)
        with self._lock:
            self._assumed[role_arn] = (credentials["Expiration"].timestamp(), assumed)
        return assumed


def _session_name(role_arn: str) -> str:
    return ("tickwork-" + re.sub(r"[^\w+=,.@-]", "-", role_arn.rsplit("/", 1)[-1]))[:64]
