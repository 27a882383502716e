"""What a stored action counts as, and the counter ADDs a write makes: none for a fire's claim
and record, one move for a status change, expiry days for finished records."""

from __future__ import annotations

from tickwork.adapters.dynamodb_counts import ATTENTION, counted_as, counter_ids, deltas
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
