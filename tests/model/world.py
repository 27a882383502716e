"""The world the model-based test drives: the stack's own use cases over the in-memory stores,
with the two state machines played step by step as their definitions say, a bus and a tick
rule, a target that notes every call, and crashes planted between a write and what follows.

Nothing here decides what the stack does: each step calls the use case a function would call
(fulfill, fire_batch, prove_failure, accept_report, pump, reconcile, the steering use cases).
The world only plays what AWS would do around them — a Wait that ends, a Retry with its count,
a Catch, a Lambda that dies, an event delivered twice or lost — and keeps the record of what
happened that the invariants read.

The pump's and the reconciler's launches, and a batch task's members, run one at a time here
(``workers=1``, ``most_threads=1``): a crash is planted after a counted write, and hypothesis
replays an example only if it unfolds the same way each time, which threads racing for the
writes do not. (A batch task still starts its follow-ons from its own thread beside that one
worker; the model's fire times, 10 s apart, give them nothing to race for.) The e2e suite runs
them all concurrently, on the emulator.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from tests.unit.fakes import FakeExecutions, FakePublisher, fake_dependencies
from tests.unit.fakes.stores import FakeRecords, FakeStore
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
from tickwork.domain.batch import BatchOrder
from tickwork.domain.errors import (
    ActionConflict,
    ActionSuperseded,
    ForgedOrder,
    OccurrenceSkipped,
    PermanentFulfillmentError,
    TickPending,
    TickUndelivered,
    TransientFulfillmentError,
    WaitContinued,
)
from tickwork.domain.events import DetailType
from tickwork.domain.fire import CaughtFailure, FireAttempt, FireOrder, Tick
from tickwork.fire.fire_batch import fire_batch
from tickwork.fire.lone_fire import failure_of, fire_lone
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.steering.intake import accept_report

__all__ = ["MODEL_TYPE", "Call", "LambdaDied", "World"]

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
MODEL_TYPE = "MODEL"
RETRIES = 2  # RetryMaxAttempts of both machines in the model's stack
# The fire machine's retrier of a transient failure: the most an action's own policy may ask;
# the task itself ends the fire when the action's policy (or RETRIES) allows no more.
FIRE_RETRIES = 185
FIRE_PREFIX = "arn:aws:states:us-east-1:123456789012:execution:fire:"


class LambdaDied(BaseException):
    """A planted crash: the function's process died right after a write had landed. To the
    state machine it is ``Lambda.Unknown`` (retried as a transient failure); to EventBridge, a
    failed delivery (redelivered). A ``BaseException``, as a process's death is: no handler of
    the stack's catches it (a batch task dies whole, not one member of it)."""


@dataclass(frozen=True)
class Call:
    """One call of the target: which fire, when, by which execution, and how it answered."""

    key: str
    action_id: str
    occurrence: int
    scheduled: datetime
    at: datetime
    attempt: int
    execution: str
    ok: bool
    trigger: str = "SCHEDULED"


