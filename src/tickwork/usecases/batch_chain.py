"""A batch's recurring fires go on together: their next fires, due together again, share a
batch of their own, which the batch task starts.

Before it fires anything, the task reads its fires' records and works out where each recurring
fire goes next (``Chains.plan``). The next fires due in one second far enough ahead
(``CHAIN_REACH``: the task must be done with this second first) and inside the horizon (else
they are parked, for the pump) make a *chain* when there are at least ``BatchMinFires`` of
them: a batch named for this batch and that second (``chain_name``). Recording a fire then
plans its next fire into the chain (``Seat``) — the record write names the chain's execution,
so the next fire costs no write of its own to launch — and the chain starts once each of its
fires is recorded or has ended otherwise, or ``CHAIN_MARGIN`` before its second, whichever
comes first. A fire recorded after its chain started gets an execution of its own, as a lone
fire does; so does one whose next fire is not where it was foreseen (a change, a catch-up).

A task retried after a crash finds the same chains (the names depend on this batch and the
second only) and the fires it had written into them; a chain it had started is started again
harmlessly. A chain whose start is refused (a quota, throttling) parks its fires again, due
now, for the pump; one never started at all (the task failed past its retries) is found by the
reconciler, which gives each of its fires an execution of its own.
"""

from __future__ import annotations

import logging
import threading
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
from tickwork.domain.batch import BatchedFire, BatchOrder, chain_name
from tickwork.domain.errors import ActionConflict, LaunchRefused
from tickwork.usecases.record import following_fire

__all__ = ["CHAIN_MARGIN", "CHAIN_REACH", "Chains", "Seat"]

log = logging.getLogger("tickwork")

# A next fire nearer than this after its fire runs alone: the task must be done with the
# fire's second (its fires each at their millisecond, recorded) before the chain starts.
CHAIN_REACH = timedelta(seconds=10)
# A chain starts at the latest this long before its second, whoever has not joined it yet.
CHAIN_MARGIN = timedelta(seconds=3)
_POLL_SECONDS = 0.2  # the longest the starter sleeps between looks at its chains


@dataclass
class _Chain:
    second: datetime
    name: str
    arn: str
    expected: set[str]  # action ids foreseen to join
    joined: dict[str, BatchedFire] = field(default_factory=dict)
    writing: set[str] = field(default_factory=set)  # planned into it, the write not landed yet
    settled: set[str] = field(default_factory=set)  # their fire ended (joined or not)
    started: bool = False

    def ready(self, now: datetime) -> bool:
        if self.writing:
            return False
        return self.expected <= self.settled or now >= self.second - CHAIN_MARGIN


