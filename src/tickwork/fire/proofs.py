"""Ticks and failure reports the tick handler can trust: proved by the fulfill step under a
key derived from the stack's seal key, checked before anything is recorded."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from tickwork.domain.errors import ForgedReport
from tickwork.domain.execution import name_of
from tickwork.domain.fire import CaughtFailure, FireFailure, FireOrder, Tick
from tickwork.fire.needs import Names
from tickwork.fire.orders import check_lone
from tickwork.integrity.fire_proof import PROOF_FIELD, proof_key, proof_of, proven

__all__ = [
    "MAX_CAUSE",
    "caught_failure",
    "check_proof",
    "prove_failure",
    "proved_failure",
    "with_proof",
]

# A report's cause is cut to this: the report is also the cause of the execution's FireFailed
# ending, which Step Functions holds to 32,768 characters.
MAX_CAUSE = 8 * 1024


def _key(deps: Names) -> bytes | None:
    seal_key = deps.secret(deps.settings.seal_secret_id)
    return None if seal_key is None else proof_key(seal_key)


def with_proof(tick: Tick, deps: Names) -> Tick:
    key = _key(deps)
    return tick if key is None else replace(tick, proof=proof_of(key, tick.to_wire()))


def prove_failure(
    report: CaughtFailure, execution_arn: str, deps: Names, failed_at: datetime | None = None
) -> FireFailure:
    """The fire machine's "Prove failure" step: the report of a fire that failed past its
    retries, proved — only when its order is one the stack issued for that execution
    (``ForgedOrder`` otherwise: a report is never made for an input anyone could write).
    ``failed_at``: when its last attempt ended (the step runs right after the Catch)."""
    check_lone(report.order, execution_arn, deps)
    return proved_failure(report, execution_arn, deps, failed_at)


def caught_failure(
    order: FireOrder,
    error: str,
    cause: str | None,
    execution_arn: str,
    deps: Names,
    failed_at: datetime | None = None,
) -> FireFailure:
    """The proved report the fire machine's Catch and "Prove failure" make of a fire that failed
    with ``error`` (``cause``): for a task that records failures itself (a batch's, a retry
    rebuilding one from the record)."""
    return proved_failure(CaughtFailure(order, error, cause), execution_arn, deps, failed_at)


def proved_failure(
    report: CaughtFailure, execution_arn: str, deps: Names, failed_at: datetime | None = None
) -> FireFailure:
    """The Schedule Failed detail of a fire that failed past its retries, with its proof: the
    state machine's Catch hands the fire's input and its error (``$.error``) here (the handler
    has checked the input is an order the stack issued for that execution)."""
    order = report.order
    failure = FireFailure(
        action_id=order.action_id,
        generation=order.generation,
        occurrence=order.occurrence,
        scheduled_time=order.fire_at,
        execution_name=name_of(execution_arn),
        execution_arn=execution_arn,
        error=report.error[:256],
        cause=None if report.cause is None else report.cause[:MAX_CAUSE],
        manual=order.manual,
        trigger=order.trigger,
        failed_at=failed_at,
    )
    key = _key(deps)
    return failure if key is None else replace(failure, proof=proof_of(key, failure.to_wire()))


def check_proof(detail_type: str, detail: Any, deps: Names) -> None:
    """Refuse a report no fire of this stack made (when the stack has a seal key)."""
    key = _key(deps)
    if key is None:
        return
    if not isinstance(detail, dict) or not detail.get(PROOF_FIELD):
        raise ForgedReport(detail_type, "carries no proof")
    if not proven(key, detail):
        raise ForgedReport(detail_type, "carries a proof that does not match it")
