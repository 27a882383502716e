"""Orders: the inputs of the stack's executions, issued (proved) where they are started, and
checked before anything fires. docs/protocol.md, "What an order must prove".

Every execution the stack starts goes through ``start_lone`` or ``start_batch``: the order is
proved for that machine and that execution name (``integrity.order_proof``) and then started.
The fulfill step calls ``check_lone`` or ``check_batch`` first: an order without a proof, or
with one made for another execution or machine, or a batch listing one action twice, is refused
as ``ForgedOrder`` — a ``Schedule Tampered`` event names it, and nothing fires. What the record
says (the fire time, the claim) is checked by the fulfill step itself, against the record.

An execution's kind is its machine (``kind_of``): never its name, which an action id can shape.
"""

from __future__ import annotations

from dataclasses import replace

from tickwork.dependencies import Dependencies
from tickwork.domain.announcements import Tampered
from tickwork.domain.batch import BatchOrder
from tickwork.domain.errors import ForgedOrder
from tickwork.domain.execution import Machine, name_of
from tickwork.domain.fire import FireOrder
from tickwork.integrity.order_proof import order_proof, order_proof_key, order_proven

__all__ = ["check_batch", "check_lone", "kind_of", "start_batch", "start_lone"]


def kind_of(execution_arn: str | None, deps: Dependencies) -> Machine | None:
    """Which of the stack's machines the execution belongs to (None: neither, or no ARN)."""
    if not execution_arn:
        return None
    if deps.executions.owns(execution_arn):
        return Machine.FIRE
    if deps.settings.batch_state_machine_arn is not None and deps.batches.owns(execution_arn):
        return Machine.BATCH
    return None


def start_lone(name: str, order: FireOrder, deps: Dependencies) -> str:
    """Start the fire machine's execution ``name`` with ``order``, proved: its ARN. Starting one
    that exists is harmless; refused for room: ``LaunchRefused``."""
    key = _key(deps)
    if key is not None:
        order = replace(order, proof=order_proof(key, Machine.FIRE, name, order.to_wire()))
    return deps.executions.start(name, order)


def start_batch(name: str, order: BatchOrder, deps: Dependencies) -> str:
    """Start the batch machine's execution ``name`` with ``order``, proved: its ARN."""
    key = _key(deps)
    if key is not None:
        order = replace(order, proof=order_proof(key, Machine.BATCH, name, order.to_wire()))
    return deps.batches.start(name, order)


def check_lone(order: FireOrder, execution_arn: str, deps: Dependencies) -> None:
    """Refuse (``ForgedOrder``, announced) a lone execution's order the stack did not issue for
    it. With no seal key configured (unit tests only) there is nothing to prove with."""
    key = _key(deps)
    name = name_of(execution_arn)
    if key is None or order_proven(key, Machine.FIRE, name, order.to_wire()):
        return
    problem = "its input carries no proof" if not order.proof else "its input's proof does not hold"
    refused = ForgedOrder(execution_arn, f"{problem}: the stack did not start it with this order")
    deps.publisher.publish(
        Tampered(order.action_id, order.generation, order.occurrence, str(refused), execution_arn)
    )
    raise refused


def check_batch(order: BatchOrder, execution_arn: str, deps: Dependencies) -> None:
    """Refuse (``ForgedOrder``, announced for each action it lists) a batch order the stack did
    not issue for this execution, or one that lists an action twice."""
    key = _key(deps)
    name = name_of(execution_arn)
    twice = order.listed_twice()
    if twice:
        problem = f"its input lists {', '.join(twice[:5])} more than once"
    elif key is None or order_proven(key, Machine.BATCH, name, order.to_wire()):
        return
    elif not order.proof:
        problem = "its input carries no proof"
    else:
        problem = "its input's proof does not hold"
    refused = ForgedOrder(execution_arn, f"{problem}: the stack did not start it with this order")
    listed = {m.action_id: m for m in reversed(order.members)}  # the first listing of each
    deps.publisher.publish_all(
        [
            Tampered(m.action_id, m.generation, m.occurrence, str(refused), execution_arn)
            for _, m in sorted(listed.items())
        ]
    )
    raise refused


def _key(deps: Dependencies) -> bytes | None:
    seal_key = deps.secret(deps.settings.seal_secret_id)
    return None if seal_key is None else order_proof_key(seal_key)
