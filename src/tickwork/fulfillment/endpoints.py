"""Where an SQS queue answers, and the message group a FIFO queue is given: plain Python, so
that the functions that load no pydantic at a cold start (the tick and reconciler functions
send dead letters) share them with the action types."""

from __future__ import annotations

import hashlib

__all__ = ["PARTITION_DOMAINS", "fifo_group", "queue_url"]

PARTITION_DOMAINS = {
    "aws": "amazonaws.com",
    "aws-cn": "amazonaws.com.cn",
    "aws-us-gov": "amazonaws.com",
}
_MAX_GROUP_ID = 128  # SQS's MessageGroupId


def queue_url(partition: str, region: str, account: str, name: str) -> str:
    """The URL SQS takes for the queue ``name`` of ``account`` in ``region``."""
    return f"https://sqs.{region}.{PARTITION_DOMAINS[partition]}/{account}/{name}"


def fifo_group(given: str | None, action_id: str) -> str:
    """A FIFO message group: the one given, else the action's id (ids can be longer)."""
    group = given or action_id
    if len(group) <= _MAX_GROUP_ID:
        return group
    return hashlib.sha256(group.encode()).hexdigest()
