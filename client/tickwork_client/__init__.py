"""tickwork's publisher client: schedule, steer and read back actions from a team's service.

    import boto3
    from datetime import timedelta
    from tickwork_client import TickworkClient, cron

    client = TickworkClient(boto3.client("events"), bus_name="tickwork-bus")
    sent = client.schedule("invoice:42", when=timedelta(minutes=5), action="TICK")
    sent.event_id, sent.action_id, sent.next_fires

A bad request raises ``ValidationFailed`` (``.problems``: each field, what is wrong, the fix)
before anything is published. See the README's "Publishing from a service".
"""

from tickwork.domain.errors import FieldProblem, ValidationFailed
from tickwork_client.publisher import BusRefused, Published, TickworkClient, check_start_detail
from tickwork_client.stack_api import ApiError, BearerSigner, SigV4Signer, StackApi
from tickwork_client.when import When, at, cron, every, rate

__all__ = [
    "ApiError",
    "BearerSigner",
    "BusRefused",
    "FieldProblem",
    "Published",
    "SigV4Signer",
    "StackApi",
    "TickworkClient",
    "ValidationFailed",
    "When",
    "at",
    "check_start_detail",
    "cron",
    "every",
    "rate",
]
