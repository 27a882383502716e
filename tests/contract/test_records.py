"""GIVEN the records port (fake and DynamoDB) WHEN records are created, read, saved and
deleted THEN both answer alike: a version fence on every write, copies on every read."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.contract.conftest import Stores
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionConflict


def test_a_created_record_reads_back_equal_and_an_id_is_created_once(stores: Stores) -> None:
    action = stores.add("rec:1")

    assert stores.records.get("rec:1") == action
    assert stores.records.get("rec:missing") is None
    with pytest.raises(ActionConflict):
        stores.records.create(action)


def test_a_save_is_fenced_on_the_version_read(stores: Stores) -> None:
    action = stores.add("rec:1")
    moved = replace(action, status=Status.PAUSED, version=action.version + 1)

    stores.records.save(moved, action.version)

    assert stores.records.get("rec:1") == moved
    with pytest.raises(ActionConflict):  # a writer that read the version before
        stores.records.save(replace(action, version=action.version + 1), action.version)
    with pytest.raises(ActionConflict):  # a record that is not there
        stores.records.save(replace(action, id="rec:gone"), action.version)
    assert stores.records.get("rec:1") == moved


def test_a_delete_removes_the_record_and_a_second_one_is_harmless(stores: Stores) -> None:
    stores.add("rec:1")

    stores.records.delete("rec:1")
    stores.records.delete("rec:1")

    assert stores.records.get("rec:1") is None


def test_what_a_reader_changes_in_its_copy_is_not_stored(stores: Stores) -> None:
    stores.add("rec:1", data={"n": 1})

    read = stores.records.get("rec:1")
    assert read is not None
    read.data["n"] = 2

    again = stores.records.get("rec:1")
    assert again is not None and again.data == {"n": 1}
