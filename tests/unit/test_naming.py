"""GIVEN any action id WHEN execution names are made THEN they are valid, stable and distinct."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickwork.domain.naming import MAX_NAME_LENGTH, execution_name, is_valid_execution_name


@given(
    st.text(min_size=1, max_size=300),
    st.integers(1, 10**6),
    st.integers(1, 10**6),
    st.integers(0, 99),
)
def test_any_id_gives_a_valid_name(
    action_id: str, generation: int, occurrence: int, leg: int
) -> None:
    name = execution_name(action_id, generation, occurrence, leg)
    assert is_valid_execution_name(name) and len(name) <= MAX_NAME_LENGTH
    assert name == execution_name(action_id, generation, occurrence, leg)


@pytest.mark.parametrize(
    ("a", "b"),
    [("a:b", "a/b"), ("x" * 100 + "1", "x" * 100 + "2")],
    ids=["same-readable", "long-prefix"],
)
def test_ids_that_read_alike_get_different_names(a: str, b: str) -> None:
    assert execution_name(a, 1, 1) != execution_name(b, 1, 1)


def test_name_reads_as_the_id_generation_and_occurrence() -> None:
    assert execution_name("invoice:42", 3, 7).startswith("invoice_42-")
    assert execution_name("invoice:42", 3, 7).endswith("-g3-o7")
    assert execution_name("invoice:42", 3, 7, leg=2).endswith("-g3-o7-l2")
