"""`tickwork stats`: each action counted once (those needing attention are a part of the
statuses, shown apart), and --json is what GET /stats answers."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from tests.unit.fakes import fake_dependencies
from tickwork.api.models import Stats
from tickwork.api.stats import stats_of
from tickwork.domain.selection import Selection
from tickwork.domain.steering import FailedFire
from tickwork.domain.times import iso
from tickwork.steering.start import StartCommand, start_action
from tickwork_cli import render

NOW = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


def _eleven_with_two_needing_attention():
    deps = fake_dependencies(NOW)
    for n in range(11):
        at = iso(NOW + timedelta(hours=1 + n))
        start_action(StartCommand({"id": f"sub:{n}", "at": at}, f"ev-{n}"), deps)
    for n in (3, 7):  # a failed fire waiting for a retry each
        action = deps.records.items[f"sub:{n}"]
        failed = FailedFire(1, NOW, f"key-{n}", "TargetFailed")
        deps.records.save(replace(action, unresolved=(failed,)), action.version)
    return deps


def test_stats_counts_each_action_once_and_attention_apart(capsys) -> None:
    deps = _eleven_with_two_needing_attention()

    render.stats(stats_of(deps.queries, deps.tallies, Selection(), NOW), as_json=False)

    shown = capsys.readouterr().out
    assert "11 action(s)" in shown and "13 action(s)" not in shown
    assert "needing attention (of those above): 2" in shown
    assert "NEEDS_ATTENTION" not in shown
    assert "fires, last hour: 0 fired (0 late), 0 failed" in shown


def test_stats_json_is_what_the_api_answers(capsys) -> None:
    deps = _eleven_with_two_needing_attention()

    render.stats(stats_of(deps.queries, deps.tallies, Selection(), NOW), as_json=True)

    printed = json.loads(capsys.readouterr().out)
    assert printed["byStatus"]["PENDING"] == 11 and printed["needsAttention"] == 2
    assert set(printed["lastHour"]) == {"fired", "late", "failed"}
    # the API's own model takes it as its answer, field for field
    assert Stats.model_validate(printed).model_dump(by_alias=True) == printed
