"""GIVEN any action id WHEN execution names are made THEN they are valid, stable and distinct,
and no one without the key can tell them in advance."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickwork.domain.batch import Member, batch_name, follow_on_name
from tickwork.domain.naming import (
    MAX_NAME_LENGTH,
    execution_name,
    is_valid_execution_name,
    legacy_execution_name,
)

KEY = b"k" * 32
numbers = st.integers(0, 10**6)


@given(
    st.text(min_size=1, max_size=300),
    st.integers(1, 10**6),
    st.integers(1, 10**6),
    st.integers(0, 99),
    st.integers(0, 50),
    st.integers(0, 20),
    st.none() | st.binary(min_size=32, max_size=32),
)
def test_any_id_gives_a_valid_name(
    action_id: str,
    generation: int,
    occurrence: int,
    leg: int,
    repair: int,
    manual: int,
    key: bytes | None,
) -> None:
    name = execution_name(action_id, generation, occurrence, leg, repair, manual, key=key)
    assert is_valid_execution_name(name) and len(name) <= MAX_NAME_LENGTH
    assert name == execution_name(action_id, generation, occurrence, leg, repair, manual, key=key)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("a:b", "a/b"),
        ("x" * 100 + "1", "x" * 100 + "2"),
        # ids that shared their first 65 characters and an 8-digit digest before names were keyed
        ("t" * 51 + "tenant-0001234:sub-00043240", "t" * 51 + "tenant-0001234:sub-00098595"),
    ],
    ids=["same-readable", "long-prefix", "once-collided"],
)
def test_ids_that_read_alike_get_different_names(a: str, b: str) -> None:
    assert execution_name(a, 1, 1, key=KEY) != execution_name(b, 1, 1, key=KEY)
    assert execution_name(a, 1, 1, key=None) != execution_name(b, 1, 1, key=None)


@given(st.lists(st.text(min_size=61, max_size=90), min_size=2, max_size=50, unique=True))
def test_ids_sharing_a_long_prefix_never_share_a_name(tails: list[str]) -> None:
    ids = ["p" * 70 + tail for tail in tails]  # every readable part is cut to the same prefix
    names = {execution_name(i, 1, 1, key=KEY) for i in ids}
    assert len(names) == len(ids)


@given(st.text(min_size=1, max_size=100), numbers, numbers, numbers)
def test_every_number_in_a_name_is_under_the_key(
    action_id: str, occurrence: int, repair: int, manual: int
) -> None:
    """Seeing one name tells nothing of the next occurrence's, repair's or manual fire's: each
    has a digest of its own, not a shared one with a readable suffix."""
    seen = execution_name(action_id, 1, occurrence, key=KEY)
    digest = seen.split("-")[-3]
    others = [
        execution_name(action_id, 1, occurrence + 1, key=KEY),
        execution_name(action_id, 1, occurrence, repair=repair + 1, key=KEY),
        execution_name(action_id, 1, occurrence, manual=manual + 1, key=KEY),
        execution_name(action_id, 2, occurrence, key=KEY),
    ]
    assert all(digest not in other for other in others)


def test_a_name_without_the_key_is_another_name() -> None:
    keyed = execution_name("invoice:42", 3, 7, key=KEY)
    assert keyed != execution_name("invoice:42", 3, 7, key=None)
    assert keyed != execution_name("invoice:42", 3, 7, key=b"j" * 32)
    assert keyed != legacy_execution_name("invoice:42", 3, 7)


def test_name_reads_as_the_id_generation_and_occurrence() -> None:
    assert execution_name("invoice:42", 3, 7, key=KEY).startswith("invoice_42-")
    assert execution_name("invoice:42", 3, 7, key=KEY).endswith("-g3-o7")
    assert execution_name("invoice:42", 3, 7, leg=2, key=KEY).endswith("-g3-o7-l2")


def test_a_legacy_name_is_the_scheme_records_were_written_with() -> None:
    assert legacy_execution_name("invoice:42", 3, 7) == "invoice_42-5cd23eb3-g3-o7"


def test_batch_names_are_keyed_for_their_members_and_repair() -> None:
    second = datetime(2026, 1, 1, tzinfo=UTC)
    members = (Member("a", 1, 1, second), Member("b", 1, 1, second))
    name = batch_name(second, members, key=KEY)
    assert name.startswith(f"b-{int(second.timestamp())}-") and is_valid_execution_name(name)
    assert name != batch_name(second, members, key=None)
    assert name != batch_name(second, members[:1], key=KEY)
    repaired = batch_name(second, members, repair=1, key=KEY)
    assert repaired.endswith("-r1") and not repaired.startswith(name)
    assert follow_on_name(name, second, key=KEY) != follow_on_name(name, second, key=None)


def test_a_batch_of_ids_created_again_takes_another_name_than_their_earlier_lives() -> None:
    """An id purged and created again starts at generation 1 again: the batch of its first
    fire, with the same members due in the same second, must not take the name of the batch
    its earlier life ran in (a start would meet that execution and take it for its own)."""
    second = datetime(2026, 1, 1, tzinfo=UTC)
    members = (Member("a", 1, 1, second), Member("b", 1, 1, second))
    first = ("2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z")
    again = ("2026-01-01T00:03:00.000Z", "2026-01-01T00:00:00.000Z")  # a created again
    name = batch_name(second, members, key=KEY, lives=first)
    assert name == batch_name(second, members, key=KEY, lives=first)  # deterministic
    assert name != batch_name(second, members, key=KEY, lives=again)
    assert is_valid_execution_name(batch_name(second, members, key=KEY, lives=again))
