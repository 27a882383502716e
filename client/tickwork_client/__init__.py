"""tickwork's publisher client: schedule, steer and read back actions from a team's service.

    import boto3
    from datetime import timedelta
    from tickwork_client import TickworkClient, cron

    client = TickworkClient(boto3.client("events"), bus_name="tickwork-bus")
    sent = client.schedule("invoice:42", when=timedelta(minutes=5), action="TICK")
    sent.event_id, sent.action_id, sent.next_fires

A bad request raises ``ValidationFailed`` (``.problems``: each field, what is wrong, the fix)
before anything is published. ``TickworkClient.for_local()`` finds the local stack;
``verify_signature`` checks a webhook's ``X-Tickwork-Signature``. Installed on its own with
``pip install ./client`` (the ``tickwork-client`` distribution). See the README's "Publishing
from a service".
"""

from tickwork.domain.errors import FieldProblem, ValidationFailed
from tickwork.integrity.signature import SIGNATURE_HEADER, verify_signature
from tickwork_client.local import LocalStackInfo, LocalStackNotFound, find_local_stack
from tickwork_client.publisher import (
    BusRefused,
    Published,
    StartRefused,
    TickworkClient,
    check_start_detail,
)
from tickwork_client.stack_api import ApiError, BearerSigner, SigV4Signer, StackApi
from tickwork_client.views import (
    ActionPage,
    ActionSummary,
    ActionView,
    FireView,
    OccurrenceView,
    OutboxMessage,
    RejectionView,
    StatsView,
    TransitionView,
)
from tickwork_client.when import When, at, cron, every, rate

__all__ = [
    "SIGNATURE_HEADER",
    "ActionPage",
    "ActionSummary",
    "ActionView",
    "ApiError",
    "BearerSigner",
    "BusRefused",
    "FieldProblem",
    "FireView",
    "LocalStackInfo",
    "LocalStackNotFound",
    "OccurrenceView",
    "OutboxMessage",
    "Published",
    "RejectionView",
    "SigV4Signer",
    "StackApi",
    "StartRefused",
    "StatsView",
    "TickworkClient",
    "TransitionView",
    "ValidationFailed",
    "When",
    "at",
    "check_start_detail",
    "cron",
    "every",
    "find_local_stack",
    "rate",
    "verify_signature",
]
