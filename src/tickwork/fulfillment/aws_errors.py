"""What an AWS service's refusal means for a fire: try again later, or never.

Throttling, 5xx and lost connections are transient: the state machine retries them with
backoff. Access denied, a target that does not exist and a request the service calls invalid
are permanent: no retry can fix them, so the fire is recorded FAILED with the service's own
message.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError, ConnectionError, ReadTimeoutError

from tickwork.domain.errors import PermanentFulfillmentError, TransientFulfillmentError

__all__ = ["TRANSIENT_CODES", "classified", "code_is_transient"]

TRANSIENT_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "ProvisionedThroughputExceededException",
        "SlowDown",
        "KMSThrottlingException",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "ServiceException",
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "InternalServiceError",
        "EC2ThrottledException",
        "ResourceConflictException",  # Lambda: the function is being updated
        "ResourceNotReadyException",
        "OverLimit",  # SQS: too many messages in flight
        "ExecutionLimitExceeded",  # Step Functions: the machine's open executions at the quota
        "LimitExceededException",  # EventBridge: PutEvents over the account's rate
    }
)


def code_is_transient(code: str, status: int = 0) -> bool:
    return code in TRANSIENT_CODES or status >= 500 or "Throttl" in code


def classified(error: Exception, target: str) -> Exception:
    """The fulfillment error to raise for ``error`` from the call to ``target``."""
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        code = str(details.get("Code", "Unknown"))
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        message = f"{target}: {code}: {details.get('Message', '')}".rstrip(": ")
        if code_is_transient(code, status):
            return TransientFulfillmentError(message)
        return PermanentFulfillmentError(message)
    if isinstance(error, ConnectionError | ReadTimeoutError):
        return TransientFulfillmentError(f"{target}: {type(error).__name__}: {error}")
    if isinstance(error, BotoCoreError):
        return PermanentFulfillmentError(f"{target}: {type(error).__name__}: {error}")
    return error
