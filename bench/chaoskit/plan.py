"""The plan of a chaos run: which actions, which fault each one gets, and when it fires.

Fires come in two waves with a gap between them; the stack is killed (SIGKILL) in the gap
and restarted, so every action of wave 2 waits through the kill. Each action gets one fault
kind; every kind has one-offs and recurrences (``rate(N seconds)`` with 2-3 fires) but
``pump-down`` (one-offs), in both waves (``kill-restart`` actions only in wave 2: that is
their fault; ``bus-down`` and ``report-lost`` too, their repair by the reconciler lasting
past a wave). Fire times are spread
over each wave so the emulator is kept at about ``fire_rate`` fires a second.

A recurrence is placed with ``startTime``, its first fire (EventBridge Scheduler's StartDate);
the run reads the real one back after creation.

**Batch groups**: in each wave, some actions of the kinds a batch can hold (every
``batch-crash`` action, and about half of the others) are moved into groups of
``BATCH_GROUP`` whose first fires fall in one second: their fires are parked (the stack's
horizon is seconds) and the pump launches each group as one batch execution — so the faults
of those kinds (transient and permanent failures, cancel / update / pause races after the
launch, a refused start, a task crash) happen to fires of a batch.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

__all__ = ["ID_PREFIXES", "Kind", "Plan", "PlannedAction", "Waves", "iso_ms", "make_plan"]

ACTION_TYPE = "HTTP_REQUEST"
CREATE_SECONDS_PER_ACTION = 0.25  # measured 0.09 s (120 in 11 s, CI machine); room for a slow one
LEAD_SECONDS = 5.0  # between the expected end of creation and the first fire
# From the kill to the first fire of wave 2: a restart re-creates the stack, then starts an
# execution for every waiting action again (~0.1 s each on a small machine).
RESTART_SECONDS = 15.0
RESTART_SECONDS_PER_ACTION = 0.06
TAIL_SECONDS = 6.0  # from the last fire of wave 1 to the kill
MIN_WAVE_SECONDS = 20.0
TRANSIENT_TAIL = 4.0  # up to two retries of a transient failure


class Kind(StrEnum):
    NONE = "none"
    TRANSIENT = "transient"
    PERMANENT = "permanent"
    DUP_START = "dup-start"
    DUP_TICK = "dup-tick"
    TICK_CRASH = "tick-crash"
    CANCEL = "cancel-race"
    UPDATE = "update-race"
    RESTART = "kill-restart"
    START_REFUSED = "start-refused"
    PUMP_DOWN = "pump-down"
    BUS_DOWN = "bus-down"
    REPORT_LOST = "report-lost"
    PAUSE = "pause-race"
    BATCH_CRASH = "batch-crash"


# The id prefix names the kind: the receiver and the planted crash decide by it.
ID_PREFIXES = {
    Kind.NONE: "none",
    Kind.TRANSIENT: "transient",
    Kind.PERMANENT: "permanent",
    Kind.DUP_START: "dupstart",
    Kind.DUP_TICK: "duptick",
    Kind.TICK_CRASH: "crash",
    Kind.CANCEL: "cancel",
    Kind.UPDATE: "update",
    Kind.RESTART: "restart",
    Kind.START_REFUSED: "refused",
    Kind.PUMP_DOWN: "pumpdown",
    Kind.BUS_DOWN: "busdown",
    Kind.REPORT_LOST: "reportlost",
    Kind.PAUSE: "pause",
    Kind.BATCH_CRASH: "batchcrash",
}
# Kinds whose fault lasts past the wave: a kill in the gap would cut it short.
WAVE_2_ONLY = frozenset({Kind.RESTART, Kind.BUS_DOWN, Kind.REPORT_LOST})
# Kinds whose fires may share a batch: their faults then hit a batch's fires.
BATCHABLE = frozenset(
    {
        Kind.NONE,
        Kind.TRANSIENT,
        Kind.PERMANENT,
        Kind.CANCEL,
        Kind.UPDATE,
        Kind.PAUSE,
        Kind.START_REFUSED,
        Kind.DUP_TICK,
        Kind.BATCH_CRASH,
    }
)
BATCH_GROUP = 4  # fires of a group, due in one second (the chaos stack's BatchMinFires is 3)
GROUP_SECONDS = 5  # a wave's groups fall in its first seconds, one a second
# A pump-down action's first fire is at least this far into its wave: the outage it causes
# (from its launch moment, 5 s before) begins after the wave's batch groups were launched.
PUMP_DOWN_AFTER = 11.0


@dataclass(frozen=True)
class PlannedAction:
    id: str
    kind: Kind
    wave: int
    not_before: float  # epoch seconds: the one-off's time, or the recurrence's startTime
    interval: int = 0  # seconds between fires; 0 for a one-off
    count: int = 1  # fires asked for
    via_bus: bool = True  # created by a Start on the bus, else by POST /actions
    failures: int = 0  # transient: 503s per occurrence before the 200
    race_occurrence: int = 1  # cancel/update/pause: the fire whose lock boundary is raced
    race_offset: float = 0.0  # seconds after (fire - lock) the request is sent
    duplicate_in_batch: bool = False  # dup-start: the copy rides in the same PutEvents call
    redeliver_after: float = 0.0  # dup-start: seconds after the first fire to redeliver
    batch_group: int = 0  # > 0: its first fire shares a second with the rest of its group

    @property
    def recurring(self) -> bool:
        return self.interval > 0

    @property
    def footprint(self) -> float:
        """Seconds from not_before by which every fire of the action is due."""
        span = float(self.interval * self.count)
        if self.kind is Kind.UPDATE and self.recurring:
            span *= 2  # an accepted update starts the recurrence again from the update
        return span + (TRANSIENT_TAIL if self.kind is Kind.TRANSIENT else 0.0)

    def body(self, version: int = 1) -> dict[str, Any]:
        return {"id": self.id, "v": version}

    def data(self, url: str, version: int = 1) -> dict[str, Any]:
        return {"url": url, "method": "POST", "body": self.body(version)}

    def start_detail(self, url: str) -> dict[str, Any]:
        detail: dict[str, Any] = {"id": self.id, "action": ACTION_TYPE, "data": self.data(url)}
        if self.recurring:
            detail["rate"] = f"rate({self.interval} seconds)"
            detail["startTime"] = iso_ms(self.not_before)
            detail["executionRemainder"] = self.count
        else:
            detail["at"] = iso_ms(self.not_before)
        return detail


@dataclass(frozen=True)
class Waves:
    """When things happen, in epoch seconds."""

    created_by: float  # creation is expected to be over
    wave1: tuple[float, float]  # first and last fire of wave 1
    kill_at: float  # the stack is killed (at the first quiet moment from here)
    wave2: tuple[float, float]


@dataclass(frozen=True)
class Plan:
    seed: int
    waves: Waves
    actions: list[PlannedAction] = field(default_factory=list)

    def by_id(self) -> dict[str, PlannedAction]:
        return {a.id: a for a in self.actions}


def iso_ms(epoch: float) -> str:
    moment = datetime.fromtimestamp(round(epoch, 3), UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def make_plan(size: int, seed: int, now: float, fire_rate: float) -> Plan:
    """``size`` actions, the same for the same seed; fire times counted from ``now``."""
    rng = random.Random(seed)
    shapes = _shapes(size, rng)
    fires = {
        wave: sum(_fires(kind, count) for kind, w, _, count in shapes if w == wave)
        for wave in (1, 2)
    }
    durations = {w: max(MIN_WAVE_SECONDS, fires[w] / fire_rate) for w in (1, 2)}
    created_by = now + size * CREATE_SECONDS_PER_ACTION
    wave1 = (created_by + LEAD_SECONDS, created_by + LEAD_SECONDS + durations[1])
    kill_at = wave1[1] + TAIL_SECONDS
    waiting = sum(1 for _, wave, _, _ in shapes if wave == 2)
    wave2_start = kill_at + RESTART_SECONDS + RESTART_SECONDS_PER_ACTION * waiting
    wave2 = (wave2_start, wave2_start + durations[2])
    waves = Waves(created_by, wave1, kill_at, wave2)
    counters: dict[Kind, int] = {}
    actions = []
    for kind, wave, interval, count in shapes:
        number = counters[kind] = counters.get(kind, 0) + 1
        draft = PlannedAction(
            id=f"{ID_PREFIXES[kind]}-{number:04d}",
            kind=kind,
            wave=wave,
            not_before=0.0,
            interval=interval,
            count=count,
            via_bus=kind is Kind.DUP_START or number % 2 == 1,
            failures=rng.choice((1, 2)) if kind is Kind.TRANSIENT else 0,
            race_occurrence=rng.randint(1, count),
            race_offset=rng.uniform(-0.6, 0.6),
            duplicate_in_batch=rng.random() < 0.5,
            redeliver_after=rng.uniform(-1.5, 3.0),
        )
        start, end = wave1 if wave == 1 else wave2
        latest = max(start, end - draft.footprint)
        # The pump's outage (pump-down) comes after the wave's batch groups were launched.
        earliest = min(start + PUMP_DOWN_AFTER, latest) if kind is Kind.PUMP_DOWN else start
        actions.append(replace(draft, not_before=round(rng.uniform(earliest, latest), 3)))
    actions = _grouped(actions, {1: wave1, 2: wave2}, rng)
    actions.sort(key=lambda a: a.not_before)
    return Plan(seed, waves, actions)


def _grouped(
    actions: list[PlannedAction], waves: dict[int, tuple[float, float]], rng: random.Random
) -> list[PlannedAction]:
    """Batch groups: in each wave, every batch-crash action and about half of the other
    batchable ones, BATCH_GROUP to a second, in the wave's first seconds (one group a
    second): launched before a pump-down outage can begin, whose missed launches the
    reconciler makes one fire at a time."""
    placed = {a.id: a for a in actions}
    number = 0
    for wave, (start, _) in waves.items():
        crashes = [a for a in actions if a.wave == wave and a.kind is Kind.BATCH_CRASH]
        others = [
            a
            for a in actions
            if a.wave == wave and a.kind in BATCHABLE and a.kind is not Kind.BATCH_CRASH
        ]
        rng.shuffle(others)
        others = others[: max(0, len(others) // 2)]
        members = crashes + others
        for index, at in enumerate(range(0, len(members) - BATCH_GROUP + 1, BATCH_GROUP)):
            group = members[at : at + BATCH_GROUP]
            number += 1
            second = float(math.ceil(start) + index % GROUP_SECONDS)
            for action in group:
                moment = round(second + rng.uniform(0.0, 0.999), 3)
                placed[action.id] = replace(action, not_before=moment, batch_group=number)
    return list(placed.values())


def _shapes(size: int, rng: random.Random) -> list[tuple[Kind, int, int, int]]:
    """(kind, wave, interval, count) per action: kinds in equal shares, each mixed."""
    kinds = [list(Kind)[i % len(Kind)] for i in range(size)]
    rng.shuffle(kinds)
    seen: dict[Kind, int] = {}
    shapes = []
    for kind in kinds:
        index = seen[kind] = seen.get(kind, 0) + 1
        # pump-down: one-offs, so each fits after the wave's batch groups (PUMP_DOWN_AFTER)
        recurring = index % 2 == 0 and kind is not Kind.PUMP_DOWN
        wave = 2 if kind in WAVE_2_ONLY or (index // 2) % 2 == 1 else 1
        interval = rng.choice((3, 4, 5)) if recurring else 0
        count = rng.choice((2, 3)) if recurring else 1
        shapes.append((kind, wave, interval, count))
    return shapes


def _fires(kind: Kind, count: int) -> int:
    return count  # a permanent failure no longer ends a recurrence: every occurrence is tried
