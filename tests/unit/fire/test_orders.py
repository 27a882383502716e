"""GIVEN an execution name already taken WHEN the stack starts an execution under it THEN the
stack's own (a repeat: its input proved for that name) counts as started, and anyone else's is
refused — ``NameTaken``, announced — never trusted with the fire. And without the key no one can
tell a name the stack will use (docs/protocol.md, "How an execution is known")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.batch import BatchOrder, Member, batch_name
from tickwork.domain.errors import NameTaken
from tickwork.domain.fire import FireOrder
from tickwork.domain.naming import execution_name, legacy_execution_name
from tickwork.domain.times import iso
from tickwork.fire.orders import names_key, start_batch, start_lone
from tickwork.integrity.names import life_key
from tickwork.steering.run_now import run_now
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
DUE = NOW + timedelta(minutes=10)


def _sealed() -> Dependencies:
    deps = fake_dependencies(NOW, seal_secret_id="seal")
    deps.secrets.values["seal"] = b"the-seal-key"  # type: ignore[attr-defined]
    return deps


def _order(action_id: str) -> FireOrder:
    return FireOrder(action_id, 1, 1, DUE, DUE)


def test_the_stacks_own_start_repeated_counts_as_started() -> None:
    deps = _sealed()
    name = execution_name("a", 1, 1, key=names_key(deps))
    first = start_lone(name, _order("a"), deps)

    again = start_lone(name, _order("a"), deps)

    assert again == first and list(deps.executions.started) == [name]  # type: ignore[attr-defined]
    assert deps.publisher.of_type("Schedule Tampered") == []  # type: ignore[attr-defined]


def test_a_repeat_with_another_order_of_its_own_is_still_its_own() -> None:
    """A start repeated after the record moved (a later wait, say) proves another order for the
    same name: the execution is still the stack's, the one the record names."""
    deps = _sealed()
    name = execution_name("a", 1, 1, key=names_key(deps))
    start_lone(name, _order("a"), deps)

    later = FireOrder("a", 1, 1, DUE, DUE + timedelta(seconds=1))
    assert start_lone(name, later, deps) == deps.executions.execution_arn(name)


@pytest.mark.parametrize("proof", ["", "v1=" + "0" * 64], ids=["no-proof", "a-wrong-proof"])
def test_a_name_taken_by_someone_else_is_refused_and_announced(proof: str) -> None:
    # GIVEN someone who knows the name (the key leaked, or chance) started an execution first
    deps = _sealed()
    key = names_key(deps)
    assert key is not None  # the name the Start about to come will give its fire
    name = execution_name("a", 1, 1, key=life_key(key, iso(deps.clock.now())))
    squatter = FireOrder("a", 1, 1, NOW, NOW + timedelta(hours=1), proof=proof)
    deps.executions.started[name] = squatter  # type: ignore[attr-defined]

    # WHEN the stack schedules the fire
    with pytest.raises(NameTaken) as refused:
        start_action(StartCommand({"id": "a", "at": "2026-03-07T12:10:00Z"}, "ev-1"), deps)

    # THEN the start fails loudly and says whose name it is; the squatter's is not the fire's
    assert refused.value.execution == deps.executions.execution_arn(name)
    [tampered] = deps.publisher.of_type("Schedule Tampered")  # type: ignore[attr-defined]
    assert tampered["id"] == "a" and "did not start it" in tampered["reason"]
    assert deps.executions.started[name] is squatter  # type: ignore[attr-defined]


def test_a_batch_name_taken_by_someone_else_is_refused_for_each_member() -> None:
    deps = _sealed()
    members = (Member("a", 1, 1, DUE), Member("b", 1, 1, DUE))
    name = batch_name(DUE, members, key=names_key(deps))
    deps.batches.started[name] = BatchOrder(DUE, members)  # type: ignore[attr-defined]

    with pytest.raises(NameTaken):
        start_batch(name, BatchOrder(DUE, members), deps)

    tampered = deps.publisher.of_type("Schedule Tampered")  # type: ignore[attr-defined]
    assert sorted(t["id"] for t in tampered) == ["a", "b"]


ids = st.one_of(
    st.text(min_size=1, max_size=120),
    st.sampled_from(["b-1772265600", "b-1772265600-0123456789ab", "a-5cd23eb3-g1-o1", "x" * 90]),
)


@given(ids, st.integers(1, 5), st.integers(1, 5), st.integers(0, 3))
def test_no_name_told_without_the_key_is_one_the_stack_uses(
    action_id: str, generation: int, occurrence: int, repair: int
) -> None:
    """Whatever an outsider can compute — the unkeyed scheme, the scheme before keys, a batch
    name for the same members — is never the name the stack starts the fire under."""
    key = b"k" * 32
    ours = {
        execution_name(action_id, generation, occurrence, repair=repair, key=key),
        batch_name(DUE, (Member(action_id, generation, occurrence, DUE),), repair, key=key),
    }
    guesses = {
        execution_name(action_id, generation, occurrence, repair=repair, key=None),
        legacy_execution_name(action_id, generation, occurrence, repair=repair),
        batch_name(DUE, (Member(action_id, generation, occurrence, DUE),), repair, key=None),
    }
    assert ours.isdisjoint(guesses)


def test_an_id_created_again_after_its_record_went_never_meets_its_earlier_names() -> None:
    """A purge, or the expiry of a finished record, starts the id's numbering over; Step
    Functions keeps a name for 90 days. The fire and the run now of the id's new life get
    names of their own, and start: nothing of the earlier life is taken for theirs."""
    deps = _sealed()
    start_action(StartCommand({"id": "a", "rate": "rate(10 minutes)"}, "ev-1"), deps)
    run_now("a", deps)
    earlier = set(deps.executions.started)  # type: ignore[attr-defined]
    deps.records.delete("a")  # purged (or expired)
    deps.clock.advance(seconds=1)

    start_action(StartCommand({"id": "a", "rate": "rate(10 minutes)"}, "ev-2"), deps)
    run_now("a", deps)

    later = set(deps.executions.started) - earlier  # type: ignore[attr-defined]
    assert len(earlier) == 2 and len(later) == 2  # a fire and a run now, each life
    assert machine.current(deps, "a") in later and machine.manual(deps, "a", 1) in later
    assert deps.publisher.of_type("Schedule Tampered") == []  # type: ignore[attr-defined]
