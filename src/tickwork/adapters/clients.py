"""One boto3 client per AWS service for a container, each made at its first use.

A function's cold start then pays only for the clients its first invocation calls, and two
adapters of one service (the actions table and the slots table) share one client. The CLI
passes its own session (a profile, or the local emulator's credentials) and endpoint.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from boto3 import Session
    from botocore.config import Config
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["CONNECTIONS", "AwsClients", "OnTable"]

# Connections each client keeps open: a batch task calls AWS from one thread per fire (at most
# 100 at once), which botocore's default pool of 10 would make open and drop connections.
CONNECTIONS = 100


class AwsClients:
    def __init__(
        self,
        session: Session | None = None,
        endpoint_url: str | None = None,
        config: Config | None = None,
    ) -> None:
        self._session = session
        self._endpoint_url = endpoint_url
        self._config = config
        self._made: dict[str, Any] = {}
        self._lock = threading.Lock()

    def configured(self, config: Config) -> AwsClients:
        """Clients of the same session and endpoint, made with ``config`` (retries, timeouts)."""
        return AwsClients(self._session, self._endpoint_url, config)

    def for_session(self, session: Session) -> AwsClients:
        """Clients of another session (an assumed role's), at the same endpoint and config."""
        return AwsClients(session, self._endpoint_url, self._config)

    def client(self, service: str) -> Any:
        return self._once(service, lambda session: session.client(service, **self._where()))

    def table(self, name: str) -> Table:
        """A DynamoDB Table resource, made once per name (making one builds its class from the
        resource model: ~1 ms, once per call before). Only its actions are used (get, put,
        query), which go through the resource's one thread-safe client."""
        resource = self._once(
            "dynamodb-resource", lambda session: session.resource("dynamodb", **self._where())
        )
        table: Table = self._once(f"dynamodb-table:{name}", lambda _: resource.Table(name))
        return table

    def _where(self) -> dict[str, Any]:
        from botocore.config import Config  # with the first client: boto3 imports it anyway

        where: dict[str, Any] = {"endpoint_url": self._endpoint_url} if self._endpoint_url else {}
        pool = Config(max_pool_connections=CONNECTIONS)
        where["config"] = pool if self._config is None else pool.merge(self._config)
        return where

    def _once(self, key: str, make: Callable[[Any], Any]) -> Any:
        with self._lock:
            if key not in self._made:
                if self._session is None:
                    import boto3  # at the first call: a cold start that makes no client skips it

                    self._made[key] = make(boto3)
                else:
                    self._made[key] = make(self._session)
            return self._made[key]


class OnTable:
    """Base of an adapter over one DynamoDB table: the table given (tests), or one made by the
    container's clients at the first call."""

    def __init__(
        self, table_name: str, table: Table | None = None, clients: AwsClients | None = None
    ) -> None:
        self._name = table_name
        self._given = table
        self._clients = clients or AwsClients()

    @property
    def _table(self) -> Table:
        return self._given or self._clients.table(self._name)
