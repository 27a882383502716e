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

from tickwork.domain.announcements import Tampered
from tickwork.domain.batch import BatchOrder
from tickwork.domain.errors import ForgedOrder, NameTaken
from tickwork.domain.execution import Machine, name_of
from tickwork.domain.fire import FireKey, FireOrder
from tickwork.fire.needs import Names
from tickwork.integrity.names import name_key
from tickwork.integrity.order_proof import order_proof, order_proof_key, order_proven
from tickwork.ports import AlreadyStarted

__all__ = [
    "check_batch",
    "check_lone",
    "kind_of",
    "names_key",
    "start_batch",
    "start_batch_listing",
    "start_lone",
]


def kind_of(execution_arn: str | None, deps: Names) -> Machine | None:
    """Which of the stack's machines the execution belongs to (None: neither, or no ARN)."""
    if not execution_arn:
        return None
    if deps.executions.owns(execution_arn):
        return Machine.FIRE
    if deps.settings.batch_state_machine_arn is not None and deps.batches.owns(execution_arn):
        return Machine.BATCH
    return None


def start_lone(name: str, order: FireOrder, deps: Names) -> str:
    """Start the fire machine's execution ``name`` with ``order``, proved: its ARN. Starting one
    that exists is harmless; refused for room: ``LaunchRefused``."""
    key = _key(deps)
    if key is not None:
        order = replace(order, proof=order_proof(key, Machine.FIRE, name, order.to_wire()))
    try:
        return deps.executions.start(name, order)
    except AlreadyStarted as found:
        _refuse_unless_ours(found, Machine.FIRE, key, [order.key], deps)
        return found.execution_arn


def start_batch(name: str, order: BatchOrder, deps: Names) -> str:
    """Start the batch machine's execution ``name`` with ``order``, proved: its ARN."""
    return start_batch_listing(name, order, deps)[0]


def start_batch_listing(
    name: str, order: BatchOrder, deps: Names
) -> tuple[str, frozenset[FireKey]]:
    """``start_batch``, and the fires the execution of that name lists: ``order``'s, or, when
    the stack had started it before, that start's (a follow-on started by a task's earlier
    attempt lists the members that had joined it then)."""
    key = _key(deps)
    if key is not None:
        order = replace(order, proof=order_proof(key, Machine.BATCH, name, order.to_wire()))
    listed = frozenset(m.key for m in order.members)
    try:
        return deps.batches.start(name, order), listed
    except AlreadyStarted as found:
        _refuse_unless_ours(found, Machine.BATCH, key, sorted(listed), deps)
        earlier = BatchOrder.from_wire(found.input)
        return found.execution_arn, frozenset(m.key for m in earlier.members)


def _refuse_unless_ours(
    found: AlreadyStarted,
    machine: Machine,
    key: bytes | None,
    fires: list[FireKey],
    deps: Names,
) -> None:
    """A start found its name taken: by the stack's own start of it (a repeat: its input is
    proved for that name, whatever order it carries), or by someone else — ``NameTaken``,
    announced for each fire it was meant for. Names are keyed, so the second is a name found by
    chance or with the key."""
    if key is None or order_proven(key, machine, found.name, found.input):
        return
    taken = NameTaken(found.execution_arn)
    deps.publisher.publish_all(
        [Tampered(f[0], f[1], f[2], str(taken), found.execution_arn) for f in fires]
    )
    raise taken


def check_lone(order: FireOrder, execution_arn: str, deps: Names) -> None:
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


def check_batch(order: BatchOrder, execution_arn: str, deps: Names) -> None:
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


def names_key(deps: Names) -> bytes | None:
    """The key execution names are made under (``domain.naming``); None without a seal key."""
    seal_key = deps.secret(deps.settings.seal_secret_id)
    return None if seal_key is None else name_key(seal_key)


def _key(deps: Names) -> bytes | None:
    seal_key = deps.secret(deps.settings.seal_secret_id)
    return None if seal_key is None else order_proof_key(seal_key)
