"""Properties of Start details: any detail either parses or is refused clearly, and a
refused Start writes nothing.

"Clearly" means a ``ValidationFailed`` (never another exception type) whose every problem
names a field, what is wrong with it, and how to fix it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import event, example, given, note, settings
from hypothesis import strategies as st

from tests.unit.fakes import fake_dependencies
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.start_request import WHEN_FIELDS, allowed_fields, parse_start_detail
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)

VALID_DETAILS: list[dict[str, Any]] = [
    {"id": "a:cron", "cron": "30 * * * *"},
    {"id": "a:duration", "duration": "5m"},
    {"id": "a:delay", "delay": "PT1H"},
    {"id": "a:at", "at": "2027-01-01T09:00:00Z"},
    {"id": "a:epoch", "executionTime": 1798761600000},
    {"id": "a:rate", "rate": "rate(5 minutes)", "timezone": "Europe/London"},
    {
        "id": "a:daily",
        "action": "SEND_NOTIFICATION",
        "executionTime": 1736930117120,
        "repeat": True,
        "frequency": "DAILY",
        "executionRemainder": 5,
        "data": {"mobile": "60123456789", "subject": "Test", "notificationType": "SMS"},
    },
    {
        "id": "a:bounded",
        "cron": "0 9 * * 1-5",
        "timezone": "America/New_York",
        "startTime": "2026-12-01T00:00:00Z",
        "endTime": "2027-06-01T00:00:00Z",
    },
]
BAD_ZONES = ["", " ", "Not/AZone", "America", "UTC+8", "../etc/passwd", "Europe/London\x00", "🕒"]
BAD_CRONS = [
    "",
    "* * *",
    "61 * * * *",
    "0 25 * * *",
    "0 0 30 2 *",
    "0 0 * * 8",
    "cron(0 12 * * * *)",
    "cron(0 12 ? * ? *)",
    "cron(0 12 1 1 ? 1999)",
    "*/0 * * * *",
    "@yearly",
    "0 0 L * * *",
]

json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
# Values that look like what a field takes, so random details get past the type checks
# and reach the schedule rules, not only pydantic's.
plausible_values = st.one_of(
    json_values,
    st.sampled_from(
        [
            "5m",
            "PT1H",
            "-5m",
            "0s",
            "2026-11-22T04:00:00Z",
            "2026-03-08T02:30:00",
            "1999-01-01T00:00:00Z",
            "30 * * * *",
            "rate(1 minutes)",
            "rate(0 hours)",
            "DAILY",
            "monthly",
            "SEND_NOTIFICATION",
            "America/New_York",
            "Australia/Lord_Howe",
            *BAD_ZONES,
            *BAD_CRONS,
        ]
    ),
    st.integers(min_value=0, max_value=10**16),
)
random_details = st.dictionaries(
    st.one_of(st.sampled_from(allowed_fields()), st.text(max_size=12)),
    plausible_values,
    max_size=6,
)


@st.composite
def mutated_details(draw: st.DrawFn) -> dict[str, Any]:
    """A valid detail with one to three mutations of the kinds users make."""
    detail = dict(draw(st.sampled_from(VALID_DETAILS)))
    for _ in range(draw(st.integers(1, 3))):
        mutation = draw(
            st.sampled_from(["wrong type", "unknown field", "second when", "zone", "cron", "drop"])
        )
        if mutation == "wrong type":
            name = draw(st.sampled_from(allowed_fields()))
            detail[name] = draw(json_values)
        elif mutation == "unknown field":
            detail[draw(st.sampled_from(["execution_time", "Cron", "when", "zone", "x"]))] = 1
        elif mutation == "second when":
            name = draw(st.sampled_from(WHEN_FIELDS))
            detail[name] = draw(plausible_values)
        elif mutation == "zone":
            detail["timezone"] = draw(st.sampled_from(BAD_ZONES))
        elif mutation == "cron":
            detail["cron"] = draw(st.sampled_from(BAD_CRONS))
        elif detail:
            detail.pop(draw(st.sampled_from(sorted(detail))))
    return detail


any_details = st.one_of(
    random_details,
    mutated_details(),
    json_values,  # not an object at all
)


def _assert_clear(refused: ValidationFailed) -> None:
    assert refused.problems, "a refusal names at least one problem"
    for problem in refused.problems:
        # The field is the key as sent, so a whitespace key such as "\r" is named as is.
        assert isinstance(problem.field, str) and problem.field, problem
        assert isinstance(problem.problem, str) and problem.problem.strip(), problem
        assert isinstance(problem.fix, str) and problem.fix.strip(), problem


@settings(max_examples=600, deadline=None)
@given(any_details)
@example({"duration": "5m", "timezone": "America"})  # a tzdata folder once raised OSError
def test_any_detail_parses_or_is_refused_clearly(detail: Any) -> None:
    """GIVEN a random, malformed or mutated Start detail
    WHEN it is parsed
    THEN it either parses, or is refused with ValidationFailed whose every problem has a
    non-empty field, problem and fix; no other exception escapes."""
    try:
        parse_start_detail(detail, NOW)
    except ValidationFailed as refused:
        event("refused")
        note(f"refused: {refused}")
        _assert_clear(refused)
    else:
        event("parsed")


@settings(max_examples=150, deadline=None)
@given(st.one_of(mutated_details(), random_details))
def test_refused_start_writes_nothing(detail: Any) -> None:
    """GIVEN a random or mutated Start detail and empty in-memory ports
    WHEN the Start use case runs on it
    THEN if it is refused, the refusal is a clear ValidationFailed, and nothing was written,
    started or published."""
    deps = fake_dependencies(NOW)
    try:
        start_action(StartCommand(detail, "ev-1"), deps)
    except ValidationFailed as refused:
        event("refused")
        note(f"refused: {refused}")
        _assert_clear(refused)
        assert deps.records.writes == 0
        assert deps.executions.started == {}
        assert deps.publisher.events == []
    else:
        event("started")
