"""How the CLI shows things: rich tables for people, JSON with --json for scripts."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.table import Table
from rich.text import Text

from tickwork.domain.times import parse_iso

__all__ = [
    "action_detail",
    "actions_table",
    "echo_result",
    "fire_times",
    "relative",
    "stats",
    "use_tsv",
]

# Wide enough for any row: where the output is no terminal, nothing is cut to fit.
_UNCUT = 10_000


class _Console(Console):
    """Tables at the terminal's width; in a pipe or a file (a CI log), at their full width,
    no value cut short (``COLUMNS`` still decides when it is set)."""

    def __init__(self) -> None:
        super().__init__()
        self._width = None  # measured at each print: Rich reads COLUMNS once, when made

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size
        if not self.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
            return ConsoleDimensions(_UNCUT, measured.height)
        return measured

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


console = _Console()
_TSV = [False]  # --tsv: tables as tab-separated lines


def use_tsv(on: bool = True) -> None:
    """Print tables as tab-separated lines (a header, then a row a line; tabs and newlines in a
    value become spaces) instead of drawn for people."""
    _TSV[0] = on


def _show(table: Table) -> None:
    """A table: drawn, or tab-separated under --tsv (plain text: no colours, no markup)."""
    if not _TSV[0]:
        console.print(table)
        return
    columns = table.columns
    print("\t".join(_plain(column.header) for column in columns))
    for cells in zip(*(list(column.cells) for column in columns), strict=True):
        print("\t".join(_plain(cell) for cell in cells))


def _plain(cell: Any) -> str:
    text = Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)
    return re.sub(r"[\t\r\n]+", " ", text)


STATUS_STYLE = {
    "PENDING": "cyan",
    "IN_PROGRESS": "yellow",
    "COMPLETED": "green",
    "FAILED": "bold red",
    "NO_ACTION": "magenta",
    "CANCELLED": "dim",
}


def _json(value: Any) -> None:
    print(json.dumps(value, indent=2, default=str))


def relative(moment: str | None, now: datetime | None = None) -> str:
    if not moment:
        return "—"
    seconds = (parse_iso(moment) - (now or datetime.now(UTC))).total_seconds()
    amount, unit = abs(seconds), "s"
    for size, name in ((86400, "d"), (3600, "h"), (60, "m")):
        if amount >= size:
            amount, unit = amount / size, name
            break
    text = f"{amount:.0f}{unit}" if unit != "s" else f"{amount:.1f}s"
    return f"in {text}" if seconds >= 0 else f"{text} ago"


def _status(status: str) -> str:
    return f"[{STATUS_STYLE.get(status, 'white')}]{status}[/]"


def echo_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        _json(result)
        return
    for key, value in result.items():
        if value is not None:
            console.print(f"[bold]{key}[/]: {value}", highlight=False)


def actions_table(
    rows: list[dict[str, Any]],
    as_json: bool,
    now: datetime | None = None,
    clock_note: str | None = None,
) -> None:
    """``now``: the stack's (a virtual-time local stack's is not the wall clock), and
    ``clock_note`` saying so under the table."""
    if as_json:
        _json(rows)
        return
    table = Table(title=f"{len(rows)} action(s)", title_justify="left", caption=clock_note)
    for column in ("id", "action", "status", "next fire", "occurrence", "left", "schedule"):
        table.add_column(column)
    for row in rows:
        nxt = row["executionTime"]
        table.add_row(
            row["id"],
            row["action"],
            _status(row["status"]),
            f"{nxt or '—'} ({relative(nxt, now)})"
            if nxt and row["status"] in ("PENDING", "IN_PROGRESS")
            else "—",
            str(row["occurrence"]),
            "∞" if row["executionRemainder"] is None else str(row["executionRemainder"]),
            row["schedule"],
        )
    _show(table)


def action_detail(view: dict[str, Any], as_json: bool, clock_note: str | None = None) -> None:
    if as_json:
        _json(view)
        return
    console.print(
        f"[bold]{view['id']}[/]  {_status(view['status'])}  {view['action']}  {view['schedule']}"
    )
    if clock_note:
        console.print(f"  [dim]{clock_note}[/]", highlight=False)
    for key in (
        "executionTime",
        "occurrence",
        "executionRemainder",
        "generation",
        "version",
        "retryCount",
        "lastError",
        "executionArn",
        "createdAt",
        "updatedAt",
    ):
        if view.get(key) is not None:
            console.print(f"  {key}: {view[key]}", highlight=False)
    retrying = view.get("retrying")
    if retrying:
        left = retrying["attemptsLeft"]
        console.print(
            f"  retrying: occurrence {retrying['occurrence']}, {retrying['attemptsMade']} "
            f"attempt(s) made, {'?' if left is None else left} left, none after "
            f"{retrying['deadline']}",
            highlight=False,
        )
    policy = [
        f"{key} {view[key]}"
        for key in (
            "lockSeconds",
            "maximumRetryAttempts",
            "maximumEventAgeSeconds",
            "catchUpOnResume",
            "overlapPolicy",
            "deadLetterArn",
        )
        if view.get(key) is not None
    ]
    if policy:
        console.print(f"  policy: {', '.join(policy)}", highlight=False)
    console.print(f"  data: {json.dumps(view['data'])}", highlight=False)
    history = Table(title="occurrences", title_justify="left")
    for column in ("#", "scheduled", "actual", "late", "attempts", "outcome", "error"):
        history.add_column(column)
    for h in view["history"]:
        late = h.get("lateMs")
        history.add_row(
            str(h["occurrence"]) if h.get("trigger", "SCHEDULED") == "SCHEDULED" else h["trigger"],
            h["scheduledTime"],
            h["actualTime"],
            "" if late is None else f"{late / 1000:.3f}s",
            str(h["attempts"]),
            _status(h["outcome"]) if h["outcome"] != "FIRED" else "[green]FIRED[/]",
            h.get("error") or h.get("reason") or "",
        )
    _show(history)


def stats(answer: dict[str, Any], as_json: bool) -> None:
    """``GET /stats``'s answer: the actions by status (each once: the title is their sum),
    those needing attention apart, and the fires of the last hour and day."""
    if as_json:
        _json(answer)
        return
    by_status: dict[str, int] = answer["byStatus"]
    table = Table(title=f"{sum(by_status.values())} action(s)", title_justify="left")
    table.add_column("status")
    table.add_column("count", justify="right")
    for status, count in by_status.items():
        table.add_row(_status(status), str(count))
    _show(table)
    if _TSV[0]:  # the rest as name, value lines
        print(f"needsAttention\t{answer['needsAttention']}")
        for name in ("lastHour", "lastDay"):
            for key, value in answer[name].items():
                print(f"{name}.{key}\t{value}")
        return
    console.print(f"needing attention (of those above): {answer['needsAttention']}")
    for name, label in (("lastHour", "last hour"), ("lastDay", "last day")):
        fires = answer[name]
        console.print(
            f"fires, {label}: {fires['fired']} fired ({fires['late']} late), "
            f"{fires['failed']} failed"
        )


def fire_times(rows: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        _json(rows)
        return
    table = Table(title="next fire times", title_justify="left")
    for column in ("#", "UTC", "local", "zone"):
        table.add_column(column)
    for row in rows:
        table.add_row(str(row["n"]), row["utc"], row["local"], row["zone"])
    _show(table)


def around_change(around: Any, timezone: str, as_json: bool) -> None:
    """The fires around a zone's next DST change (``domain.preview.AroundChange``), or that
    there is none."""
    from tickwork.domain.preview import format_fire_times
    from tickwork.domain.times import iso_exact

    if around is None:
        if as_json:
            _json(None)
        else:
            print(
                f"no DST change in {timezone} in the next two years: nothing repeats or is skipped"
            )
        return

    def offset(delta: Any) -> str:
        minutes = int(delta.total_seconds() // 60)
        sign = "+" if minutes >= 0 else "-"
        return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"

    answer: dict[str, Any] = {
        "change": iso_exact(around.change),
        "offsetBefore": offset(around.offset_before),
        "offsetAfter": offset(around.offset_after),
        "before": format_fire_times(around.before, timezone),
        "after": format_fire_times(around.after, timezone),
    }
    if as_json:
        _json(answer)
        return
    table = Table(
        title=f"around the next DST change in {timezone}: {answer['change']} "
        f"({answer['offsetBefore']} → {answer['offsetAfter']})",
        title_justify="left",
    )
    for column in ("", "UTC", "local"):
        table.add_column(column)
    for side in ("before", "after"):
        for row in answer[side]:
            table.add_row(side, row["utc"], row["local"])
    _show(table)


def occurrences(rows: list[dict[str, Any]], as_json: bool) -> None:
    """An action's coming occurrences: number, scheduled time, when it fires, and its change."""
    if as_json:
        _json(rows)
        return
    zone = rows[0]["timezone"] if rows else "UTC"
    table = Table(title="coming occurrences", title_justify="left")
    for column in ("#", "scheduled (UTC)", f"local ({zone})", "fires", "note"):
        table.add_column(column)
    for row in rows:
        fires = row["change"] or row["firesAt"]
        table.add_row(
            str(row["occurrence"]),
            row["scheduledTime"],
            row["scheduledLocal"],
            fires,
            row["note"] or "",
        )
    _show(table)


def rejections(rows: list[dict[str, Any]], as_json: bool) -> None:
    """The stack's last rejections, newest first: when, what, which action, and each field's
    problem and fix."""
    if as_json:
        _json(rows)
        return
    if not rows:
        print(
            "no rejections kept: none refused since the stack kept them "
            "(or its KeepRejections parameter is 0)"
        )
        return
    for row in rows:
        what = row.get("request", "?")
        action = row.get("id") or "(no id)"
        event = f" event {row['eventId']}" if row.get("eventId") else ""
        sender = f" from {row['source']}" if row.get("source") else ""
        print(f"#{row['number']} {row['at']} {what} {action}{event}{sender}: {row.get('reason')}")
        problems = row.get("problems") or []
        for problem in problems:
            print(f"    {problem['field']}: {problem['problem']}. Fix: {problem['fix']}")
        if not problems:
            print(f"    {row.get('message', '')}")
