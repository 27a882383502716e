"""GIVEN an action with history WHEN mapped to a DynamoDB item and back THEN nothing changes;
the item keeps the seed schema's names, and short ones in its history and transitions (the
bulk of a busy record), whose items written before in long names still read."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tickwork.adapters.dynamodb_record import (
    FORMAT_VERSION,
    READ_FORMATS,
    format_of,
    from_item,
    to_item,
)
from tickwork.adapters.execution_refs import ExecutionRefs
from tickwork.adapters.record_keys import status_shard
from tickwork.domain.action import Action, Occurrence, Status, Transition
from tickwork.domain.catch_up import CatchUp, CatchUpPolicy
from tickwork.domain.errors import RecordFormatUnknown
from tickwork.domain.fire import Outcome
from tickwork.domain.naming import execution_name, legacy_execution_name, name_with_digest
from tickwork.domain.schedule import Schedule

_D = "0123456789abcdef"  # a name's digest, as the stack's key would make it
_KEYED = execution_name("a:1", 3, 1, key=b"k" * 32)


def _action() -> Action:
    return Action(
        id="a:1",
        action="TICK",
        data={"price": 1.5, "n": 2},
        metadata={},
        status=Status.PENDING,
        schedule=Schedule.of_frequency(
            "DAILY", datetime(2026, 1, 1, 8, tzinfo=UTC), max_occurrences=5
        ),
        execution_time=datetime(2026, 3, 1, 8, 0, 0, 123000, tzinfo=UTC),
        occurrence=2,
        generation=1,
        version=7,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        updated_at=datetime(2026, 3, 1, 8, tzinfo=UTC),
        changed_at=datetime(2026, 1, 1, tzinfo=UTC),  # as created
        spec_hash="h",
        history=(
            Occurrence(
                1,
                datetime(2026, 2, 28, 8, tzinfo=UTC),
                datetime(2026, 2, 28, 8, 0, 0, 210_000, tzinfo=UTC),
                2,
                Outcome.FIRED,
            ),
        ),
        transitions=(
            Transition(datetime(2026, 1, 1, tzinfo=UTC), None, Status.PENDING, "created"),
        ),
    )


def test_round_trip_is_lossless() -> None:
    action = _action()
    assert from_item(to_item(action)) == action
    moved_on = replace(action, start_event_id="ev-3", superseded_starts=("0123456789ab",))
    assert from_item(to_item(moved_on)) == moved_on
    assert "superseded" not in to_item(action)  # nothing moved past: nothing stored


def test_defaults_are_left_out_of_the_item_and_read_back() -> None:
    """Every write pays per KB: the default catch-up and a changedAt equal to createdAt are
    not stored; a changed action and another policy are."""
    action = _action()
    item = to_item(action)
    assert "catchUp" not in item and "changedAt" not in item
    assert from_item(item).catch_up == CatchUp() and from_item(item).changed_at == action.created_at

    changed = replace(
        action,
        changed_at=datetime(2026, 2, 1, tzinfo=UTC),
        catch_up=CatchUp(CatchUpPolicy.SKIP),
    )
    item = to_item(changed)
    assert item["catchUp"]["policy"] == "SKIP" and item["changedAt"] == "2026-02-01T00:00:00.000Z"
    assert from_item(item) == changed


def test_item_uses_seed_names_and_short_names_in_history_and_transitions() -> None:
    item = to_item(_action())
    assert item["executionTime"] == 1772352000123
    assert (
        item["executionRemainder"] == 4 and item["frequency"] == "DAILY" and item["repeat"] is True
    )
    # the bulk of a busy record: short names, epoch milliseconds
    assert item["history"] == [  # the outcome FIRED, the usual one, left out
        {"o": 1, "s": 1772265600000, "a": 1772265600210, "n": 2}
    ]
    assert item["transitions"][0] == {"t": 1767225600000, "s": "P", "r": "created"}
    assert item["fmt"] == 3 and "timezone" not in item  # the zone is the schedule's
    assert item["statusShard"] == status_shard("PENDING", "a:1")
    assert item["statusShard"].startswith("PENDING#")


def test_items_of_format_1_written_in_long_names_are_read_as_they_are() -> None:
    """Format 1 was written in long names first, in short names later (no fmt either way)."""
    item = to_item(_action())
    del item["fmt"]
    item["schedule"] = _action().schedule.to_dict()  # its instants in ISO 8601, as then
    item["history"] = [
        {
            "occurrence": 1,
            "scheduledTime": "2026-02-28T08:00:00.000Z",
            "actualTime": "2026-02-28T08:00:00.210Z",
            "attempts": 2,
            "outcome": "FIRED",
        }
    ]
    item["transitions"] = [
        {"at": "2026-01-01T00:00:00.000Z", "fromStatus": None, "toStatus": "PENDING",
         "reason": "created"}
    ]  # fmt: skip

    assert from_item(item) == _action()


def test_items_of_the_first_format_are_read_as_they_are() -> None:
    """Format 1 (no ``fmt``): the zone also top-level."""
    item = to_item(_action())
    del item["fmt"]
    item["schedule"] = _action().schedule.to_dict()  # its instants in ISO 8601, as then
    item["timezone"] = "UTC"
    item["history"] = [{"o": 1, "s": 1772265600000, "a": 1772265600210, "n": 2, "r": "FIRED"}]

    assert from_item(item) == _action()


def test_every_item_is_written_in_the_current_format_and_read_by_its_formats_reader() -> None:
    item = to_item(_action())
    assert item["fmt"] == FORMAT_VERSION
    assert set(READ_FORMATS) == {1, 2, 3}
    assert format_of(item) == FORMAT_VERSION
    assert format_of({"id": "a:1"}) == 1
    assert format_of({"id": "a:1", "fmt": Decimal(2)}) == 2  # as boto3 reads it


@pytest.mark.parametrize("stated", [4, 0, "2", True, 2.5, None])
def test_an_item_of_a_format_no_reader_takes_is_refused_naming_it(stated: object) -> None:
    item = {**to_item(_action()), "fmt": stated}
    with pytest.raises(RecordFormatUnknown) as refused:
        from_item(item)
    assert "'a:1'" in str(refused.value)
    assert "reads formats 1, 2, 3" in str(refused.value)


_OWN = "arn:aws:states:us-east-1:123456789012:execution:tickwork-fire:a-1-0123456789abcdef-g1-o1"


def _claimed_by_its_own() -> Action:
    """The action claimed by the execution its record names."""
    return replace(
        _action(),
        status=Status.IN_PROGRESS,
        execution_arn=_OWN,
        claimed_by=_OWN,
        claimed_at=datetime(2026, 3, 1, 8, 0, 0, 123000, tzinfo=UTC),
    )


def test_a_claim_by_the_named_execution_is_stored_once_and_read_back_whole() -> None:
    claimed, arn = _claimed_by_its_own(), _OWN
    item = to_item(claimed)
    assert item["claimedBy"] == "=" and item["claimedAt"] == 1772352000123
    assert from_item(item) == claimed
    # another execution's claim (a hand-over's record names the one it went to) keeps its ARN
    other = replace(claimed, claimed_by=arn.replace("-o1", "-o1-l1"))
    assert to_item(other)["claimedBy"] == other.claimed_by and from_item(to_item(other)) == other


def test_an_item_of_format_2_is_read_as_it_was_written() -> None:
    """Format 2: the claim's ARN and time in full, every history entry's attempts and outcome."""
    claimed, arn = _claimed_by_its_own(), _OWN
    item = {
        **to_item(claimed),
        "fmt": 2,
        "schedule": claimed.schedule.to_dict(),
        "claimedBy": arn,
        "claimedAt": "2026-03-01T08:00:00.123Z",
        "history": [{"o": 1, "s": 1772265600000, "a": 1772265600210, "n": 2, "r": "FIRED"}],
    }
    assert from_item(item) == claimed
    short = {**item, "history": [{"o": 1, "s": 1772265600000, "a": 1772265600210, "n": 2}]}
    with pytest.raises(KeyError):  # format 2 left nothing out
        from_item(short)


def test_a_format_2_item_is_not_read_as_format_1_would_be() -> None:
    """No shape is guessed in format 2: a long-name entry there is not a format 2 entry."""
    item = to_item(_action())
    item["history"] = [{"occurrence": 1, "scheduledTime": "2026-02-28T08:00:00.000Z"}]
    with pytest.raises(KeyError):
        from_item(item)


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        pytest.param("b-1772265600-0123456789ab", "b:0123456789ab", id="its-batch"),
        pytest.param("b-1772265600-0123456789abcdef", "b:0123456789abcdef", id="its-keyed-batch"),
        pytest.param(name_with_digest("a:1", _D, 3, 1), f"~{_D}g3", id="its-own"),
        pytest.param(
            name_with_digest("a:1", _D, 1, 1, leg=1, repair=2), f"~{_D}g1-l1-r2", id="repaired"
        ),
        pytest.param(name_with_digest("a:1", _D, 1, 1, manual=4), f"~{_D}g1-m4", id="by-hand"),
        pytest.param(_KEYED, f"~{_KEYED.split('-')[-3]}g3", id="its-own-keyed"),
        pytest.param(legacy_execution_name("a:1", 3, 1), "~g3", id="before-keyed-names"),
        pytest.param(
            legacy_execution_name("a:1", 1, 1, leg=1, repair=2), "~g1-l1-r2", id="legacy-repaired"
        ),
        pytest.param(name_with_digest("a:2", _D, 3, 1), None, id="another-ids-name"),
        pytest.param("b-1772265601-0123456789ab", None, id="another-seconds-batch"),
        pytest.param("someone-elses-name", None, id="any-other-name"),
    ],
)
def test_the_execution_of_a_fire_is_stored_short_and_read_back_whole(
    name: str, stored: str | None
) -> None:
    fire = replace(_action().history[0], execution=name)
    action = replace(_action(), history=(fire,))

    item = to_item(action)

    assert item["history"][0]["x"] == (stored or name)
    assert from_item(item).history[0].execution == name


def test_a_fires_scheduled_time_is_told_by_its_lateness_when_it_can_be() -> None:
    fire = replace(_action().history[0], late_ms=210)
    action = replace(_action(), history=(fire,))

    item = to_item(action)

    assert "s" not in item["history"][0] and item["history"][0]["l"] == 210
    assert from_item(item) == action


def test_given_the_stacks_machines_a_record_names_its_executions_by_machine_and_name() -> None:
    refs = ExecutionRefs(
        "arn:aws:states:us-east-1:123456789012:stateMachine:tickwork-fire",
        "arn:aws:states:us-east-1:123456789012:stateMachine:tickwork-batch",
    )
    home = "arn:aws:states:us-east-1:123456789012:execution"
    batch = f"{home}:tickwork-batch:b-1772352000-0123456789abcdef"
    lone = (
        "arn:aws:states:us-east-1:123456789012:execution:tickwork-fire:a-1-0123456789abcdef-g1-o1"
    )
    claimed = replace(
        _action(),
        status=Status.IN_PROGRESS,
        execution_arn=batch,
        claimed_by=batch,
        claimed_at=datetime(2026, 3, 1, 8, 0, tzinfo=UTC),
    )
    item = to_item(claimed, refs)
    assert (item["executionArn"], item["claimedBy"]) == ("b:b-1772352000-0123456789abcdef", "=")
    assert from_item(item, refs) == claimed
    handed = replace(claimed, claimed_by=lone)  # a hand-over: the claim is another's
    assert to_item(handed, refs)["claimedBy"] == "f:a-1-0123456789abcdef-g1-o1"
    assert from_item(to_item(handed, refs), refs) == handed
    # and without the machines, values are kept as they stand: whole ARNs stay whole
    assert from_item(to_item(handed)) == handed


def test_a_start_detail_reads_back_as_it_was_given_with_or_without_an_id() -> None:
    given = replace(_action(), request={"id": "a:1", "delay": "5m"})
    assert "id" not in to_item(given)["request"] and from_item(to_item(given)) == given
    # a Start without an id (the stack named it evt-...): read back without one, as given
    unnamed = replace(_action(), id="evt-1", request={"delay": "5m"})
    assert from_item(to_item(unnamed)).request == {"delay": "5m"}
    # one naming another id than the record's is kept whole
    other = replace(_action(), request={"id": "b:2", "delay": "5m"})
    assert from_item(to_item(other)).request == {"id": "b:2", "delay": "5m"}
