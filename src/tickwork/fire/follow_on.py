"""A batch's recurring members go on together: their next fires, due together again, share a
*follow-on batch*, which the batch task starts.

Before it fires anything, the task reads its members' records and works out where each
recurring member goes next (``FollowOns.plan``). The next fires due in one batch window
(``fire.grouping``) far enough ahead (``FOLLOW_ON_REACH``: the task must be done with
this batch's fires first) and inside the horizon (else they are parked, for the pump) make a
follow-on batch when there are at least ``BatchMinFires`` of them: named for this batch and
that window (``follow_on_name``); its Wait ends at its earliest member's second, and its
deadline below counts from the second of its earliest fire foreseen. Recording
a member then plans its next fire into the follow-on (``Seat``) — the record write names the
follow-on's execution, so the next fire costs no write of its own to launch — and the follow-on
starts once each of its members is recorded or has ended otherwise, or at its deadline,
whichever comes first: ``FOLLOW_ON_MARGIN`` before its second — or, for a batch that runs late
(its task began after that moment), up to ``FOLLOW_ON_GRACE`` after its task planned it but no
later than ``FOLLOW_ON_LAST`` before the second, so that members recorded in the first moments
still join rather than each starting an execution of its own; a next fire nearer than that runs
alone. A member recorded after its follow-on started gets an
execution of its own, as a lone fire does; so does one whose next fire is not where it was
foreseen (a change, a catch-up).

A task retried after a crash finds the same follow-ons (the names depend on this batch and the
window only) and the members it had written into them; one it had started is started again
harmlessly, and a member the retry writes into it that the earlier start did not list (it was
still firing when that attempt died) is given an execution of its own. A follow-on whose start
is refused (a quota, throttling) parks its members again, due now, for the pump; one never
started at all (the task failed past its retries) is found by the reconciler, which gives each
of its members an execution of its own.
"""

from __future__ import annotations

import logging
import threading
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from tickwork.domain.action import Action, Status
from tickwork.domain.action.following import following_fire
from tickwork.domain.batch import BatchOrder, Member, follow_on_name, wait_second
from tickwork.domain.errors import ActionConflict, LaunchRefused
from tickwork.fire import grouping, writes
from tickwork.fire.grouping import by_window, gathers
from tickwork.fire.launch import launch, park_again
from tickwork.fire.needs import Fires
from tickwork.fire.orders import names_key, start_batch_listing
from tickwork.fire.planning import plan

__all__ = [
    "FOLLOW_ON_GRACE",
    "FOLLOW_ON_LAST",
    "FOLLOW_ON_MARGIN",
    "FOLLOW_ON_REACH",
    "FollowOns",
    "Seat",
]

log = logging.getLogger("tickwork")

# A next fire nearer than this after its fire runs alone: the task must be done with the
# fire's second (its members each at their millisecond, recorded) before the follow-on starts.
FOLLOW_ON_REACH = timedelta(seconds=10)
# A follow-on starts at the latest this long before its second, whoever has not joined it yet.
FOLLOW_ON_MARGIN = timedelta(seconds=3)
# A late batch's follow-on waits this long after it was planned for its members to join ...
FOLLOW_ON_GRACE = timedelta(seconds=2)
# ... but starts at least this long before its second (a nearer next fire runs alone).
FOLLOW_ON_LAST = timedelta(seconds=1)
_POLL_SECONDS = 0.2  # the longest the starter sleeps between looks at its follow-ons


@dataclass
class _FollowOn:
    window: datetime  # the batch window its members' fires are due in
    second: datetime  # its earliest foreseen fire's second: its deadline counts from it
    name: str
    arn: str
    expected: set[str]  # action ids foreseen to join
    deadline: datetime  # it starts then at the latest, whoever has not joined
    joined: dict[str, Member] = field(default_factory=dict)
    writing: set[str] = field(default_factory=set)  # planned into it, the write not landed yet
    ended: set[str] = field(default_factory=set)  # their fire's part is over (joined or not)
    started: bool = False

    def ready(self, now: datetime) -> bool:
        if self.writing:
            return False
        return self.expected <= self.ended or now >= self.deadline


