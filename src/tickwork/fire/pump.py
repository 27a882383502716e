"""The pump: every parked fire that comes within ``LaunchAheadSeconds`` gets its execution.

A fire further away than the horizon waits in the table only (``launch.plan`` parks it), so
the account's open executions are the fires due within the horizon, not every pending action.
The pump runs on the template's schedule. For each parked fire due for launch it starts its
execution under the fire's deterministic name (a repeat is harmless). A fire parked far — the
default path of every fire further away than the horizon, found by its fire time — is started
without a write: its record names no execution and waits for whichever proved execution of its
fire claims it first (``Action.waits_for``); the watermark the run moves past it is what says it
was launched. A fire parked near (in the Parked index: due now, parked again) is first marked
launched into the execution it names (a write fenced on its version, which takes it out of the
index: docs/protocol.md). The fires due in one batch window, when there are at least
``BatchMinFires`` of them, share one execution of the batch machine instead
(``fire.grouping``), its members marked or not alike. Nothing is missed or doubled:

- a pump that was down finds every fire it should have launched (the index is read from a
  watermark, not from "now"); the execution fires late and the action's catch-up policy
  decides, as for any missed fire;
- a Start, update, pause or cancel that races the pump moves the record to a new fire key (or,
  parked near, its version: the pump reads it again and marks the same fire, or leaves it);
  an execution for the old key finds it moved on and ends quietly, having called nothing;
- two launches of one fire (runs that met on it) are fenced by its claim: one execution claims
  it, the other finds it claimed, or recorded, and ends quietly;
- a crash between a mark and the start leaves a record naming an execution that never
  started: the reconciler starts it (``restarted``); a fire parked far whose execution never
  started (or was lost) is still unclaimed past its time: the reconciler starts it alone
  ``MissedGraceSeconds`` after it;
- a refused start (``ExecutionLimitExceeded``, throttling) leaves the fire parked, due (a
  marked one parked again, due now), and ends the run: the next run retries it (the watermark
  holds at it), and the refusals raise the alarm. A refused batch leaves every one of its fires
  parked the same way.

**Fan-out.** A run that finds more than ``PumpShareFires`` fires due hands each shard of the
Parked index to a pump worker (``PumpWorkers``: the template's ``PumpWorkerFunction``, invoked
asynchronously), which reads its shard and launches what is due there the same way
(``pump_shard``); a shard with more than a share due launches its earliest share and hands
each further share to a worker of its own (``launch_due``). Reads and launches then go on
side by side, as many workers as there is work, not in one function's CPU. Shares keep the
fires of a launch moment (a batch window's) together where they can
(``domain.pump_shares``), so they still share batches; a quiet run launches everything itself,
across shards, as before. A shard or a share that cannot be handed out stays parked for the
next run; two runs (or workers) that meet on one fire are fenced as ever: one marks it, the
other finds it moved. Only the run moves the watermark; a worker reads from it.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from tickwork.domain.action import Action
from tickwork.domain.errors import LaunchRefused
from tickwork.domain.pump_shares import shares
from tickwork.fire import writes
from tickwork.fire.grouping import Planned, group
from tickwork.fire.launch import park_again
from tickwork.fire.needs import Pumps
from tickwork.fire.orders import start_batch, start_lone
from tickwork.fire.planning import fire_order, planned_execution
from tickwork.fire.writes import is_due_parked
from tickwork.ports.pump_workers import PumpWorkers

__all__ = ["PumpRun", "held", "launch_due", "launch_parked", "launch_share", "pump", "pump_shard"]

log = logging.getLogger("tickwork")

# Launches in flight at once: each is a read and a StartExecution (and a write, parked near:
# ~2-3 round trips), so one at a time would cap the pump near 20-30 fires a second, under Step
# Functions' StartExecution refill rate (the capacity model in the README).
WORKERS = 16


@dataclass
class PumpRun:
    launched: list[str] = field(default_factory=list)  # ids: alone, or in one of ``batches``
    moved: list[str] = field(default_factory=list)  # changed meanwhile: nothing to launch
    refused: list[str] = field(default_factory=list)  # left parked: the next run retries
    batches: list[str] = field(default_factory=list)  # the batch executions started
    failed: list[str] = field(default_factory=list)  # an error (logged): the next run retries
    waiting: list[str] = field(default_factory=list)  # parked, not due for launch yet
    # to the pump's workers: "shard <k>" (a busy run's), or a shard's ids (a busy shard's)
    handed_out: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def pump(
    deps: Pumps,
    limit: int = 50_000,
    workers: int = WORKERS,
    fan_out: PumpWorkers | None = None,
    share: int | None = None,
) -> dict[str, Any]:
    """Launch the parked fires due for launch now, earliest first, at most ``limit`` a run,
    ``workers`` at a time: the fires of a second with at least ``BatchMinFires`` of them in
    batches (fire.grouping), the others alone. After a refusal the rest wait for the next
    run (the quota or the throttle holds for them as well). With ``fan_out``, a run that finds
    more than ``share`` fires (``PumpShareFires``) due hands each shard of the index to a
    worker instead (``pump_shard``)."""
    share = share or deps.settings.pump_share
    now = deps.clock.now()
    due = deps.parked.due_moments(now, share + 1 if fan_out is not None else limit)
    if fan_out is None or len(due) <= share:
        run = launch_due([action_id for _, action_id in due], now, deps, workers)
        if due:
            deps.parked.advance(now, held(due, run, cut=len(due) >= limit))
        return run.as_dict()
    # Each worker reads its shard from the watermarks and moves its own (advance): the run's
    # would pass fires the workers have not launched yet.
    run = PumpRun()
    shards = list(deps.parked.shards)
    with ThreadPoolExecutor(max_workers=min(workers, len(shards))) as pool:
        # A worker is invoked asynchronously: each hand-out returns at once on AWS.
        outs = [
            pool.submit(
                contextvars.copy_context().run,
                _handed_out,
                functools.partial(fan_out.hand_out_shard, k),
                {"shard": k},
            )
            for k in shards
        ]
        run.handed_out = [f"shard {k}" for k, out in zip(shards, outs, strict=True) if out.result()]
    return run.as_dict()


def pump_shard(
    deps: Pumps,
    shard: int,
    fan_out: PumpWorkers | None = None,
    limit: int = 1_000_000,
    workers: int = WORKERS,
    share: int | None = None,
) -> dict[str, Any]:
    """A worker's run over one shard of the parked fires due: launched as the pump launches
    them; past ``share`` (``PumpShareFires``), the earliest share launched here and each
    further share handed to a worker of its own (``launch_due``)."""
    share = share or deps.settings.pump_share
    now = deps.clock.now()
    due = deps.parked.due_moments(now, limit, shard=shard)
    cut = shares(due, share) if fan_out is not None else []
    if fan_out is None or len(cut) <= 1:  # one share (a launch moment holds up to two): here
        run = launch_due([action_id for _, action_id in due], now, deps, workers)
        if due:
            deps.parked.advance(now, held(due, run, cut=len(due) >= limit), shard=shard)
        return run.as_dict()
    first, *rest = cut
    handed: list[str] = []
    with ThreadPoolExecutor(max_workers=min(workers, len(rest))) as pool:
        outs = [
            pool.submit(
                contextvars.copy_context().run,
                _handed_out,
                functools.partial(fan_out.hand_out, s),
                {"fires": len(s), "first": s[0]},
            )
            for s in rest
        ]
        run = launch_due(first, now, deps, workers)
        for share_ids, out in zip(rest, outs, strict=True):
            if out.result():
                handed += share_ids
    run.handed_out = handed
    # the shares handed out are passed: their workers park due now what they do not launch
    deps.parked.advance(now, held(due, run, cut=len(due) >= limit), shard=shard)
    return run.as_dict()


def held(due: list[tuple[int, str]], run: PumpRun, cut: bool) -> list[tuple[int, str | None]]:
    """The fires ``due`` listed that the run did not finish (launched, found moved on, or
    handed to a worker, which parks due now what it does not launch: ``launch_share``), each
    with its launch moment: the next run reads its shard from there (``ParkedFires.advance``)
    — and every shard from the last listed when the list was ``cut`` at its limit (what
    follows was not read: ``None``)."""
    finished = set(run.launched) | set(run.moved) | set(run.handed_out)
    kept: list[tuple[int, str | None]] = [
        (moment, action_id) for moment, action_id in due if action_id not in finished
    ]
    return kept + ([(due[-1][0], None)] if cut and due else [])


def launch_share(due_ids: list[str], now: datetime, deps: Pumps) -> PumpRun:
    """A pump worker's share of a busy shard (``launch_due``); each fire it read due and did
    not launch (an error, a refusal before its turn) is parked due now (**park due now**),
    into the Parked index: the shard's watermark has passed the share, whose outcome its
    worker does not see."""
    run = launch_due(due_ids, now, deps)
    for action_id in sorted(set(due_ids) - set(run.launched) - set(run.moved)):
        try:
            action = deps.records.get(action_id)
            if action is not None:
                writes.park_due_now(deps.records, action, now)
        except Exception:  # the reconciler starts a parked fire the pump missed
            log.exception("could not park due now", extra={"id": action_id})
    return run


def _handed_out(hand_out: Callable[[], None], what: dict[str, Any]) -> bool:
    """Whether a shard or a share went to a worker (a failure is logged, ``what`` naming it:
    its fires stay parked for the next run)."""
    try:
        hand_out()
    except Exception:
        log.exception("hand-out failed", extra=what)
        return False
    return True


def launch_due(
    due_ids: list[str],
    now: datetime,
    deps: Pumps,
    workers: int = WORKERS,
    name_all: bool = False,
) -> PumpRun:
    """Launch the fires of ``due_ids`` still parked and due at ``now`` as the pump does: read
    each record, group them by second (batches, the rest alone), mark and start — a fire
    parked far is started without a mark (``Action.parked_far``: the watermark the run moves
    past it is what says it was launched), unless ``name_all`` (the reconciler's launches of
    what the pump missed: no watermark passes them). Each batch and each lone fire on its own:
    one that fails (an error, logged) is named in ``failed`` and keeps no other from its
    launch; it is still parked, or names an execution the reconciler starts."""
    run = PumpRun()
    refused = threading.Event()
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(due_ids) or 1))) as pool:
        # Each call runs in a copy of the caller's context (logging keys, tracing).
        reads = [pool.submit(contextvars.copy_context().run, _read, deps, i) for i in due_ids]
        read = [r.result() for r in reads]
        run.failed += [i for i, (_, failed) in zip(due_ids, read, strict=True) if failed]
        due = [a for a, _ in read if a is not None and is_due_parked(a, now)]
        run.waiting += sorted(
            a.id for a, _ in read if a is not None and a.is_parked and not is_due_parked(a, now)
        )
        run.moved += sorted(set(due_ids) - {a.id for a in due} - set(run.failed) - set(run.waiting))
        batches, alone = group(due, deps)
        for planned in batches:
            if refused.is_set():
                run.refused += [a.id for a in planned.actions]
                continue
            try:
                outcome = _launch_batch(planned, now, deps, run, pool, name_all)
            except Exception:
                log.exception("batch launch failed", extra={"batch": planned.name})
                outcome = "failed"
                run.failed += [a.id for a in planned.actions if a.id not in run.failed]
            if outcome == "refused":
                refused.set()

        def launch_one(action: Action) -> tuple[str, str | None]:
            if refused.is_set():
                return action.id, None  # still parked: the next run
            try:
                outcome = launch_parked(action.id, now, deps, action, name_all)
            except Exception:
                log.exception("launch failed", extra={"id": action.id})
                return action.id, "failed"
            if outcome == "refused":
                refused.set()
            return action.id, outcome

        launches = [pool.submit(contextvars.copy_context().run, launch_one, a) for a in alone]
        for launched in launches:
            action_id, result = launched.result()
            if result is not None:
                getattr(run, result).append(action_id)
    return run


def _read(deps: Pumps, action_id: str) -> tuple[Action | None, bool]:
    """The record, and whether reading it failed (logged: the others are launched)."""
    try:
        return deps.records.get(action_id), False
    except Exception:
        log.exception("read failed", extra={"id": action_id})
        return None, True


def _launch_batch(
    planned: Planned,
    now: datetime,
    deps: Pumps,
    run: PumpRun,
    pool: ThreadPoolExecutor,
    name_all: bool = False,
) -> str:
    """Mark each member launched into the batch (the pool's workers at a time: the record names
    the batch before it starts) — a member parked far is launched without a mark, unless
    ``name_all`` — then start it: "launched", or "refused" (every member it named parked
    again; those it did not name are still parked, due)."""
    arn = deps.batches.execution_arn(planned.name)

    def mark(action: Action) -> Action | None:
        if action.parked_far and not name_all:
            return action  # the batch claims it at its time, as it claims a named member
        return _mark(action, now, arn, deps)

    marks = [pool.submit(contextvars.copy_context().run, mark, a) for a in planned.actions]
    named: list[Action] = []
    for action, marked in zip(planned.actions, marks, strict=True):
        try:
            written = marked.result()
        except Exception:  # the others are marked: the batch starts for them
            log.exception("mark failed", extra={"id": action.id, "batch": planned.name})
            run.failed.append(action.id)
            continue
        if written is not None:
            named.append(written)
    try:
        if named:
            start_batch(planned.name, planned.order, deps)
    except LaunchRefused as refused:
        for action in named:
            if not action.parked_far:  # (one launched without a name is still parked, due)
                park_again(action, arn, now, deps, refused)
        run.refused += [a.id for a in planned.actions]
        return "refused"
    if named:
        run.batches.append(planned.name)
    launched = {a.id for a in named}
    for action in planned.actions:
        if action.id not in run.failed:
            (run.launched if action.id in launched else run.moved).append(action.id)
    return "launched"


def _mark(action: Action, now: datetime, arn: str, deps: Pumps) -> Action | None:
    """Mark one parked fire launched into the execution ``arn``, fenced on its version: the
    record as written, or None when it is no longer this parked fire, due now (whatever moved
    it has it)."""
    written = writes.mark_launched(deps.records, action, arn, now)
    return None if written is None else written.after


def launch_parked(
    action_id: str,
    now: datetime,
    deps: Pumps,
    action: Action | None = None,
    name_all: bool = False,
) -> str:
    """Mark the parked fire of ``action_id`` launched into its own execution, then start it:
    "launched", "moved" (no longer parked, or not due yet) or "refused" (parked again).
    ``action``: its record as just read, if the caller has it. A fire parked far is started
    without a mark (unless ``name_all``): the record, naming no execution, waits for the proved
    execution of its fire (``Action.waits_for``); refused, it is still parked, due."""
    action = action or deps.records.get(action_id)
    if action is None or not is_due_parked(action, now):
        return "moved"
    name, arn = planned_execution(action, deps)
    if action.parked_far and not name_all:
        try:
            start_lone(name, fire_order(action, now, deps), deps)
        except LaunchRefused as refused:
            log.warning("fire left parked: %s", refused, extra={"id": action.id})
            return "refused"
        return "launched"
    marked = _mark(action, now, arn, deps)
    if marked is None:
        return "moved"
    try:
        start_lone(name, fire_order(marked, now, deps), deps)
    except LaunchRefused as refused:
        park_again(marked, arn, now, deps, refused)
        return "refused"
    return "launched"
