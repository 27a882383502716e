"""What a stored action counts as, and the counter ADDs a write makes: none for a fire's claim
and record, one move for a status change, expiry days for finished records."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tickwork.adapters.dynamodb_counts import (
    ATTENTION,
    counted_as,
    counter_ids,
    deltas,
    fire_changes_at,
    merged,
)
from tickwork.adapters.record_keys import shard_of

ID = "invoice:42"
SHARD = shard_of(ID)


def item(status: str, **more: object) -> dict:
    return {"id": ID, "status": status, "group": "billing", **more}


def test_a_claim_and_its_record_change_no_counter() -> None:
    pending, claimed = counted_as(item("PENDING")), counted_as(item("IN_PROGRESS"))
    assert deltas(pending, claimed) == {} and deltas(claimed, pending) == {}


def test_a_new_action_is_added_to_all_and_to_its_group() -> None:
    assert deltas(None, counted_as(item("PENDING"))) == {
        f"#count#*#0#{SHARD}": {"PENDING": 1},
        f"#count#g:billing#0#{SHARD}": {"PENDING": 1},
    }


def test_a_finished_action_moves_to_the_day_it_expires() -> None:
    day = 20_500
    moved = deltas(counted_as(item("PENDING")), counted_as(item("COMPLETED", ttl=day * 86_400 + 5)))
    assert moved == {
        f"#count#*#0#{SHARD}": {"PENDING": -1},
        f"#count#g:billing#0#{SHARD}": {"PENDING": -1},
        f"#count#*#{day}#{SHARD}": {"COMPLETED": 1},
        f"#count#g:billing#{day}#{SHARD}": {"COMPLETED": 1},
    }


def test_attention_is_counted_beside_the_status() -> None:
    failed = counted_as(item("PENDING", attentionShard=f"attention#{SHARD}"))
    assert deltas(counted_as(item("PENDING")), failed) == {
        f"#count#*#0#{SHARD}": {ATTENTION: 1},
        f"#count#g:billing#0#{SHARD}": {ATTENTION: 1},
    }


def test_a_purge_takes_it_off_and_a_non_action_item_counts_as_nothing() -> None:
    assert deltas(counted_as(item("CANCELLED")), None) == {
        f"#count#*#0#{SHARD}": {"CANCELLED": -1},
        f"#count#g:billing#0#{SHARD}": {"CANCELLED": -1},
    }
    assert counted_as({"id": "#pump", "parkedFrom": 1}) is None


def test_a_count_reads_day_zero_and_the_expiry_days_of_every_shard() -> None:
    ids = counter_ids("billing", range(10, 12), 2)
    assert ids == [f"#count#g:billing#{day}#{shard}" for day in (0, 10, 11) for shard in (0, 1)]


@given(
    minute=st.one_of(st.sampled_from([0, 59, 60, 29_940_659]), st.integers(0, 40_000_000)),
    kind=st.sampled_from(["onTime", "late", "failed"]),
    group=st.sampled_from(["default", "g", "m1"]),
)
def test_a_fire_is_totalled_on_its_hour_item_once_whether_written_now_or_by_the_release_before(
    minute: int, kind: str, group: str
) -> None:
    """A fire's totals now: its hour's item, the hour's field and its minute's, in all and in
    its group. A tab the release before left open carries the minute's item and the hour's:
    added up, they are the same ADDs."""
    now = fire_changes_at(group, kind, minute)
    legacy = {
        f"#fires#{scope}#{unit}": {kind: 1}
        for scope in ("*", f"g:{group}")
        for unit in (f"m{minute}", f"h{minute // 60}")
    }
    hour_fields = {kind: 1, f"{kind}@{minute % 60:02d}": 1}
    assert now == {f"#fires#{s}#h{minute // 60}": hour_fields for s in ("*", f"g:{group}")}
    assert merged(legacy) == merged(now) == now
    assert merged(now, now) == {item: {k: 2 for k in f} for item, f in now.items()}
