"""An execution's identity: its ARN, which names the state machine it belongs to (what it *is*)
and its name (for people). docs/protocol.md, "How an execution is known".

Two executions of different machines may share a name (each machine has its own name space),
and an action id may produce any name a person can read: so a claim, a record's execution and a
tick name an execution by its whole ARN, and its kind — a lone fire or a batch — comes from the
machine in that ARN, never from how its name looks.

Pure: string work on ARNs; which machine ARN is which is the caller's (``ExecutionStarter.owns``).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Machine", "name_of", "same_execution"]


class Machine(StrEnum):
    """The stack's two state machines."""

    FIRE = "fire"  # one fire an execution: statemachines/fire.asl.json
    BATCH = "batch"  # the fires due together: statemachines/batch.asl.json


def name_of(execution_arn: str | None) -> str:
    """The execution's name: the last field of its ARN ('' for none)."""
    return (execution_arn or "").rpartition(":")[2]


def same_execution(stored: str | None, execution_arn: str) -> bool:
    """Whether ``stored`` (a claim or a record's execution) names the execution ``execution_arn``.

    Stored as the ARN. A claim written before claims held ARNs holds the bare name
    (``_legacy_name``): it still names the execution of that name, as it did when written, so a
    fire claimed before an upgrade is resumed by its own execution's retry."""
    if not stored:
        return False
    if stored == execution_arn:
        return True
    return _legacy_name(stored) and stored == name_of(execution_arn)


def _legacy_name(stored: str) -> bool:
    """A claim written before claims held ARNs: a bare execution name (names hold no colon)."""
    return ":" not in stored