class FollowOns:
    """The follow-on batches of one batch task: planned from its members' records, joined as
    they are recorded, started by ``start_when_ready``."""

    def __init__(self, parent: str, deps: Fires) -> None:
        self._parent = parent
        self._deps = deps
        self._batches: dict[datetime, _FollowOn] = {}
        self._of: dict[str, _FollowOn] = {}  # action id -> the follow-on its next fire joins
        self._lock = threading.Condition()

    # --- planning ------------------------------------------------------------------------------
    def plan(self, fires: list[tuple[Member, Action | None]]) -> None:
        """Foresee, from each member and its record as read, where its next fire goes; make the
        follow-ons of the seconds with at least ``BatchMinFires`` of them (or with fires a
        retried task had written into them already)."""
        deps = self._deps
        settings = deps.settings
        now = deps.clock.now()
        coming: list[tuple[datetime, tuple[str, datetime]]] = []
        written: list[tuple[datetime, Member]] = []
        for fire, action in fires:
            if action is None:
                continue
            if action.fire_key == fire.key:
                following = self._next_fire(fire, action)
                if following is not None:
                    coming.append((following, (fire.action_id, following)))
            elif self._written_before(fire, action):
                assert action.execution_time is not None
                at = action.execution_time
                written.append((at, Member(action.id, action.generation, action.occurrence, at)))
        foreseen, joined = by_window(coming, settings), by_window(written, settings)
        for window in sorted(set(foreseen) | set(joined)):
            next_fires, before = foreseen.get(window, []), joined.get(window, [])
            if not before and not gathers(len(next_fires), settings):
                continue
            ids = {action_id for action_id, _ in next_fires}
            first = min([at for _, at in next_fires] + [f.fire_at for f in before])
            second = first.replace(microsecond=0)
            name = follow_on_name(self._parent, window, key=names_key(deps))
            arn = deps.batches.execution_arn(name)
            follow_on = _FollowOn(window, second, name, arn, ids, _deadline(second, now))
            follow_on.joined.update({f.action_id: f for f in before})
            follow_on.ended.update(f.action_id for f in before)
            self._batches[window] = follow_on
            self._of.update(dict.fromkeys(ids, follow_on))

    def _next_fire(self, fire: Member, action: Action) -> datetime | None:
        """The fire's next fire time, when a follow-on can hold it."""
        deps = self._deps
        if action.status not in (Status.PENDING, Status.IN_PROGRESS):
            return None
        now = max(deps.clock.now(), fire.fire_at)
        following = following_fire(action, fire.fire_at, fire.occurrence, now)
        if following is None or following - fire.fire_at < FOLLOW_ON_REACH:
            return None
        if following - now > deps.settings.launch_ahead:
            return None  # parked: the pump launches it
        if following - now <= FOLLOW_ON_LAST:
            return None  # too near to wait for the others: it runs alone
        return following

    def _written_before(self, fire: Member, action: Action) -> bool:
        """A retried task: this member was recorded by this batch, its next fire written into
        one of this batch's follow-ons."""
        if action.execution_time is None:
            return False
        window = grouping.window(action.execution_time, self._deps.settings)
        follow_on = self._deps.batches.execution_arn(
            follow_on_name(self._parent, window, key=names_key(self._deps))
        )
        return (
            action.status == Status.PENDING
            and (action.id, action.generation, action.occurrence)
            == (fire.action_id, fire.generation, fire.occurrence + 1)
            and action.execution_arn == follow_on
        )

    # --- joining -------------------------------------------------------------------------------
    def seat(self, fire: Member) -> Seat | None:
        follow_on = self._of.get(fire.action_id)
        return None if follow_on is None else Seat(self, follow_on, fire)

    def _take(self, follow_on: _FollowOn, fire: Member, following: Action) -> str | None:
        expected = (fire.action_id, fire.generation, fire.occurrence + 1, 0)
        due = following.execution_time
        with self._lock:
            if follow_on.started or following.fire_key != expected or due is None:
                return None
            if grouping.window(due, self._deps.settings) != follow_on.window:
                return None
            follow_on.writing.add(fire.action_id)
            follow_on.joined[fire.action_id] = Member(
                following.id, following.generation, following.occurrence, due
            )
            return follow_on.arn

    def _taken(self, follow_on: _FollowOn, fire: Member, written: bool) -> None:
        with self._lock:
            follow_on.writing.discard(fire.action_id)
            if not written:
                follow_on.joined.pop(fire.action_id, None)
            self._lock.notify_all()

    def done_with(self, fire: Member) -> None:
        """The fire's part in the task is over (whatever became of it)."""
        follow_on = self._of.get(fire.action_id)
        if follow_on is None:
            return
        with self._lock:
            follow_on.ended.add(fire.action_id)
            self._lock.notify_all()

    # --- starting ------------------------------------------------------------------------------
    def start_when_ready(self) -> list[str]:
        """Start each follow-on when it is ready (see ``_FollowOn.ready``); return when every
        one is started. The names of those started with members in them."""
        started: list[str] = []
        while True:
            with self._lock:
                now = self._deps.clock.now()
                ready = [c for c in self._batches.values() if not c.started and c.ready(now)]
                for follow_on in ready:
                    follow_on.started = True
                waiting = [c for c in self._batches.values() if not c.started]
                if not ready and waiting:
                    earliest = min(c.deadline for c in waiting) - now
                    self._lock.wait(min(_POLL_SECONDS, max(0.01, earliest.total_seconds())))
                    continue
            for follow_on in ready:
                if self._start(follow_on):
                    started.append(follow_on.name)
            if not waiting:
                return started

    def _start(self, follow_on: _FollowOn) -> bool:
        members = tuple(sorted(follow_on.joined.values(), key=lambda f: f.action_id))
        if not members:
            return False
        try:
            order = BatchOrder(wait_second(members), members)
            _, listed = start_batch_listing(follow_on.name, order, self._deps)
        except LaunchRefused as refused:
            log.warning("follow-on batch refused, its members parked again: %s", refused)
            now = self._deps.clock.now()
            for member in members:
                action = self._deps.records.get(member.action_id)
                if action is not None and action.fire_key == member.key:
                    park_again(action, follow_on.arn, now, self._deps, refused)
            return False
        for member in members:
            if member.key not in listed:
                _alone(member, follow_on.arn, self._deps)
        return True


def _alone(member: Member, follow_on: str, deps: Fires) -> None:
    """A member written into a follow-on that an earlier attempt of the task had started
    without it (that attempt died while the member was still firing): the follow-on will never
    fire it, so the record names the fire's own execution instead (fenced: only while it still
    names the follow-on for this fire), which then starts."""
    now = deps.clock.now()
    written = None
    with suppress(ActionConflict):
        written = writes.name_follow_on_member(
            deps.records, member.key, follow_on, lambda current: plan(current, now, deps)
        )
    if written is not None:
        launch(written.after, now, deps)


def _deadline(second: datetime, planned: datetime) -> datetime:
    """When a follow-on starts at the latest (see the module's docstring)."""
    late = min(planned + FOLLOW_ON_GRACE, second - FOLLOW_ON_LAST)
    return max(second - FOLLOW_ON_MARGIN, late)


@dataclass(frozen=True)
class Seat:
    """One member's place in its foreseen follow-on batch (``record.NextSeat``)."""

    owner: FollowOns
    follow_on: _FollowOn
    fire: Member

    def take(self, following: Action) -> str | None:
        return self.owner._take(self.follow_on, self.fire, following)

    def taken(self, written: bool) -> None:
        self.owner._taken(self.follow_on, self.fire, written)
