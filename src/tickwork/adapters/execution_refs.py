"""How a record's item names an execution of the stack's own machines: by its name and its
machine (``f:<name>`` on the fire machine, ``b:<name>`` on the batch machine), not its whole
ARN, which would be most of a record's last kilobyte (``executionArn``; ``claimedBy`` is
``=`` for the same execution, ``dynamodb_record``). An ARN of another machine or account (never
written by the stack itself) is kept whole; a value of neither form (a bare name, written
before claims held ARNs) is read as it is, as before.

Execution names hold no ``:`` (Step Functions allows letters, digits, ``-`` and ``_``), so a
stored ``f:``/``b:`` value is never a bare name, and an ARN always begins ``arn:``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

__all__ = ["ExecutionRefs"]

_FIRE, _BATCH = "f:", "b:"


def _executions_of(machine_arn: str) -> str:
    """The prefix of the ARNs of a machine's executions (``…:execution:<machine>:``)."""
    return machine_arn.replace(":stateMachine:", ":execution:", 1) + ":"


@dataclass(frozen=True)
class ExecutionRefs:
    fire_machine_arn: str
    batch_machine_arn: str | None = None

    @cached_property
    def _prefixes(self) -> tuple[tuple[str, str], ...]:
        """(code, ARN prefix) of each machine: made once, read at every record's read and write."""
        found = [(_FIRE, _executions_of(self.fire_machine_arn))]
        if self.batch_machine_arn and self.batch_machine_arn != self.fire_machine_arn:
            found.append((_BATCH, _executions_of(self.batch_machine_arn)))
        return tuple(found)

    def stored(self, arn: str | None) -> str | None:
        """The value an item keeps for the execution ``arn``."""
        if arn is None:
            return None
        for code, prefix in self._prefixes:
            name = arn.removeprefix(prefix)
            if name != arn and ":" not in name:
                return code + name
        return arn

    def read(self, value: str | None) -> str | None:
        """The execution's ARN from what an item keeps."""
        if value is None:
            return None
        for code, prefix in self._prefixes:
            if value.startswith(code):
                return prefix + value.removeprefix(code)
        return value
