"""`tickwork next --id`: each coming occurrence in UTC and on the wall clock of the action's
own zone, named (across a DST change the offset moves with it)."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.unit.fakes import fake_dependencies
from tickwork.steering.start import StartCommand, start_action
from tickwork_cli import render
from tickwork_cli.occurrences import coming_occurrences


def test_next_by_id_shows_the_actions_zone_beside_utc(capsys, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # (pytest-xdist sets 80 in its workers)
    deps = fake_dependencies(datetime(2026, 3, 27, 12, 0, tzinfo=UTC))
    detail = {"id": "rent", "cron": "0 9 * * *", "timezone": "Europe/Berlin"}
    start_action(StartCommand(detail, "ev-rent"), deps)

    rows = coming_occurrences(deps, "rent", 3)

    assert [r["timezone"] for r in rows] == ["Europe/Berlin"] * 3
    # 9:00 in Berlin on each day; the clocks go forward on 29 March (+01:00 -> +02:00)
    assert [r["scheduledLocal"] for r in rows] == [
        "2026-03-28T09:00:00+01:00",
        "2026-03-29T09:00:00+02:00",
        "2026-03-30T09:00:00+02:00",
    ]
    assert rows[0]["scheduledTime"] == "2026-03-28T08:00:00.000Z"
    render.occurrences(rows, as_json=False)
    shown = capsys.readouterr().out
    assert "local (Europe/Berlin)" in shown and "2026-03-29T09:00:00+02:00" in shown
