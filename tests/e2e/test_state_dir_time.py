"""GIVEN a state dir whose stack ran on virtual time WHEN its clock file is edited back, torn or
deleted before the next start THEN the stack never starts before what its records say already
happened: virtual time moves on to the records' latest change (and says so), a wall clock behind
them is refused naming the file and the fix, and a clock file it cannot read is refused the same
way, before anything starts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tickwork.domain.times import parse_iso
from tickwork_local.process import BIN
from tickwork_local.server import free_port
from tickwork_local.service import running_service
from tickwork_local.time_api import CLOCK_FILE, StateDirTimeRefused, saved_offset

DAYS = 86400.0


def _a_week_on_virtual_time(state: Path) -> float:
    """A state dir whose stack ran a week of virtual time and fired an action at its end; the
    instant its record was last changed (that fire), as unix seconds. (One fire, not a week of
    hourly ones: what is tested is where the records' time stands, and 168 fires through the
    interpreter were most of this file's time on a loaded machine.)"""
    with running_service(None, state, virtual_time=True) as service:
        local = service.stack
        week = local.clock.timestamp() + 7 * DAYS
        local.publish("Schedule Start", {"id": "sd:hourly", "executionTime": int(week * 1000)})
        local.time.advance(7 * DAYS + 60)
        rows = local.client("dynamodb").get_item(
            TableName=local.outputs["ActionsTableName"], Key={"id": {"S": "sd:hourly"}}
        )
        return parse_iso(rows["Item"]["updatedAt"]["S"]).timestamp()


def test_a_clock_file_edited_back_or_deleted_never_takes_the_stack_before_its_records(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    changed = _a_week_on_virtual_time(state)

    # WHEN the clock file is put back to the wall clock's time
    (state / CLOCK_FILE).write_text(json.dumps({"offsetSeconds": 0}))
    with running_service(None, state) as service:
        # THEN the stack starts on virtual time at the records' last change, and says so
        assert service.stack.clock.virtual
        assert service.stack.clock.timestamp() >= changed
        assert service.clock_note and "never goes backwards" in service.clock_note
        history = service.stack.client("dynamodb")  # the records are all back
        assert history.get_item(
            TableName=service.stack.outputs["ActionsTableName"], Key={"id": {"S": "sd:hourly"}}
        )["Item"]
    assert (saved_offset(state) or 0) > 6 * DAYS  # and the file holds the moved clock again

    # WHEN the clock file is deleted THEN a start on the wall clock is refused, naming the fix
    (state / CLOCK_FILE).unlink()
    with (
        pytest.raises(StateDirTimeRefused, match=r"--virtual-time.*--fresh"),
        running_service(None, state),
    ):
        pass
    # AND with --virtual-time it goes on from the records' last change
    with running_service(None, state, virtual_time=True) as service:
        assert service.stack.clock.timestamp() >= changed


@pytest.mark.parametrize(
    "text",
    [
        "garbage{",
        "{}",
        "[]",
        '{"offsetSeconds": NaN}',
        '{"offsetSeconds": 1e12}',
        '{"offsetSeconds": -1e12}',
        '{"offsetSeconds": "518549"}',
        '{"offsetSeconds": true}',
        '{"offsetSeconds": 1' + "0" * 400 + "}",
        "[1]",
        "",
    ],
)
def test_a_clock_file_it_cannot_read_is_refused_naming_the_file_and_the_fix(
    tmp_path: Path, text: str
) -> None:
    (tmp_path / CLOCK_FILE).write_text(text)
    with pytest.raises(StateDirTimeRefused) as refused:
        saved_offset(tmp_path)
    assert str(tmp_path / CLOCK_FILE) in str(refused.value)
    assert "--fresh" in str(refused.value)


def test_tickwork_local_on_a_torn_clock_file_says_so_and_starts_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / CLOCK_FILE).write_text('{"offsetSe')
    done = subprocess.run(
        [
            *(str(BIN / "tickwork"), "--state-dir", str(state), "local"),
            *("--port", str(free_port()), "--api-port", str(free_port())),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert f"Error: {state / CLOCK_FILE} cannot be read as JSON" in done.stderr
    assert "--fresh" in done.stderr and "Traceback" not in done.stderr
    assert not (state / "local.json").exists()  # nothing started
    assert (state / CLOCK_FILE).read_text() == '{"offsetSe'  # nothing rewritten


def test_records_past_where_time_ends_are_refused_and_those_before_it_are_gone_on_from(
    tmp_path: Path,
) -> None:
    """A clock left flowing past 9000-01-01 writes records after it: a start goes on from them,
    not from 9000-01-01; a change dated past 9900 is no stack's and is refused."""
    from tickwork_local.time_api import latest_change, time_from_records
    from tickwork_local.virtual_clock import LocalClock

    after_the_end = {"updatedAt": {"S": "9000-01-01T00:00:22.682Z"}}
    clock = LocalClock(virtual=True)
    assert time_from_records(clock, latest_change([after_the_end, {}]), tmp_path)
    assert clock.now() >= parse_iso("9000-01-01T00:00:22.682Z")
    with pytest.raises(StateDirTimeRefused, match="9900"):
        time_from_records(
            LocalClock(virtual=True),
            latest_change([{"updatedAt": {"S": "9950-01-01T00:00:00Z"}}]),
            tmp_path,
        )
