"""`tickwork schedule`'s flags: the help, the refusals and the README agree — one when, the
first fire of --every is --first, and a refusal names the flag the user typed."""

from __future__ import annotations

import io
import json

import click
import pytest
from click.testing import CliRunner

from tickwork.fire.start_record import check_start
from tickwork_cli.context import guard
from tickwork_cli.main import cli
from tickwork_cli.start_flags import flags_of_fields, start_detail


def _refusal(call) -> str:
    with pytest.raises(click.ClickException) as refused:
        guard(call)
    return refused.value.message


def test_at_with_every_is_refused_pointing_to_first() -> None:
    message = _refusal(lambda: start_detail({"at": "2030-11-20T09:00:00Z", "frequency": "daily"}))

    assert "--at and --every: are each a when" in message
    assert "--first" in message and "when given" not in message


def test_two_whens_are_named_and_none_is_missing() -> None:
    both = _refusal(lambda: start_detail({"cron": "0 9 * * *", "rate": "rate(1 hour)"}))
    assert "--cron and --rate: are each a when: only one may be given" in both
    none = _refusal(lambda: start_detail({}))
    assert "when: is missing" in none and "--at TIME" in none


def test_every_with_first_sends_the_first_fire_as_at() -> None:
    detail = start_detail({"frequency": "daily"}, first="2030-11-20T09:00:00Z")
    assert detail == {"frequency": "DAILY", "at": "2030-11-20T09:00:00Z"}


def test_the_at_flags_help_names_first_for_every() -> None:
    shown = CliRunner().invoke(cli, ["schedule", "--help"]).output
    at_help = shown[shown.index("--at TIME") : shown.index("--at TIME") + 300]
    assert "--first" in at_help and "With --every: its first fire" not in at_help


def test_a_refusal_names_the_flag_the_user_typed(fake_deps) -> None:
    # `--in -5m` sets the Start's delay: the refusal says --in
    now = fake_deps.clock.now()
    with pytest.raises(click.ClickException) as refused:
        guard(
            lambda: check_start(
                {"id": "a", "delay": "-5m"}, "ev", fake_deps.clock.now(), fake_deps
            ),
            flags_of_fields(first=False),
        )
    assert refused.value.message.startswith("refused:\n  --in:"), refused.value.message
    # and a field inside --data keeps its path after the flag
    with pytest.raises(click.ClickException) as nested:
        guard(
            lambda: check_start(
                {"id": "a", "delay": "5m", "action": "HTTP_REQUEST", "data": {"url": 3}},
                "ev",
                now,
                fake_deps,
            ),
            flags_of_fields(first=False),
        )
    assert "--data (url)" in nested.value.message, nested.value.message


@pytest.fixture
def fake_deps():
    from datetime import UTC, datetime

    from tests.unit.fakes import fake_dependencies

    return fake_dependencies(datetime(2026, 12, 5, 9, 0, tzinfo=UTC))


def test_data_comes_from_a_file_or_stdin_past_what_a_shell_argument_holds(
    tmp_path, monkeypatch
) -> None:
    # GIVEN a payload of ~150 KiB: more than one argument passes, less than the 192 KiB limit
    data = {"rows": ["x" * 100] * 1500}
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(data))
    when = {"delay": "5m"}

    assert start_detail({**when, "data": f"@{payload}"})["data"] == data
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"from": "stdin"})))
    assert start_detail({**when, "data": "-"})["data"] == {"from": "stdin"}
    # a file that is not there is refused naming the flag and the fix
    message = _refusal(lambda: start_detail({**when, "data": f"@{tmp_path / 'none.json'}"}))
    assert "--data: cannot read" in message and "@FILE" in message
