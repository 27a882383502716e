"""Scoring a chaos run: per fault kind and in total, fires expected and observed, lost,
duplicated, early, wrong, and lateness p50/p99/max.

- observed: expected fires with a terminal delivery (a 200, or the 400 of a permanent failure);
- lost: expected fires with none, once the run has settled;
- duplicated: terminal deliveries beyond the first of the same (version, occurrence);
- replayed: a fire the kill caught mid-way: delivered once before the kill, once more after
  the restart, and recorded in the action's history only once, after the kill (its tick was
  lost with the stack, its claim released on restart). tickwork fires at least once across a
  crash in the middle of a fire, so this is reported but does not fail the run; the run kills
  at a quiet moment to keep it at 0;
- overlapped: an expected fire never delivered that the stack recorded SKIPPED under its
  overlap policy (SKIP, the default) because the fire before it was still being attempted when
  it came due — a late fire on a busy machine makes this happen by design. It is taken as such
  only when the earlier fire's history entry (timed by its ending) is not before this one came
  due, and the receiver corroborates it: that earlier fire's last request arrived at most
  ``OVERLAP_SLACK`` before this one came due (its attempt ends after its last request).
  Reported, not a failure; uncorroborated, the fire is lost;
- early: deliveries (any answer, retries included) received before the scheduled time;
- wrong: fires nobody expected (e.g. the old data after an update was accepted, a fire after
  an accepted cancel), broken locks, unexpected API answers, and a wrong final status;
- lateness: first terminal delivery minus scheduled time, in seconds.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from chaoskit.expectations import Expected, epoch
from chaoskit.plan import Kind
from chaoskit.receiver import Delivery

__all__ = ["Row", "Score", "format_table", "score", "straddling"]

TOTAL = "total"
_COLUMNS = (
    "actions",
    "expected",
    "observed",
    "lost",
    "duplicated",
    "replayed",
    "overlapped",
    "early",
    "wrong",
)
AFTER_KILL = "(after the kill, all kinds)"
# An attempt ends after its last request reached the receiver (the answer, then the stack's
# clock): a skip is corroborated when that request came at most this long before the
# occurrence came due. A skip of one due long after the fire before it ended is a lost fire.
OVERLAP_SLACK = 2.0
_OVERLAP = "overlap: came due while occurrence "


@dataclass
class Row:
    name: str
    actions: int = 0
    expected: int = 0
    observed: int = 0
    lost: int = 0
    duplicated: int = 0
    replayed: int = 0
    overlapped: int = 0
    early: int = 0
    wrong: int = 0
    lateness: list[float] = field(default_factory=list)

    def add(self, other: Row) -> None:
        for name in _COLUMNS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.lateness.extend(other.lateness)

    @property
    def failed(self) -> bool:
        return bool(self.lost or self.duplicated or self.early or self.wrong)

    def as_dict(self) -> dict[str, Any]:
        stats = {f"lateness_{k}": v for k, v in _lateness(self.lateness).items()}
        row = asdict(self)
        del row["lateness"]
        return {**row, **stats}


@dataclass
class Score:
    rows: list[Row]
    problems: dict[str, list[str]]  # action id -> what went wrong with it

    @property
    def total(self) -> Row:
        return next(r for r in self.rows if r.name == TOTAL)


def score(
    expectations: list[Expected],
    deliveries: list[Delivery],
    final_status: dict[str, str],
    kill_at: float,
    recorded: dict[str, list[dict[str, Any]]],
) -> Score:
    """``recorded``: the occurrence history of each action (as the API gives it): the evidence
    of which fires the kill caught mid-way (see ``straddling``), and of the occurrences the
    overlap policy skipped."""
    by_action: dict[str, list[Delivery]] = defaultdict(list)
    for delivery in sorted(deliveries, key=lambda d: d.received):
        by_action[delivery.action_id].append(delivery)
    rows = {kind: Row(str(kind)) for kind in Kind}
    after_kill = Row(AFTER_KILL)
    problems: dict[str, list[str]] = {}
    for expected in expectations:
        action_id = expected.action.id
        row, late_row, found = _score_action(
            expected,
            by_action.pop(action_id, []),
            final_status.get(action_id),
            kill_at,
            recorded.get(action_id, []),
        )
        rows[expected.action.kind].add(row)
        after_kill.add(late_row)
        if found:
            problems[action_id] = found
    for action_id, strays in by_action.items():  # deliveries for no planned action at all
        problems[action_id] = [f"{len(strays)} deliveries for an action that was never planned"]
        rows[Kind.NONE].wrong += len(strays)
    total = Row(TOTAL)
    for row in rows.values():
        total.add(row)
    return Score([*rows.values(), total, after_kill], problems)


def _score_action(
    expected: Expected,
    deliveries: list[Delivery],
    status: str | None,
    kill_at: float,
    history: list[dict[str, Any]],
) -> tuple[Row, Row, list[str]]:
    row, late_row = Row(expected.action.kind), Row(AFTER_KILL)
    row.actions = 1
    problems = list(expected.problems)
    row.wrong += len(expected.problems)
    by_key: dict[tuple[int, int], list[Delivery]] = defaultdict(list)
    for delivery in deliveries:
        by_key[(delivery.version, delivery.occurrence)].append(delivery)
    delivered = dict(by_key)
    for key, scheduled in sorted(expected.fires.items()):
        recorded_at = [epoch(h["actualTime"]) for h in history if h["occurrence"] == key[1]]
        replayed = _replayed(by_key.get(key, []), kill_at, recorded_at)
        fire = _score_fire(key, scheduled, by_key.pop(key, []), problems, replayed)
        if fire.lost and _overlapped(key, scheduled, history, delivered, problems):
            fire.lost, fire.overlapped = 0, 1
        row.add(fire)
        if scheduled >= kill_at:
            late_row.add(fire)
            late_row.actions = 1
    for key, strays in sorted(by_key.items()):
        terminal = [d for d in strays if d.terminal]
        if terminal:
            row.wrong += 1
            row.duplicated += len(terminal) - 1
            problems.append(f"unexpected fire v{key[0]} occurrence {key[1]}: {_times(terminal)}")
    if status != expected.final_status:
        row.wrong += 1
        problems.append(f"ended {status}, expected {expected.final_status}")
    return row, late_row, problems


def _score_fire(
    key: tuple[int, int],
    scheduled: float,
    deliveries: list[Delivery],
    problems: list[str],
    replayed: bool,
) -> Row:
    """One expected fire, scored as a Row of its own (added to its kind's row by the caller)."""
    row = Row("fire", expected=1)
    terminal = [d for d in deliveries if d.terminal]
    early = [d for d in deliveries if d.received < scheduled]
    if early:
        row.early += len(early)
        problems.append(
            f"v{key[0]} occurrence {key[1]} delivered {scheduled - early[0].received:.3f}s early"
        )
    if not terminal:
        row.lost += 1
        problems.append(f"v{key[0]} occurrence {key[1]} due {scheduled:.3f} never delivered")
        return row
    row.observed += 1
    row.lateness.append(terminal[0].received - scheduled)
    if replayed:
        row.replayed += 1
        problems.append(f"v{key[0]} occurrence {key[1]} in flight at the kill, fired again")
    elif len(terminal) > 1:
        row.duplicated += len(terminal) - 1
        problems.append(
            f"v{key[0]} occurrence {key[1]} delivered {len(terminal)} times: {_times(terminal)}"
        )
    return row


def _overlapped(
    key: tuple[int, int],
    scheduled: float,
    history: list[dict[str, Any]],
    delivered: dict[tuple[int, int], list[Delivery]],
    problems: list[str],
) -> bool:
    """The fire ``key`` (due at ``scheduled``) was recorded SKIPPED as an overlap of an earlier
    occurrence whose last request reached the receiver at most ``OVERLAP_SLACK`` before it came
    due. Its "never delivered" problem is replaced by what the record and the receiver say."""
    skip = next(
        (
            h
            for h in history
            if h.get("occurrence") == key[1]
            and h.get("outcome") == "SKIPPED"
            and str(h.get("reason") or "").startswith(_OVERLAP)
            and abs(epoch(str(h.get("scheduledTime"))) - scheduled) < 0.002
        ),
        None,
    )
    if skip is None:
        return False
    earlier = int(str(skip["reason"])[len(_OVERLAP) :].split(" ", 1)[0])
    requests = delivered.get((key[0], earlier), [])
    last = max((d.received for d in requests), default=None)
    lost = f"v{key[0]} occurrence {key[1]} due {scheduled:.3f} never delivered"
    # The record's own word first: the earlier fire's entry is timed by its ending (a tick's
    # actual time, a failure's failedAt), which must not lie before this one came due.
    ended = [
        epoch(str(h["actualTime"]))
        for h in history
        if h.get("occurrence") == earlier and h.get("outcome") in ("FIRED", "FAILED")
    ]
    if not ended or max(ended) + 0.001 < scheduled:
        when = "is not in the history" if not ended else f"ended {scheduled - max(ended):.3f}s"
        problems[problems.index(lost)] = (
            f"{lost}: recorded SKIPPED as an overlap of occurrence {earlier}, which "
            f"{when}{' before it came due' if ended else ''}"
        )
        return False
    if last is None or last < scheduled - OVERLAP_SLACK:
        seen = (
            "never reached the receiver"
            if last is None
            else f"came {scheduled - last:.3f}s before it came due"
        )
        problems[problems.index(lost)] = (
            f"{lost}: recorded SKIPPED as an overlap of occurrence {earlier}, whose last request "
            f"{seen}"
        )
        return False
    problems.remove(lost)
    return True


def straddling(deliveries: list[Delivery], kill_at: float) -> set[str]:
    """Actions with a fire delivered (terminally) both before and after the kill."""
    times: dict[tuple[str, int, int], list[float]] = defaultdict(list)
    for d in deliveries:
        if d.terminal:
            times[(d.action_id, d.version, d.occurrence)].append(d.received)
    return {key[0] for key, at in times.items() if min(at) < kill_at < max(at)}


def _replayed(deliveries: list[Delivery], kill_at: float, recorded_at: list[float]) -> bool:
    """Delivered before the kill and again after it, and recorded once, after the kill."""
    terminal = [d for d in deliveries if d.terminal]
    return (
        len(terminal) == 2
        and terminal[0].received < kill_at < terminal[1].received
        and len(recorded_at) == 1
        and recorded_at[0] > kill_at
    )


def _times(deliveries: list[Delivery]) -> str:
    return ", ".join(f"{d.received:.3f} ({d.status})" for d in deliveries)


def _lateness(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    ordered = sorted(values)
    return {
        "p50": round(_rank(ordered, 0.50), 3),
        "p99": round(_rank(ordered, 0.99), 3),
        "max": round(ordered[-1], 3),
    }


def _rank(ordered: list[float], quantile: float) -> float:
    """Nearest-rank percentile."""
    return ordered[max(0, math.ceil(quantile * len(ordered)) - 1)]


def format_table(rows: list[Row]) -> str:
    head = f"{'fault kind':<28}" + "".join(f"{c:>11}" for c in _COLUMNS)
    head += f"{'p50 s':>9}{'p99 s':>9}{'max s':>9}"
    lines = [head, "-" * len(head)]
    for row in rows:
        if row.name == TOTAL:
            lines.append("-" * len(head))
        stats = _lateness(row.lateness)
        cells = "".join(f"{getattr(row, c):>11}" for c in _COLUMNS)
        late = "".join(f"{_seconds(stats[k]):>9}" for k in ("p50", "p99", "max"))
        lines.append(f"{row.name:<28}{cells}{late}")
    return "\n".join(lines)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
