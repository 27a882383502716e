"""Executions of a state machine (the fire machine's, or the batch machine's): started by
name, stopped, described."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

__all__ = ["AlreadyStarted", "ExecutionInput", "ExecutionStarter", "ExecutionState"]


class ExecutionInput(Protocol):
    """An execution's input: a fire's ``FireOrder``, or a batch's ``BatchOrder``."""

    def to_wire(self) -> dict[str, Any]: ...


class AlreadyStarted(Exception):
    """An execution of this name exists (names are deterministic: a repeated start finds the
    one it made). ``input`` is that execution's input, for the caller to tell whether the
    execution is the one it meant (``fire.orders``: its proof)."""

    def __init__(self, name: str, execution_arn: str, input: Any) -> None:
        self.name = name
        self.execution_arn = execution_arn
        self.input = input
        super().__init__(f"an execution named {name!r} exists")


@dataclass(frozen=True)
class ExecutionState:
    """What an execution came to: RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED."""

    status: str
    output: dict[str, Any] | None = None  # SUCCEEDED: the Schedule Tick detail it emitted
    error: str | None = None
    cause: str | None = None
    stopped_at: datetime | None = None  # when it ended (None while it runs)

    @property
    def running(self) -> bool:
        return self.status == "RUNNING"


class ExecutionStarter(Protocol):
    def execution_arn(self, name: str) -> str:
        """The ARN an execution of this name has (names are deterministic)."""

    def owns(self, execution_arn: str) -> bool:
        """Whether that execution is one of this state machine's (its ARN names the machine)."""

    def start(self, name: str, order: ExecutionInput) -> str:
        """Start the named execution with ``order`` as its input and return its ARN. One of
        that name exists: ``AlreadyStarted``, with its input. Refused for room (a quota,
        throttling): ``LaunchRefused``."""

    def stop(self, execution_arn: str, cause: str) -> None:
        """Stop a running execution; stopping one that has ended is harmless."""

    def describe(self, name: str) -> ExecutionState | None:
        """The execution's state, or None if no execution of this name was started."""

    def running_names(self, most: int) -> set[str] | None:
        """The names of this machine's running executions, listed in pages (one call for up
        to 1,000 of them): None when there are more than ``most``. A listing lags a start, so
        a name not in it may still be running: ask ``describe``."""
