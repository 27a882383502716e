"""``tickwork local`` with faults planted inside it. Each injected fault is printed as a
``chaos-fault`` line to this process's output.

**Tick crash**: the tick function crashes after partial work, the first time it handles a fire
of an action whose id starts with ``crash-``.

- recurring: the record is saved at its next occurrence, then starting that occurrence's
  execution raises (``tickwork.fire.record.launch``);
- one-off: the record is saved COMPLETED, then publishing DetailType.COMPLETED raises.

The tick's delivery then fails, so its message comes back after the queue's visibility
timeout (local/tickwork_local/delivery.py) and the redelivered tick must finish the job.

**Batch crash**: the task of a batch holding a ``batchcrash-`` fire crashes the first time it
has recorded that fire, before putting its tick on the bus, adding the batch's counts or
finishing the others (each already in flight runs to its end, as in a killed task's last
moments, but nothing after): the machine retries the task, which must not fire a recorded
fire again, must resume the claimed ones, and must put the tick on the bus.

**Start refused**: the first StartExecution of each fire of an action whose id starts with
``refused-`` fails with ``ExecutionLimitExceeded``, as Step Functions answers when the
account's open executions are at their quota: the fire must be parked again and launched by
the pump.

**Pump down**: when the pump first finds a fire of a ``pumpdown-`` action due for launch, it
stops for ``PUMP_OUTAGE_SECONDS`` (longer than the stack's horizon): every fire due for launch
meanwhile waits in the table, and must be launched, once, when it is back.

**Bus down**: the bus refuses the Schedule Tick of the first fire of a ``busdown-`` action on
its first 6 puts, as a throttled or failing EventBridge would: the Fulfill task recorded the
fire before, and the machine's Emit tick (the tick carried in the task's error) must put it
there, without running the fire again.

**Report lost**: the same for the Schedule Failed report of the first fire of a ``reportlost-``
action (which fails for good): the execution ends in FireFailed with the report, and the
reconciler must record the failure, without running the fire again.

Run as ``python bench/chaoskit/faulty_stack.py --state-dir D --port P --api-port A
--parameter KEY=VALUE ...``; otherwise the same as ``tickwork local``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder is on the path, not bench/ that holds chaoskit.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chaoskit.bus_refusals import BusRefusals, tick_or_report_of
from tickwork.adapters.dynamodb_parked import DynamoDBParkedFires
from tickwork.adapters.eventbridge import EventBridgePublisher
from tickwork.adapters.stepfunctions import StepFunctionsExecutions
from tickwork.domain.announcements import Completed
from tickwork.domain.batch import BatchOrder
from tickwork.domain.errors import LaunchRefused
from tickwork.domain.events import DetailType
from tickwork.fire import fire_batch, record
from tickwork.ports import ExecutionInput
from tickwork_local.service import run_local

FAULTY_STACK = Path(__file__)
CRASH_PREFIX = "crash-"
REFUSED_PREFIX = "refused-"
PUMP_DOWN_PREFIX = "pumpdown-"
BUS_DOWN_PREFIX = "busdown-"
REPORT_LOST_PREFIX = "reportlost-"
PUMP_OUTAGE_SECONDS = 8.0
BATCH_CRASH_PREFIX = "batchcrash-"
FAULT_LINE = "chaos-fault"


class TickCrashed(RuntimeError):
    """The planted crash: the tick function died after writing the record."""


class BatchCrashed(RuntimeError):
    """The planted crash: a batch task died after recording one of its fires."""


class _FirstTime:
    """True once per key: each fire crashes only on its first delivery."""

    def __init__(self) -> None:
        self._seen: set[tuple[Any, ...]] = set()
        self._lock = threading.Lock()

    def __call__(self, key: tuple[Any, ...]) -> bool:
        with self._lock:
            if key in self._seen:
                return False
            self._seen.add(key)
            return True


def _fault(kind: str, where: str, action_id: str, occurrence: int) -> None:
    """One fault line, written whole: a single write of the line and its newline, so lines
    of two threads never share a line of the log (print writes the text and the newline
    apart)."""
    fields = {"kind": kind, "where": where, "id": action_id, "occ": occurrence}
    line = f"{FAULT_LINE} {json.dumps(fields)}\n".encode()
    sys.stdout.flush()  # what others left in the buffer goes first
    os.write(sys.stdout.fileno(), line)


def _crash(where: str, action_id: str, occurrence: int) -> TickCrashed:
    _fault("tick-crash", where, action_id, occurrence)
    return TickCrashed(f"planted crash in {where} for {action_id} occurrence {occurrence}")


def plant_tick_crash() -> None:
    first_time = _FirstTime()
    launch: Callable[..., str] = record.launch
    publish = EventBridgePublisher.publish

    def crashing_launch(action: Any, now: Any, deps: Any, *args: Any, **kwargs: Any) -> str:
        key = ("launch", action.id, action.generation, action.occurrence)
        if action.id.startswith(CRASH_PREFIX) and first_time(key):
            raise _crash("launch of the next occurrence", action.id, action.occurrence - 1)
        return launch(action, now, deps, *args, **kwargs)

    def crashing_publish(self: Any, event: Any) -> None:
        if isinstance(event, Completed):
            key = ("completed", event.action_id, event.generation)
            if event.action_id.startswith(CRASH_PREFIX) and first_time(key):
                raise _crash("publish of Schedule Completed", event.action_id, event.occurrences)
        publish(self, event)

    record.launch = crashing_launch  # type: ignore[assignment]
    EventBridgePublisher.publish = crashing_publish  # type: ignore[method-assign]


def plant_batch_crash() -> None:
    first_time = _FirstTime()
    recorded = fire_batch.record_tick

    def crashing_record_tick(tick: Any, deps: Any, *args: Any, **kwargs: Any) -> Any:
        answer = recorded(tick, deps, *args, **kwargs)
        if tick.action_id.startswith(BATCH_CRASH_PREFIX) and first_time(
            ("batch-crash", tick.execution_name)
        ):
            _fault("batch-crash", tick.execution_name, tick.action_id, tick.occurrence)
            raise BatchCrashed(
                f"planted crash in batch {tick.execution_name} after {tick.action_id}"
            )
        return answer

    fire_batch.record_tick = crashing_record_tick  # type: ignore[assignment]


def plant_start_refusals() -> None:
    first_time = _FirstTime()
    start = StepFunctionsExecutions.start

    def refusing_start(self: StepFunctionsExecutions, name: str, order: ExecutionInput) -> str:
        fires = order.members if isinstance(order, BatchOrder) else (order,)
        refused = [f for f in fires if f.action_id.startswith(REFUSED_PREFIX)]
        if refused and first_time(("refuse", name)):
            for fire in refused:  # a batch is refused whole: each refused- member is told
                _fault("start-refused", "StartExecution", fire.action_id, fire.occurrence)
            raise LaunchRefused(name, "ExecutionLimitExceeded")
        arn = start(self, name, order)
        if isinstance(order, BatchOrder) and first_time(("batch", name)):  # not a fault: a count
            _fault("batch-started", name, order.members[0].action_id, len(order.members))
        return arn

    StepFunctionsExecutions.start = refusing_start  # type: ignore[method-assign]


def plant_pump_outage() -> None:
    parked_due = DynamoDBParkedFires.due_moments
    outage = {"until": 0.0, "done": False}
    lock = threading.Lock()

    def stalled_parked_due(
        self: DynamoDBParkedFires, until: Any, limit: int = 1000, shard: int | None = None
    ) -> list[tuple[int, str]]:
        due = parked_due(self, until, limit, shard)
        with lock:
            trigger = next((i for _, i in due if i.startswith(PUMP_DOWN_PREFIX)), None)
            if trigger is not None and not outage["done"]:
                outage.update(until=time.time() + PUMP_OUTAGE_SECONDS, done=True)
                _fault("pump-down", f"pump stopped {PUMP_OUTAGE_SECONDS:g}s", trigger, 0)
            if time.time() < outage["until"]:
                return []  # the pump is down: everything due waits in the table
        return due

    DynamoDBParkedFires.due_moments = stalled_parked_due  # type: ignore[method-assign]


def plant_bus_refusals() -> None:
    """The bus refuses the first fire's tick of busdown-* actions, and the first fire's failure
    report of reportlost-* actions, on every PutEvents attempt of the state machine's task."""
    for prefix, detail_type, kind in (
        (BUS_DOWN_PREFIX, DetailType.TICK, "bus-down"),
        (REPORT_LOST_PREFIX, DetailType.FAILED, "report-lost"),
    ):
        BusRefusals(
            tick_or_report_of(prefix, detail_type, occurrence=1),
            on_first_refusal=lambda key, kind=kind: _fault(kind, str(key[0]), key[1], key[3]),
        ).install()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-port", type=int, required=True)
    parser.add_argument("--parameter", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--fresh", action="store_true")
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    parameters = dict(pair.split("=", 1) for pair in args.parameter)
    plant_tick_crash()
    plant_batch_crash()
    plant_start_refusals()
    plant_pump_outage()
    plant_bus_refusals()
    run_local(args.port, args.state_dir, args.fresh, parameters, args.api_port)


if __name__ == "__main__":
    main()
