"""parse_duration: short forms, ISO 8601, and refusals that name the field and the fix."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tickwork.domain.durations import parse_duration
from tickwork.domain.errors import ValidationFailed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("90s", timedelta(seconds=90), id="seconds"),
        pytest.param("5m", timedelta(minutes=5), id="minutes"),
        pytest.param("1h30m", timedelta(minutes=90), id="hours-and-minutes"),
        pytest.param("2d", timedelta(days=2), id="days"),
        pytest.param("1w", timedelta(weeks=1), id="week"),
        pytest.param("1d2h", timedelta(hours=26), id="days-and-hours"),
        pytest.param(
            "1w2d3h4m5s", timedelta(days=9, hours=3, minutes=4, seconds=5), id="all-units"
        ),
        pytest.param(" 1h 30m ", timedelta(minutes=90), id="spaces"),
        pytest.param("5M", timedelta(minutes=5), id="upper-case-short"),
        pytest.param("PT5M", timedelta(minutes=5), id="iso-minutes"),
        pytest.param("P1DT2H", timedelta(hours=26), id="iso-day-and-hours"),
        pytest.param("PT90S", timedelta(seconds=90), id="iso-seconds"),
        pytest.param("P2W", timedelta(weeks=2), id="iso-weeks"),
        pytest.param("P1D", timedelta(days=1), id="iso-day-only"),
        pytest.param("pt1h", timedelta(hours=1), id="iso-lower-case"),
    ],
)
def test_accepts_short_and_iso_forms(text: str, expected: timedelta) -> None:
    # GIVEN a duration as people write it
    # WHEN it is parsed
    parsed = parse_duration(text, "duration")
    # THEN it is that many seconds
    assert parsed == expected


@pytest.mark.parametrize(
    ("text", "problem_words"),
    [
        pytest.param("0s", "zero", id="zero"),
        pytest.param("PT0S", "zero", id="iso-zero"),
        pytest.param("0h0m", "zero", id="zero-combined"),
        pytest.param("-5m", "negative", id="negative"),
        pytest.param("PT1.5S", "whole numbers", id="iso-fraction"),
        pytest.param("1.5h", "whole numbers", id="short-fraction"),
        pytest.param("P1M", "months", id="iso-months"),
        pytest.param("P1Y2M", "years", id="iso-years"),
        pytest.param("100y", "years or months", id="short-years"),
        pytest.param("3 months", "years or months", id="short-months"),
        pytest.param("1y2d", "years or months", id="short-years-and-days"),
        pytest.param("1 month 2d", "years or months", id="short-month-and-days"),
        pytest.param("-P1D", "negative", id="iso-negative"),
        pytest.param("--", "not a duration", id="dashes"),
        pytest.param("PT", "not a duration", id="iso-empty-time"),
        pytest.param("P", "not a duration", id="iso-empty"),
        pytest.param("P1DT", "not a duration", id="iso-dangling-t"),
        pytest.param("", "not a duration", id="empty"),
        pytest.param("5", "not a duration", id="no-unit"),
        pytest.param("5x", "not a duration", id="unknown-unit"),
        pytest.param("m5", "not a duration", id="unit-first"),
        pytest.param("30m1h", "not a duration", id="units-out-of-order"),
        pytest.param("soon", "not a duration", id="garbage"),
        pytest.param("99999999999w", "100 years", id="too-long"),
        pytest.param("\u0661\u0660s", "not a duration", id="arabic-indic-digits"),
        pytest.param("PT\u0661\u0660M", "not a duration", id="iso-arabic-indic-digits"),
    ],
)
def test_refuses_naming_the_field_and_the_fix(text: str, problem_words: str) -> None:
    # GIVEN a duration that is zero, negative, fractional or not a duration
    # WHEN it is parsed for the field "delay"
    with pytest.raises(ValidationFailed) as raised:
        parse_duration(text, "delay")
    # THEN the refusal names that field, says what is wrong and how to fix it
    (problem,) = raised.value.problems
    assert problem.field == "delay"
    assert problem_words in problem.problem
    assert problem.fix
    assert str(raised.value).startswith("delay:")


def test_fraction_refusal_says_integers_only() -> None:
    # GIVEN an ISO duration with a fractional second
    # WHEN it is parsed
    with pytest.raises(ValidationFailed) as raised:
        parse_duration("PT1.5S", "duration")
    # THEN the message says only whole numbers are accepted and shows accepted forms
    assert "only whole numbers" in str(raised.value)
    assert '"90s"' in raised.value.problems[0].fix


def test_refuses_a_non_string() -> None:
    # GIVEN a number where a duration string belongs
    # WHEN it is parsed
    with pytest.raises(ValidationFailed) as raised:
        parse_duration(300, "duration")  # type: ignore[arg-type]
    # THEN it is refused naming the field
    assert raised.value.problems[0].field == "duration"


@pytest.mark.parametrize(("sent", "shown"), [(None, "null"), (True, "true"), (["1d"], '["1d"]')])
def test_a_non_string_is_shown_as_it_was_sent(sent: object, shown: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        parse_duration(sent, "advance")  # type: ignore[arg-type]
    assert raised.value.problems[0].problem == f"{shown} is not a duration string"
