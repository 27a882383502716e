"""A busy pump run's shares (domain.pump_shares): every fire due in exactly one share, in
launch order, a launch moment (a batch window's) kept whole where a share can hold it, every
share a payload Lambda takes — for generated launch moments and ids as long as ids go."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from tickwork.domain.identifiers import MAX_ID_LENGTH
from tickwork.domain.pump_shares import MAX_SHARE_BYTES, share_payload, shares

WINDOW_MS = 10_000  # launch moments fall on batch windows' edges

_ids = st.one_of(
    st.from_regex(r"[a-z][a-z0-9:]{0,12}", fullmatch=True),
    st.integers(0, 10**6).map(lambda n: f"{n:0{MAX_ID_LENGTH}d}"),  # the longest ids
)


@st.composite
def _due(draw: st.DrawFn) -> list[tuple[int, str]]:
    windows = draw(st.lists(st.integers(0, 20), max_size=400))
    moments = sorted(w * WINDOW_MS for w in windows)
    names = draw(st.lists(_ids, min_size=len(moments), max_size=len(moments), unique=True))
    return list(zip(moments, names, strict=True))


@given(_due(), st.integers(1, 60))
def test_shares_hold_every_fire_once_in_order_and_keep_moments_whole(due, size) -> None:
    cut = shares(due, size)

    assert [i for share in cut for i in share] == [i for _, i in due]
    assert all(share for share in cut)
    moment = dict((i, ms) for ms, i in due)
    for share, following in pairwise(cut):
        assert len(share_payload(share)) <= MAX_SHARE_BYTES
        small = len(share) < size
        split = moment[share[-1]] == moment[following[0]]
        # a share is cut short only by the payload; a moment is split only by a full share
        assert not small or len(share_payload(share + following[:1])) > MAX_SHARE_BYTES
        assert not split or len(share) >= 2 * size or small


def test_a_share_of_the_longest_ids_stays_under_the_payload_limit() -> None:
    due = [(0, f"{n:0{MAX_ID_LENGTH}d}") for n in range(3000)]

    cut = shares(due, 2000)

    assert len(cut) > 1 and max(len(share_payload(s)) for s in cut) <= MAX_SHARE_BYTES
    assert sum(len(s) for s in cut) == 3000
