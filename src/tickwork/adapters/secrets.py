"""SecretSource over AWS Secrets Manager, read through Powertools parameters with caching.

The stack generates its keys as Secrets Manager secrets (CloudFormation's GenerateSecretString:
no value ever appears in the template, the repo or a parameter), and each function reads the
ones it needs by ARN. Values are cached for ``max_age`` seconds per container, so a rotated
key is picked up within that time; they are never logged.
"""

from __future__ import annotations

from typing import Any

from tickwork.adapters.clients import AwsClients

__all__ = ["SecretsManagerSource"]


class SecretsManagerSource:
    def __init__(self, max_age_seconds: int = 300, clients: AwsClients | None = None) -> None:
        self._max_age = max_age_seconds
        self._clients = clients or AwsClients()
        self._provider: Any = None

    def get(self, secret_id: str) -> bytes:
        value = self._secrets().get(secret_id, max_age=self._max_age)
        return value.encode() if isinstance(value, str) else bytes(value)

    def _secrets(self) -> Any:
        """Built at the first read (only functions that seal or sign pay for it), on the
        default boto3 session like every other client of this container."""
        if self._provider is None:
            from aws_lambda_powertools.utilities.parameters import SecretsProvider

            self._provider = SecretsProvider(boto3_client=self._clients.client("secretsmanager"))
        return self._provider
