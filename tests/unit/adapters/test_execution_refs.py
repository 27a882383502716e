"""A record names an execution of the stack's own machines by machine and name
(``execution_refs``): every ARN, bare name or foreign ARN reads back as it was, for generated
names and machines named to collide (one machine's name the start of the other's)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tickwork.adapters.execution_refs import ExecutionRefs

_HOME = "arn:aws:states:us-east-1:123456789012"
_MACHINES = st.sampled_from(
    [
        ("tickwork-fire", "tickwork-batch"),
        ("t-fire", "t-fire-batch"),  # the batch machine's name starts with the fire machine's
        ("t-batch-fire", "t-batch"),
        ("x", "x_"),
    ]
)
_NAMES = st.from_regex(r"[A-Za-z0-9_-]{1,80}", fullmatch=True)


def _refs(machines: tuple[str, str], batches: bool = True) -> ExecutionRefs:
    fire, batch = machines
    return ExecutionRefs(
        f"{_HOME}:stateMachine:{fire}", f"{_HOME}:stateMachine:{batch}" if batches else None
    )


@given(_MACHINES, _NAMES, st.booleans())
def test_an_execution_of_either_machine_is_stored_short_and_read_back_whole(
    machines: tuple[str, str], name: str, on_batch: bool
) -> None:
    refs = _refs(machines)
    arn = f"{_HOME}:execution:{machines[on_batch]}:{name}"

    stored = refs.stored(arn)

    assert stored == ("b:" if on_batch else "f:") + name
    assert refs.read(stored) == arn


@given(_MACHINES, _NAMES, st.sampled_from(["other-machine", "t-fire2"]), st.booleans())
def test_other_executions_and_bare_names_are_kept_whole(
    machines: tuple[str, str], name: str, other: str, batches: bool
) -> None:
    refs = _refs(machines, batches)
    for value in (
        f"{_HOME}:execution:{other}:{name}",  # another machine
        f"arn:aws:states:eu-west-1:999999999999:execution:{machines[0]}:{name}",  # elsewhere
        name,  # a bare name, as claims were written before they held ARNs
        None,
    ):
        assert refs.stored(value) == value and refs.read(value) == value


@given(_MACHINES, _NAMES)
def test_without_a_batch_machine_its_executions_are_kept_whole(
    machines: tuple[str, str], name: str
) -> None:
    refs = _refs(machines, batches=False)
    arn = f"{_HOME}:execution:{machines[1]}:{name}"
    assert refs.stored(arn) == arn and refs.read(arn) == arn
