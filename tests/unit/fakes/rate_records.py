"""A recurrence's record waiting for one of its fires, built directly (no stores): for the
tests that drive the record's transitions and its item by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tickwork.domain.action import Action, Status
from tickwork.domain.fire_policy import NO_POLICY, FirePolicy
from tickwork.domain.schedule import Schedule

__all__ = ["T0", "execution_arn", "waiting_on_a_rate"]

T0 = datetime(2026, 3, 1, 8, tzinfo=UTC)  # the rate's first fire


def execution_arn(action_id: str, occurrence: int) -> str:
    """A lone execution's ARN as the stack names them (a digest, the generation, the fire)."""
    name = f"{action_id}-0123456789abcdef-g1-o{occurrence}"
    return f"arn:aws:states:us-east-1:123456789012:execution:t-fire:{name}"


def waiting_on_a_rate(
    period: int,
    occurrence: int,
    action_id: str = "a",
    group: str = "default",
    policy: FirePolicy = NO_POLICY,
) -> Action:
    """``action_id`` every ``period`` seconds from ``T0``, PENDING at its ``occurrence``-th fire,
    which names its execution."""
    return Action(
        id=action_id,
        action="TICK",
        data={},
        metadata={},
        status=Status.PENDING,
        schedule=Schedule.of_rate(f"rate({period} seconds)", T0),
        execution_time=T0 + timedelta(seconds=period * (occurrence - 1)),
        occurrence=occurrence,
        generation=1,
        version=3,
        created_at=T0,
        updated_at=T0,
        spec_hash="h",
        group=group,
        execution_arn=execution_arn(action_id, occurrence),
        policy=policy,
    )
