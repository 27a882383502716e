"""Which detail-types are slips of one the stack takes (answered with a Schedule Rejected) and
which are another consumer's (left alone): for generated slips of each detail-type taken —
case, spaces, a swapped, dropped or doubled letter — and names of other events."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tickwork.domain.events import INBOUND, DetailType, meant_detail_type

_TAKEN = sorted(INBOUND)


@st.composite
def _slip(draw: st.DrawFn) -> tuple[str, DetailType]:
    meant = draw(st.sampled_from(_TAKEN))
    text = str(meant)
    letters = [i for i, c in enumerate(text) if c.isalpha()]
    i = draw(st.sampled_from(letters[9:]))  # past "Schedule ": the part people mistype
    kind = draw(st.sampled_from(["case", "spaces", "swap", "drop", "double"]))
    if kind == "case":
        text = draw(st.sampled_from([text.lower(), text.upper(), text.title()]))
    elif kind == "spaces":
        text = draw(st.sampled_from([f"{text} ", f" {text}", text.replace(" ", "  ")]))
    elif kind == "swap" and i + 1 < len(text):
        text = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    elif kind == "drop":
        text = text[:i] + text[i + 1 :]
    else:
        text = text[:i] + text[i] + text[i:]
    return text, meant


@given(_slip())
def test_a_slip_of_a_detail_type_the_stack_takes_is_answered_as_that_one(slip) -> None:
    text, meant = slip
    assert meant_detail_type(text) == meant


def test_each_detail_type_taken_is_itself() -> None:
    assert all(meant_detail_type(str(kind)) == kind for kind in INBOUND)


@given(
    st.sampled_from(
        [
            "Order Created",
            "Invoice Paid",
            "Schedule Tick",  # tickwork's own, as another consumer may publish it to test with
            "Scheduled Event",
            "EC2 Instance State-change Notification",
            "Customer Signed Up",
            "",
        ]
    )
)
def test_other_consumers_events_are_left_alone(detail_type: str) -> None:
    assert meant_detail_type(detail_type) is None
