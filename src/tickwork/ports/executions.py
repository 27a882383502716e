"""Executions of a state machine (the fire machine's, or the batch machine's): started by
name, stopped, described."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ExecutionInput", "ExecutionStarter", "ExecutionState"]


class ExecutionInput(Protocol):
    """An execution's input: a fire's ``FireOrder``, or a batch's ``BatchOrder``."""

    def to_wire(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ExecutionState:
    """What an execution came to: RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED."""

    status: str
    output: dict[str, Any] | None = None  # SUCCEEDED: the Schedule Tick detail it emitted
    error: str | None = None
    cause: str | None = None

    @property
    def running(self) -> bool:
        return self.status == "RUNNING"


class ExecutionStarter(Protocol):
    def execution_arn(self, name: str) -> str:
        """The ARN an execution of this name has (names are deterministic)."""

    def owns(self, execution_arn: str) -> bool:
        """Whether that execution is one of this state machine's (its ARN names the machine)."""

    def start(self, name: str, order: ExecutionInput) -> str:
        """Start the named execution with ``order`` as its input and return its ARN; starting
        one that exists is harmless. Refused for room (a quota, throttling): ``LaunchRefused``."""

    def stop(self, execution_arn: str, cause: str) -> None:
        """Stop a running execution; stopping one that has ended is harmless."""

    def describe(self, name: str) -> ExecutionState | None:
        """The execution's state, or None if no execution of this name was started."""
