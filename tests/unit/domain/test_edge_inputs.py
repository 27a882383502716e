"""GIVEN input a reviewer would try — numbers past what a time or a duration can hold, names
ending in a newline, forged cursors, keys given twice — WHEN tickwork reads it THEN it is
refused naming the field and the fix (a ValidationFailed, never an OverflowError or a
ValueError that would become a 5xx), and nothing is written."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.unit.fakes import fake_dependencies
from tickwork.domain import page_cursor
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.identifiers import check_action_id, check_group, check_prefix
from tickwork.domain.json_text import loads_strict
from tickwork.domain.page_cursor import Position
from tickwork.domain.preview import detail_fire_times, next_fire_times
from tickwork.domain.selection import Selection
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 11, 24, 9, 30, tzinfo=UTC)
HUGE = ["99999999999", "9" * 30, "9" * 4000]


def _huge_details() -> list[Any]:
    cases = []
    for digits in HUGE:
        short = f"{len(digits)}-digits"
        cases += [
            pytest.param({"rate": f"rate({digits} days)"}, "rate", id=f"rate-days-{short}"),
            pytest.param({"rate": f"rate({digits} seconds)"}, "rate", id=f"rate-s-{short}"),
            pytest.param(
                {"scheduleExpression": f"rate({digits} minutes)"},
                "scheduleExpression",
                id=f"expression-{short}",
            ),
            pytest.param({"duration": f"{digits}s"}, "duration", id=f"duration-{short}"),
            pytest.param({"duration": f"PT{digits}S"}, "duration", id=f"iso-{short}"),
            pytest.param({"delay": f"{digits}w"}, "delay", id=f"delay-weeks-{short}"),
            pytest.param(
                {"cron": "*/5 * * * *", "misfireThreshold": f"{digits}s"},
                "misfireThreshold",
                id=f"threshold-{short}",
            ),
            pytest.param(
                {"cron": "*/5 * * * *", "catchUp": "ALL", "catchUpWindow": f"{digits}d"},
                "catchUpWindow",
                id=f"window-{short}",
            ),
        ]
    for number in (10**14 * 99, 10**30, -(10**30)):
        cases += [
            pytest.param({"executionTime": number}, "executionTime", id=f"epoch-ms-{number:.0e}"),
            pytest.param(
                {"frequency": "DAILY", "executionTime": number},
                "executionTime",
                id=f"frequency-from-{number:.0e}",
            ),
        ]
    return cases


@pytest.mark.parametrize(("when", "field"), _huge_details())
def test_numbers_past_any_time_or_duration_are_refused_naming_the_field(
    when: dict[str, Any], field: str
) -> None:
    # GIVEN a Start whose number cannot become a time or a duration
    deps = fake_dependencies(NOW)
    # WHEN it is started, or its fires previewed
    with pytest.raises(ValidationFailed) as started:
        start_action(StartCommand({"id": "edge:1", **when}), deps)
    with pytest.raises(ValidationFailed) as previewed:
        detail_fire_times(when, NOW, 3)
    # THEN both refuse it naming the field, and nothing is written
    for refused in (started, previewed):
        assert field in [p.field for p in refused.value.problems], refused.value.problems
        assert all(p.fix for p in refused.value.problems)
    assert deps.records.items == {} and deps.executions.started == {}


def test_the_longest_rate_is_accepted_and_one_unit_more_is_refused_with_the_limit() -> None:
    assert next_fire_times("rate(3653 days)", NOW, 1)
    with pytest.raises(ValidationFailed, match=r"rate\(3653 days\)"):
        next_fire_times("rate(3654 days)", NOW, 1)
    with pytest.raises(ValidationFailed, match=r"rate\(315619200 seconds\)"):
        next_fire_times("rate(315619201 seconds)", NOW, 1)


@pytest.mark.parametrize(
    ("check", "name"),
    [
        (check_action_id, "acc:x\n"),
        (check_action_id, "acc:x\r"),
        (check_action_id, "\nacc:x"),
        (check_action_id, "acc:\nx"),
        (check_action_id, "acc:x "),
        (check_group, "grp\n"),
        (check_group, "grp "),
        (check_prefix, "acc:\n"),
    ],
    ids=lambda value: getattr(value, "__name__", repr(value)),
)
def test_a_name_with_a_newline_or_space_anywhere_is_refused(check: Any, name: str) -> None:
    with pytest.raises(ValidationFailed):
        check(name)


def test_a_start_with_an_id_or_group_ending_in_a_newline_writes_nothing() -> None:
    deps = fake_dependencies(NOW)
    for detail, field in (
        ({"id": "acc:x\n", "duration": "5m"}, "id"),
        ({"id": "acc:x", "duration": "5m", "group": "grp\n"}, "group"),
    ):
        with pytest.raises(ValidationFailed) as refused:
            start_action(StartCommand(detail), deps)
        assert [p.field for p in refused.value.problems] == [field]
    assert deps.records.items == {}
    with pytest.raises(ValidationFailed):
        Selection(group="grp\n")


def _forged(fields: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        _forged({"t": 10**44, "id": "a"}),
        _forged({"t": -1, "id": "a"}),
        _forged({"t": 1.5, "id": "a"}),
        _forged({"t": True, "id": "a"}),
        _forged({"t": 1, "id": "a\n"}),
        _forged({"t": 1, "id": 7}),
        _forged({"t": 1, "id": "a", "extra": 1}),
        _forged({"t": 1}),
        _forged(["a"]),
        base64.urlsafe_b64encode(b'{"t": ' + b"9" * 5000 + b', "id": "a"}').decode(),
        "not base64 at all!",
        "é",
        _forged({"id": "a" * 300}) * 4,
    ],
    ids=lambda c: c[:24],
)
def test_a_cursor_this_api_did_not_issue_is_refused_naming_cursor(cursor: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        page_cursor.decode(cursor, in_fire_order=True)
    assert [p.field for p in refused.value.problems] == ["cursor"]


def test_a_cursor_of_a_page_in_id_order_is_refused_for_a_page_in_fire_order() -> None:
    by_id = page_cursor.encode(Position("invoice:42"))
    assert page_cursor.decode(by_id) == Position("invoice:42")
    with pytest.raises(ValidationFailed, match="same filters"):
        page_cursor.decode(by_id, in_fire_order=True)


def test_issued_cursors_read_back_as_written() -> None:
    position = Position("invoice:42", 1_767_254_400_000)
    assert page_cursor.decode(page_cursor.encode(position), in_fire_order=True) == position


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"id": "a", "id": "b"}', "id"),
        ('{"id": "a", "data": {"n": 1, "n": 2}}', "n"),
        ('{"list": [{"k": 1, "k": 1}]}', "k"),
        ('{"n": ' + "9" * 5000 + "}", "body"),
        ("[" * 100_000 + "]" * 100_000, "body"),
    ],
    ids=["top", "nested", "in-a-list", "long-number", "deep"],
)
def test_a_key_given_twice_or_unreadable_json_is_refused_naming_it(text: str, field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        loads_strict(text)
    assert [p.field for p in refused.value.problems] == [field]


def test_strict_json_reads_what_json_reads() -> None:
    text = '{"id": "a", "data": {"n": [1, 2.5, "x", null, true]}}'
    assert loads_strict(text) == json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        loads_strict('{"id": ')