class Chains:
    """The chains of one batch task: planned from its fires' records, joined as they are
    recorded, started by ``start_when_ready``."""

    def __init__(self, parent: str, deps: Dependencies) -> None:
        self._parent = parent
        self._deps = deps
        self._chains: dict[datetime, _Chain] = {}
        self._of: dict[str, _Chain] = {}  # action id -> the chain its next fire is foreseen in
        self._lock = threading.Condition()

    # --- planning ------------------------------------------------------------------------------
    def plan(self, fires: list[tuple[BatchedFire, Action | None]]) -> None:
        """Foresee, from each fire and its record as read, where its next fire goes; make the
        chains of the seconds with at least ``BatchMinFires`` of them (or with fires a retried
        task had written into them already)."""
        deps = self._deps
        foreseen: dict[datetime, list[str]] = {}
        joined: dict[datetime, list[BatchedFire]] = {}
        for fire, action in fires:
            if action is None:
                continue
            if action.fire_key == fire.key:
                second = self._next_second(fire, action)
                if second is not None:
                    foreseen.setdefault(second, []).append(fire.action_id)
            elif self._written_before(fire, action):
                assert action.execution_time is not None
                second = action.execution_time.replace(microsecond=0)
                joined.setdefault(second, []).append(
                    BatchedFire(
                        action.id, action.generation, action.occurrence, action.execution_time
                    )
                )
        for second in sorted(set(foreseen) | set(joined)):
            ids, before = foreseen.get(second, []), joined.get(second, [])
            if len(ids) + len(before) < deps.settings.batch_min_fires and not before:
                continue
            name = chain_name(self._parent, second)
            chain = _Chain(second, name, deps.batches.execution_arn(name), set(ids))
            chain.joined.update({f.action_id: f for f in before})
            chain.settled.update(f.action_id for f in before)
            self._chains[second] = chain
            self._of.update(dict.fromkeys(ids, chain))

    def _next_second(self, fire: BatchedFire, action: Action) -> datetime | None:
        """The second of the fire's next fire, when a chain can hold it."""
        deps = self._deps
        if action.status not in (Status.PENDING, Status.IN_PROGRESS):
            return None
        now = max(deps.clock.now(), fire.fire_at)
        following = following_fire(action, fire.fire_at, fire.occurrence, now)
        if following is None or following - fire.fire_at < CHAIN_REACH:
            return None
        if following - now > deps.settings.launch_ahead:
            return None  # parked: the pump launches it
        return following.replace(microsecond=0)

    def _written_before(self, fire: BatchedFire, action: Action) -> bool:
        """A retried task: this fire was recorded by this batch, its next fire written into
        one of this batch's chains."""
        name = (action.execution_arn or "").rpartition(":")[2]
        return (
            action.status == Status.PENDING
            and (action.id, action.generation, action.occurrence)
            == (fire.action_id, fire.generation, fire.occurrence + 1)
            and action.execution_time is not None
            and name == chain_name(self._parent, action.execution_time.replace(microsecond=0))
        )

    # --- joining -------------------------------------------------------------------------------
    def seat(self, fire: BatchedFire) -> Seat | None:
        chain = self._of.get(fire.action_id)
        return None if chain is None else Seat(self, chain, fire)

    def _take(self, chain: _Chain, fire: BatchedFire, following: Action) -> str | None:
        expected = (fire.action_id, fire.generation, fire.occurrence + 1, 0)
        due = following.execution_time
        with self._lock:
            if chain.started or following.fire_key != expected or due is None:
                return None
            if due.replace(microsecond=0) != chain.second:
                return None
            chain.writing.add(fire.action_id)
            chain.joined[fire.action_id] = BatchedFire(
                following.id, following.generation, following.occurrence, due
            )
            return chain.arn

    def _taken(self, chain: _Chain, fire: BatchedFire, written: bool) -> None:
        with self._lock:
            chain.writing.discard(fire.action_id)
            if not written:
                chain.joined.pop(fire.action_id, None)
            self._lock.notify_all()

    def settle(self, fire: BatchedFire) -> None:
        """The fire's part in the task is over (whatever became of it)."""
        chain = self._of.get(fire.action_id)
        if chain is None:
            return
        with self._lock:
            chain.settled.add(fire.action_id)
            self._lock.notify_all()

    # --- starting ------------------------------------------------------------------------------
    def start_when_ready(self) -> list[str]:
        """Start each chain when it is ready (see ``_Chain.ready``); return when every one is
        started. The names of the chains started with fires in them."""
        started: list[str] = []
        while True:
            with self._lock:
                now = self._deps.clock.now()
                ready = [c for c in self._chains.values() if not c.started and c.ready(now)]
                for chain in ready:
                    chain.started = True
                waiting = [c for c in self._chains.values() if not c.started]
                if not ready and waiting:
                    earliest = min(c.second - CHAIN_MARGIN for c in waiting) - now
                    self._lock.wait(min(_POLL_SECONDS, max(0.01, earliest.total_seconds())))
                    continue
            for chain in ready:
                if self._start(chain):
                    started.append(chain.name)
            if not waiting:
                return started

    def _start(self, chain: _Chain) -> bool:
        fires = tuple(sorted(chain.joined.values(), key=lambda f: f.action_id))
        if not fires:
            return False
        try:
            self._deps.batches.start(chain.name, BatchOrder(chain.second, fires))
        except LaunchRefused as refused:
            log.warning("chained batch refused, its fires parked again: %s", refused)
            for fire in fires:
                self._park_again(fire, chain.arn)
            return False
        return True

    def _park_again(self, fire: BatchedFire, arn: str) -> None:
        deps = self._deps
        for _ in range(3):
            action = deps.records.get(fire.action_id)
            if action is None or action.fire_key != fire.key or action.execution_arn != arn:
                return  # it moved on: whatever moved it launches it
            now = deps.clock.now()
            with suppress(ActionConflict):
                deps.records.save(action.parked_again(now, now), expected_version=action.version)
                return


@dataclass(frozen=True)
class Seat:
    """One fire's place in its foreseen chain (``record.NextSeat``)."""

    chains: Chains
    chain: _Chain
    fire: BatchedFire

    def take(self, following: Action) -> str | None:
        return self.chains._take(self.chain, self.fire, following)

    def taken(self, written: bool) -> None:
        self.chains._taken(self.chain, self.fire, written)
