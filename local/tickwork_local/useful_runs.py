"""When a scheduled function could next find work: what lets virtual time leave out the runs
of the pump and the reconciler that would find nothing (``ScheduleRunner``).

Each answer comes from one glance at the actions table (a few attributes of each item, read
from the emulator's own table: the stack is idle when it looks) and the executions running,
and errs early: a run
that finds nothing is only time lost, a run left out that would have found work would be a
fire late.

- **pump**: the earliest launch moment of a parked fire, the only thing its run acts on (a
  fire parked far that its shard's watermark passed was launched without a write: no longer
  the pump's). The runs left out move its watermark as runs that found nothing would have
  (``nothing_due_until``), so the next run reads from there.
- **counts**: now, while the table's stream holds a write of an action that no fold has
  read yet (the folds' progress item, ``#tally``, against the stream's last record); else
  none until something happens.
- **reconciler**: now, while a claim, a fire asked for by hand or a batch's tab is open (each
  may need it after a while, so every run is made); else the earliest of: a waiting fire
  whose execution is not running coming within its look-ahead (``reconcile.HORIZON``): a lost
  execution is restarted then, as on real time; a parked fire a third of the horizon past its
  launch moment (the pump missed it: a pump that is down); and any waiting fire not yet noted
  missed, ``MissedGraceSeconds`` after its time (the watchdog's moment; a fire that happens
  on time moves the record on before it). A stack where every waiting fire's execution runs
  and fires on time gives its runs nothing to do.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tickwork import bootstrap
from tickwork.adapters.dynamodb_parked import DynamoDBParkedFires
from tickwork.adapters.execution_refs import ExecutionRefs
from tickwork.adapters.record_keys import PUMP_ITEM_ID, park_shard_of
from tickwork.domain.action import Status
from tickwork.fire.reconcile import HORIZON

__all__ = ["GLANCED", "Glance", "UsefulRuns", "glance_at", "useful_runs"]


@dataclass
class Glance:
    """What the table holds that a scheduled run acts on (unix seconds)."""

    launches: list[float]  # parked fires' launch moments
    waiting: list[tuple[float, str | None]]  # PENDING fires not parked: time, execution named
    unnoted: list[float]  # PENDING fires (parked or not) the watchdog has not noted missed
    open_work: bool  # a claim, a fire asked for by hand, or a batch's tab
    list_running: Callable[[], set[str]]  # the executions running, asked only if needed
    # when the oldest write of an action the stream holds and the folds have not read was
    # made (None: there is none)
    unfolded_since: float | None = None
    count_lag: float = 0.0  # CountLagSeconds: a fold waits until that write is this old

    @functools.cached_property
    def running(self) -> frozenset[str]:
        return frozenset(self.list_running())


# The attributes a glance reads of each item of the actions table.
GLANCED = (
    "id",
    "status",
    "executionTime",
    "executionArn",
    "launchAt",
    "parkShard",
    "manualShard",
    "tabShard",
    "missed",
    "launchedTo",
)


def _launched_to(items: list[Mapping[str, Any]]) -> dict[str, int]:
    """The pump's ByStatus watermarks (``#pump``'s ``launchedTo``): park shard -> fire ms."""
    for item in items:
        if item.get("id") == PUMP_ITEM_ID and isinstance(item.get("launchedTo"), Mapping):
            marks = item["launchedTo"]
            return {str(k): int(_number(v)) for k, v in marks.items()}
    return {}


def _number(value: Any) -> str:
    """A number of a map as the emulator keeps it: typed ({"N": "12"}) or wrapped."""
    if isinstance(value, Mapping):
        return str(value.get("N"))
    return str(getattr(value, "value", value))


def glance_at(
    items: Iterable[Mapping[str, Any]],
    running: Callable[[], set[str]],
    refs: ExecutionRefs | None = None,
    unfolded_since: float | None = None,
    count_lag: float = 0.0,
) -> Glance:
    """The glance from the table's items, each given as its ``GLANCED`` attributes' values
    (numbers as the digits DynamoDB keeps); ``refs``: the stack's machines, to tell the ARN of
    an execution an item names by machine and name."""
    launches: list[float] = []
    waiting: list[tuple[float, str | None]] = []
    unnoted: list[float] = []
    open_work = False
    every = list(items)
    marks = _launched_to(every)
    for item in every:
        status = item.get("status")
        if "tabShard" in item or "manualShard" in item or status == Status.IN_PROGRESS:
            open_work = True
        if status == Status.PENDING and "executionTime" in item:
            fire = int(item["executionTime"]) / 1000
            if "missed" not in item:
                unnoted.append(fire)
            if "launchAt" in item and "parkShard" not in item:
                # parked far: launched without a write once its shard's watermark passed it;
                # then only the reconciler's missed-fire moment (in ``unnoted``) is its
                shard = str(park_shard_of(str(item.get("id", ""))))
                if int(item["executionTime"]) >= marks.get(shard, -1):
                    launches.append(int(item["launchAt"]) / 1000)
            elif "launchAt" in item:
                launches.append(int(item["launchAt"]) / 1000)
            else:
                named = item.get("executionArn")
                waiting.append((fire, refs.read(named) if refs else named))
    return Glance(launches, waiting, unnoted, open_work, running, unfolded_since, count_lag)


class UsefulRuns:
    exact = False  # True: the moment holds whatever happened since the last run

    def __init__(self, glance: Callable[[], Glance]) -> None:
        self._glance = glance

    def moment(self, last_run: float) -> float | None:
        """The earliest moment a run could find work that the run at ``last_run`` did not
        (None: none until something happens)."""
        raise NotImplementedError

    def left_out(self, until: float) -> None:
        """The runs up to ``until`` were left out: do what they would have done."""


class _Pump(UsefulRuns):
    exact = True

    def moment(self, last_run: float) -> float | None:
        return min(self._glance().launches, default=None)

    def left_out(self, until: float) -> None:
        parked = bootstrap.from_environment().parked
        if isinstance(parked, DynamoDBParkedFires):
            parked.nothing_due_until(datetime.fromtimestamp(until, UTC))


class _Reconciler(UsefulRuns):
    exact = True

    def moment(self, last_run: float) -> float | None:
        seen = self._glance()
        deps = bootstrap.from_environment()
        if seen.open_work:
            return deps.clock.now().timestamp()
        ahead = HORIZON.total_seconds()
        grace = deps.settings.missed_grace.total_seconds()
        pump_had = deps.settings.launch_ahead.total_seconds() / 3
        moments = [fire + grace for fire in seen.unnoted]
        moments += [launch + pump_had for launch in seen.launches]
        if seen.waiting:
            lost = (fire for fire, execution in seen.waiting if execution not in seen.running)
            moments += [fire - ahead for fire in lost]
        return min(moments, default=None)


class _Counts(UsefulRuns):
    exact = True

    def moment(self, last_run: float) -> float | None:
        # A write to fold: the next run finds it (the last run's instant: never after now,
        # where the functions' clock, kept to the millisecond, may read a hair later) — or,
        # with CountLagSeconds, the first run once it is that old (the runs before fold
        # nothing; on AWS they are the schedule's fixed cost).
        # The stream stamps its writes on the wall clock, where the lag is counted: what is
        # left of it is carried over to the runs' own clock (virtual time's too).
        seen = self._glance()
        if seen.unfolded_since is None:
            return None
        left = seen.unfolded_since + seen.count_lag - time.time()
        return last_run + left if seen.count_lag > 0 and left > 0 else last_run


def useful_runs(function_logical_id: str, glance: Callable[[], Glance]) -> UsefulRuns | None:
    """What tells the runs of this scheduled function worth making (None: make every one)."""
    kinds: dict[str, type[UsefulRuns]] = {
        "PumpFunction": _Pump,
        "ReconcilerFunction": _Reconciler,
        "CountFunction": _Counts,
    }
    kind = kinds.get(function_logical_id)
    return kind(glance) if kind else None