class _ModelData(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ModelTarget:
    """The action type every model action has: it notes each call, and fails when told to."""

    action_type: ClassVar[str] = MODEL_TYPE
    data_model: ClassVar[type[BaseModel]] = _ModelData

    def __init__(self, world: World) -> None:
        self.world = world

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        world = self.world
        failure = world.failing.pop(request.action_id, None)
        if request.action_id in world.failing_always:
            failure = "transient"
        world.calls.append(
            Call(
                request.idempotency_key,
                request.action_id,
                request.occurrence,
                request.scheduled_time,
                world.deps.clock.now(),
                request.attempt,
                world.running or "",
                failure is None,
                request.trigger,
            )
        )
        if failure == "transient":
            raise TransientFulfillmentError("the model's target answered 503")
        if failure == "permanent":
            raise PermanentFulfillmentError("the model's target answered 400")
        return {"called": True}


@dataclass
class Run:
    """An execution as the world plays it: its retries so far, and how it ended."""

    machine: str  # "fire" or "batch"
    name: str
    retry: int = 0
    ended: bool = False


@dataclass
class World:
    deps: Dependencies = field(init=False)
    calls: list[Call] = field(default_factory=list)
    failing: dict[str, str] = field(default_factory=dict)  # action id -> its next call's failure
    failing_always: set[str] = field(default_factory=set)  # ids whose target answers 503
    # (action id, what it does): a steering request that lands right before the next claim of
    # that action's fire by a running task (between the task's read and its write)
    interject: tuple[str, Callable[[], None]] | None = None
    crash_in: int | None = None  # writes until the planted crash (None: none planted)
    running: str | None = None  # the execution the world is playing now
    runs: dict[str, Run] = field(default_factory=dict)  # arn -> how far it got
    inbox: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # for the tick rule
    forged: set[str] = field(default_factory=set)  # arns of executions the stack did not issue
    crashes: int = 0
    bus_seen: int = 0
    used: set[str] = field(default_factory=set)  # execution arns ever started (names are unique)
    # the orders of executions lost with the emulator, by name: which fire each ran
    lost_orders: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        deps = fake_dependencies(
            NOW,
            publisher=FakePublisher(),
            launch_ahead=timedelta(seconds=10),
            lock=timedelta(seconds=5),
            seal_secret_id="seal",
            batch_state_machine_arn="arn:aws:states:us-east-1:123456789012:stateMachine:batch",
            batch_min_fires=2,
            batch_max_fires=4,
            retry_max_attempts=RETRIES,
            history_limit=200,
        )
        deps.secrets.values["seal"] = b"the model's seal key"  # type: ignore[attr-defined]
        deps.registry.register(ModelTarget(self))
        deps.records.store.after_write = self.after_write  # type: ignore[attr-defined]
        deps.records.store.before_save = self.before_save  # type: ignore[attr-defined]
        self.deps = deps

    # --- what the world keeps ----------------------------------------------------------------
    @property
    def store(self) -> FakeStore:
        records: FakeRecords = self.deps.records  # type: ignore[assignment]
        return records.store

    @property
    def fires(self) -> FakeExecutions:
        return self.deps.executions  # type: ignore[return-value]

    @property
    def batches(self) -> FakeExecutions:
        return self.deps.batches  # type: ignore[return-value]

    def lose_executions(self) -> None:
        """The emulator restarted: every execution is gone (their names with them)."""
        for starter in (self.fires, self.batches):
            self.used.update(starter.execution_arn(name) for name in starter.started)
            self.lost_orders.update(starter.started)
            starter.started.clear()
            starter.ended.clear()
        self.runs.clear()
        self.inbox.clear()

    def generation_of(self, action_id: str, execution: str | None) -> int | None:
        """The generation of the action whose fire the execution named ``execution`` ran (its
        order's, or its batch member's): None when it is not known (no execution ran it)."""
        order = None
        if execution is not None:
            order = (
                self.fires.started.get(execution)
                or self.batches.started.get(execution)
                or self.lost_orders.get(execution)
            )
        if order is None:
            return None
        members = getattr(order, "members", None)
        if members is None:
            return int(order.generation)
        mine = [m.generation for m in members if m.action_id == action_id]
        return int(mine[0]) if mine else None

    def ever_started(self, arn: str) -> bool:
        starter = self.batches if ":execution:batch:" in arn else self.fires
        return arn in self.used or arn.rpartition(":")[2] in starter.started

    def before_save(self, action: Action) -> None:
        """A claim about to be written by a running task: the interjected request lands first."""
        if self.interject is None or self.running is None:
            return
        action_id, request = self.interject
        if action.id == action_id and action.status == Status.IN_PROGRESS and action.claimed_by:
            self.interject = None
            request()

    def after_write(self) -> None:
        if self.crash_in is None:
            return
        if self.crash_in == 0:
            self.crash_in = None
            self.crashes += 1
            raise LambdaDied("planted: the process died right after this write")
        self.crash_in -= 1

    def runnable(self) -> list[str]:
        """The executions whose Wait has ended and that have not ended: ARNs, in order."""
        now = self.deps.clock.now()
        found = []
        for machine, starter in (("fire", self.fires), ("batch", self.batches)):
            for name, order in starter.started.items():
                arn = starter.execution_arn(name)
                run = self.runs.setdefault(arn, Run(machine, name))
                if run.ended or name in starter.ended:
                    continue
                due = order.wait_until if isinstance(order, FireOrder) else order.second
                if due.replace(microsecond=0) <= now:  # Step Functions' Wait, to the second
                    found.append(arn)
        return found

    def collect_bus(self) -> None:
        """What the tick rule passes to the tick function: the fire machine's ticks not
        recorded by their task, and its reports (a batch records its own)."""
        publisher: FakePublisher = self.deps.publisher  # type: ignore[assignment]
        for detail_type, detail in publisher.events[self.bus_seen :]:
            lone = str(detail.get("executionArn", "")).startswith(FIRE_PREFIX)
            recorded = bool(detail.get("recorded"))
            if detail_type in (DetailType.TICK, DetailType.FAILED) and lone and not recorded:
                self.inbox.append((str(detail_type), detail))
        self.bus_seen = len(publisher.events)

    # --- the machines ------------------------------------------------------------------------
    def play(self, arn: str) -> None:
        """One try of the execution's task, and what its definition does with the answer."""
        run = self.runs[arn]
        self.running = arn
        try:
            if run.machine == "fire":
                self._play_fire(run, arn)
            else:
                self._play_batch(run, arn)
        finally:
            self.running = None
            self.crash_in = None  # a crash planted for this task and not met is not kept
            self.collect_bus()

    def _play_fire(self, run: Run, arn: str) -> None:
        """Fulfill (it records the fire, then puts its tick), then the end of the execution."""
        order: FireOrder = self.fires.started[run.name]
        try:
            fired = fire_lone(FireAttempt(order, arn, run.retry), self.deps)
        except (ActionSuperseded, WaitContinued, OccurrenceSkipped):
            self._end(run, "SUCCEEDED", output=order.to_wire())
            return
        except ForgedOrder as refused:
            self._end(run, "FAILED", error="ForgedOrder", cause=str(refused))
            return
        except TickUndelivered as refused:  # the Catch: Read the tick, Emit tick
            tick = Tick.from_wire(json.loads(str(refused)))
            self.deps.publisher.publish(tick)
            self._end(run, "SUCCEEDED", output=tick.to_wire())
            return
        except TickPending as pending:  # its own Retry, then "Tick undelivered"
            if run.retry < RETRIES:
                run.retry += 1
                return
            undelivered = {"Error": "TickPending", "Cause": str(pending)}
            self._end(run, "SUCCEEDED", output={**order.to_wire(), "undelivered": undelivered})
            return
        except (TransientFulfillmentError, ActionConflict, LambdaDied) as error:
            if run.retry < FIRE_RETRIES:
                run.retry += 1  # the Retry: the execution waits, then tries again
                return
            self._failed(run, arn, order, type(error).__name__, str(error))
            return
        except Exception as error:  # PermanentFulfillmentError, RetriesExhausted, ...
            self._failed(run, arn, order, type(error).__name__, str(error))
            return
        self._end(run, "SUCCEEDED", output=fired.tick.to_wire())

    def _failed(self, run: Run, arn: str, order: FireOrder, error: str, cause: str) -> None:
        """The Catch: Prove failure (retried if its function dies), Report failure, FireFailed."""
        report = CaughtFailure.from_wire(
            {**order.to_wire(), "error": {"Error": error, "Cause": cause}}
        )
        for _ in range(6):
            try:
                failure = failure_of(report, arn, self.deps)
                break
            except LambdaDied:
                continue
            except (ForgedOrder, ActionSuperseded):  # the Catch: Failure unproved
                self._end(run, "FAILED", error="FireFailed", cause="unproved")
                return
        else:
            self._end(run, "FAILED", error="FireFailed", cause="unproved")
            return
        self.deps.publisher.publish(failure)
        self._end(run, "FAILED", error="FireFailed", cause=json.dumps(failure.to_wire()))

    def _play_batch(self, run: Run, arn: str) -> None:
        order: BatchOrder = self.batches.started[run.name]
        try:
            results = fire_batch(order, arn, run.retry, self.deps, most_threads=1)
        except ForgedOrder as refused:
            self._end(run, "FAILED", error="ForgedOrder", cause=str(refused))
            return
        except (Exception, LambdaDied) as error:  # the task died or failed: retried
            if run.retry < RETRIES:
                run.retry += 1
                return
            self._end(run, "FAILED", error="States.TaskFailed", cause=str(error))
            return
        self._end(run, "SUCCEEDED", output={"fires": [r.to_wire() for r in results]})

    def _end(self, run: Run, status: str, output: Any = None, **error: str) -> None:
        run.ended = True
        starter = self.fires if run.machine == "fire" else self.batches
        starter.end(run.name, status, output, **error)

    # --- the bus -----------------------------------------------------------------------------
    def deliver(self, index: int, again: bool) -> None:
        """The tick rule delivers one event to the tick function (EventBridge redelivers it when
        the function fails; ``again``: delivered twice)."""
        detail_type, detail = self.inbox[index]
        try:
            accept_report(detail_type, detail, f"event-{index}", self.deps)
        except LambdaDied:
            return  # kept: EventBridge retries the delivery
        finally:
            self.crash_in = None
            self.collect_bus()
        if not again:
            del self.inbox[index]

    def executions_by_kind(self) -> Counter[str]:
        return Counter(run.machine for run in self.runs.values())
