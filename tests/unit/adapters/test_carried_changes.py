"""The counter changes a record carries for a batch's tab (``uncounted``) are read back as they
were written, whatever the changes and the record's group, in every record format stored."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickwork.adapters.dynamodb_counts import COUNTER_PREFIX, FIRE_PREFIX, Changes
from tickwork.adapters.dynamodb_record import FORMAT, FORMAT_VERSION
from tickwork.adapters.dynamodb_tabs import TELL_HOURS, UNCOUNTED, carried_by, carried_item

# Groups chosen to collide with the encoding: the default, one named like a scope's pieces.
_GROUPS = st.sampled_from(["default", "g", "a.b-c_d", "x" * 64, "0"])
_SCOPES = st.one_of(st.just("*"), _GROUPS.map(lambda g: f"g:{g}"))
_RESTS = st.sampled_from(["#0#4", "#20814#7", "#h498836", "#m29930180", "#0#0"])
_FIELDS = st.sampled_from(["PENDING", "COMPLETED", "NEEDS_ATTENTION", "onTime", "late"])


@st.composite
def _changes(draw: st.DrawFn) -> Changes:
    changes: Changes = {}
    for _ in range(draw(st.integers(0, 8))):
        prefix = draw(st.sampled_from([COUNTER_PREFIX, FIRE_PREFIX]))
        item = f"{prefix}{draw(_SCOPES)}{draw(_RESTS)}"
        fields = changes.setdefault(item, {})
        fields[draw(_FIELDS)] = draw(st.integers(-3, 3).filter(bool))
    return {item: fields for item, fields in changes.items() if fields}


@given(
    st.dictionaries(st.sampled_from(["b-1-ab#0", "b-2-cd#1", "r-9#0"]), _changes()),
    _GROUPS,
    st.booleans(),
)
def test_what_a_record_carries_reads_back_as_written(
    carried: dict[str, Changes], group: str, tell_hours: bool
) -> None:
    stored = carried_item(carried, group, tell_hours)
    item = {"id": "a", "group": group, FORMAT: FORMAT_VERSION, UNCOUNTED: stored or {}}
    assert carried_by(item) == {tab: changes for tab, changes in carried.items() if changes}


@given(_changes(), _GROUPS)
def test_a_pair_of_changes_to_all_and_the_group_is_written_once(
    changes: Changes, group: str
) -> None:
    """Never more texts than changes; a pair (all, the record's group) takes one, and so does a
    minute with its hour's same change (format 3)."""
    [texts] = (carried_item({"t#0": changes}, group) or {"t#0": []}).values()
    total = sum(len(fields) for fields in changes.values())
    pairs = sum(
        1
        for item, fields in changes.items()
        if item.startswith((f"{COUNTER_PREFIX}*#", f"{FIRE_PREFIX}*#"))
        for name, value in fields.items()
        if changes.get(item.replace("*", f"g:{group}", 1), {}).get(name) == value
    )
    assert len(texts) <= total - pairs


def test_one_fire_can_be_carried_in_one_text() -> None:
    """A fire's four totals (its minute and hour, all and its group) are one text where the
    minute tells its hour (read from format 3 on; written once ``TELL_HOURS`` is on)."""
    minute = 29930180
    changes = {
        f"{FIRE_PREFIX}{scope}#{unit}": {"onTime": 1}
        for scope in ("*", "g:billing")
        for unit in (f"m{minute}", f"h{minute // 60}")
    }
    stored = carried_item({"b-1-ab#0": changes}, "billing", tell_hours=True)
    assert stored == {"b-1-ab#0": [f"f/+#M{minute} onTime 1"]}
    item = {"id": "a", "group": "billing", FORMAT: FORMAT_VERSION, UNCOUNTED: stored}
    assert carried_by(item) == {"b-1-ab#0": changes}
    # a record of format 2 wrote the hour apart: read as it was written, no hour told
    older = {**item, FORMAT: 2, UNCOUNTED: {"b-1-ab#0": [f"f/+#m{minute} onTime 1"]}}
    assert carried_by(older) == {
        "b-1-ab#0": {f"{FIRE_PREFIX}{s}#m{minute}": {"onTime": 1} for s in ("*", "g:billing")}
    }


def test_a_record_of_the_first_format_is_read_as_it_was_written() -> None:
    """Written before ``fmt`` (format 1): each change on its own, none paired."""
    item = {
        "id": "a",
        "group": "default",
        UNCOUNTED: {"b-1-ab#0": ["c/*#0#4 PENDING -1", "c/g:default#0#4 PENDING -1"]},
    }
    assert carried_by(item) == {
        "b-1-ab#0": {
            "#count#*#0#4": {"PENDING": -1},
            "#count#g:default#0#4": {"PENDING": -1},
        }
    }


def test_until_hours_are_told_a_fire_is_written_as_the_version_before_reads_it() -> None:
    """A stack being upgraded still runs functions of the version before: what this one writes
    must read the same there (minutes and hours each written)."""
    assert TELL_HOURS is False
    minute = 29930180
    changes = {
        f"{FIRE_PREFIX}{s}#{u}": {"late": 1}
        for s in ("*", "g:b")
        for u in (f"m{minute}", f"h{minute // 60}")
    }
    [texts] = (carried_item({"t#0": changes}, "b") or {}).values()
    assert sorted(texts) == [f"f/+#h{minute // 60} late 1", f"f/+#m{minute} late 1"]


def test_a_record_of_a_format_it_does_not_read_is_refused_not_guessed() -> None:
    from tickwork.domain.errors import RecordFormatUnknown

    item = {"id": "a", "group": "g", FORMAT: 99, UNCOUNTED: {"t#0": ["f/+#Q1 onTime 1"]}}
    with pytest.raises(RecordFormatUnknown):
        carried_by(item)
