"""GIVEN writes to the actions table while a journal is installed WHEN a new emulator is started
and the journal restored into it THEN every written item is back as it was, deletions stay
deleted, and nothing a caller saw acknowledged is lost, even to a kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from moto import mock_aws

from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.domain.action import Status
from tickwork_local.journal import Journal, JournalCorrupt
from tickwork_local.server import serving
from tickwork_local.stack import LocalStack

WRITER = Path(__file__).with_name("journal_writer.py")
TABLE = "tickwork-local-ActionsTable"


@contextmanager
def fresh_stack() -> Iterator[LocalStack]:
    with mock_aws(), LocalStack.from_repo().running() as local:
        assert local.outputs["ActionsTableName"] == TABLE
        yield local


@contextmanager
def served_stack() -> Iterator[LocalStack]:
    with serving(), LocalStack.from_repo().running() as local:
        yield local


def invoke(local: LocalStack, logical_id: str, event: dict[str, Any]) -> Any:
    name = next(f.name for f in local.functions if f.logical_id == logical_id)
    result, error = local.runtime.invoke(name, event)
    assert error is None, result
    return result


def items(local: LocalStack) -> dict[str, dict[str, Any]]:
    pages = local.client("dynamodb").get_paginator("scan").paginate(TableName=TABLE)
    return {item["id"]["S"]: item for page in pages for item in page["Items"]}


def put(local: LocalStack, action_id: str, **attributes: dict[str, Any]) -> None:
    local.client("dynamodb").put_item(
        TableName=TABLE, Item={"id": {"S": action_id}, "status": {"S": "PENDING"}, **attributes}
    )


def restored(folder: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    with fresh_stack() as local:
        count = Journal(folder, {TABLE}).restore(local.client("dynamodb"))
        return count, items(local)


def test_restore_gives_back_what_the_adapter_and_raw_writes_left(tmp_path: Path, event) -> None:
    # GIVEN actions started, stopped and deleted through the handlers and the records
    # adapter, and raw puts, updates and deletes (binary and nested values included)
    with fresh_stack() as local, Journal(tmp_path, {TABLE}).installed():
        records = DynamoDBRecords(TABLE)
        invoke(local, "StartFunction", event("start/duration-5m"))
        invoke(local, "StartFunction", event("start/cron"))
        invoke(local, "ControlFunction", event("control/cancel"))
        records.delete("test:schedule")
        blob = {"B": b"\x00\xffbytes"}
        put(local, "raw:kept", blob=blob, nested={"M": {"list": {"L": [blob, {"N": "1.50"}]}}})
        local.client("dynamodb").update_item(
            TableName=TABLE,
            Key={"id": {"S": "raw:kept"}},
            UpdateExpression="SET generation = :two, tags = :tags",
            ExpressionAttributeValues={":two": {"N": "2"}, ":tags": {"SS": ["a", "b"]}},
        )
        put(local, "raw:gone")
        local.client("dynamodb").delete_item(TableName=TABLE, Key={"id": {"S": "raw:gone"}})
        written = items(local)
        cancelled = records.get("test:duration-5m")

    # WHEN a new emulator is started and the journal restored into it
    with fresh_stack() as local:
        count = Journal(tmp_path, {TABLE}).restore(local.client("dynamodb"))

        # THEN the items are exactly the ones written; deleted ones stay deleted
        assert items(local) == written
        # the count is of action records: the stack's own items (ids from "#") are not actions
        assert count == len([k for k in written if not k.startswith("#")])
        # two records, and the counter items their transactions wrote (dynamodb_counts)
        assert sorted(k for k in written if not k.startswith("#")) == [
            "raw:kept",
            "test:duration-5m",
        ]
        assert any(k.startswith("#count#") for k in written)
        assert DynamoDBRecords(TABLE).get("test:duration-5m") == cancelled
        assert cancelled is not None and cancelled.status == Status.CANCELLED
        assert written["raw:kept"]["blob"] == {"B": b"\x00\xffbytes"}


def test_a_torn_last_line_is_skipped_and_mended(tmp_path: Path) -> None:
    # GIVEN two journaled writes, then a line cut short by a kill
    with fresh_stack() as local, Journal(tmp_path, {TABLE}).installed():
        put(local, "torn:1")
        put(local, "torn:2")
    with open(tmp_path / "journal.jsonl", "ab") as journal:
        journal.write(b'{"table":"tickwork-local-ActionsTable","key":{"id":{"S":"torn:3"')

    # WHEN it is restored, and later journaled onto again
    count, found = restored(tmp_path)
    with fresh_stack() as local, Journal(tmp_path, {TABLE}).installed():
        put(local, "torn:4")

    # THEN the torn line is dropped and the next record starts on a line of its own
    assert count == 2 and sorted(found) == ["torn:1", "torn:2"]
    assert sorted(restored(tmp_path)[1]) == ["torn:1", "torn:2", "torn:4"]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("snapshot.json", "{not json"),
        ("snapshot.json", "[]"),
        ("snapshot.json", '{"t": [{"id": {"S": "a"}}]}'),
        ("snapshot.json", '{"t": {"a": "an item"}}'),
        ("snapshot.json", '{"t": {"a": {"id": {"S": "a"}, "updatedAt": "2030-01-01"}}}'),
        ("journal.jsonl", '{"table": [1], "key": {}, "item": null}\n{"table": "t"}\n'),
        ("journal.jsonl", '{"table": "t", "key": {"id": {"S": "a"}}, "item": "x"}\nmore\n'),
        ("journal.jsonl", 'not a record\n{"table":"t","key":{"id":{"S":"a"}},"item":null}\n'),
    ],
)
def test_a_state_dir_it_did_not_write_is_refused_naming_the_file_and_the_fix(
    tmp_path: Path, name: str, text: str
) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(JournalCorrupt) as refused:
        Journal(tmp_path, {TABLE}).load()
    assert str(tmp_path / name) in str(refused.value) and "--fresh" in str(refused.value)


@pytest.mark.parametrize("name", ["snapshot.json", "journal.jsonl"])
def test_a_folder_where_a_state_file_belongs_is_refused_naming_it(
    tmp_path: Path, name: str
) -> None:
    (tmp_path / name).mkdir()
    with pytest.raises(JournalCorrupt) as refused:
        Journal(tmp_path, {TABLE}).load()
    assert str(tmp_path / name) in str(refused.value) and "--fresh" in str(refused.value)


def test_compaction_keeps_the_state_and_empties_the_journal(tmp_path: Path) -> None:
    # GIVEN journaled puts and a delete
    journal = Journal(tmp_path, {TABLE})
    with fresh_stack() as local, journal.installed():
        for number in range(30):
            put(local, f"compact:{number}")
        local.client("dynamodb").delete_item(TableName=TABLE, Key={"id": {"S": "compact:0"}})
        before = journal.load()

        # WHEN it is compacted while installed, then written to again
        journal.compact()
        emptied = (tmp_path / "journal.jsonl").stat().st_size
        put(local, "compact:after")

    # THEN the snapshot holds the state, the journal only what came after
    assert emptied == 0
    assert Journal(tmp_path, {TABLE}).load()[TABLE].keys() == {
        *before[TABLE].keys(),
        '{"id":{"S":"compact:after"}}',
    }
    count, found = restored(tmp_path)
    assert count == 30 and "compact:0" not in found and "compact:after" in found


def test_nothing_acknowledged_is_lost_to_kill_9(tmp_path: Path) -> None:
    # GIVEN a process writing and acknowledging items through a journal
    with open(tmp_path / "stderr", "w") as stderr:
        writer = subprocess.Popen(
            [sys.executable, str(WRITER), str(tmp_path / "state")],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    assert writer.stdout is not None
    acknowledged = []
    try:
        assert writer.stdout.readline() == f"ready {TABLE}\n", (tmp_path / "stderr").read_text()
        while len(acknowledged) < 40:
            line = writer.stdout.readline()
            assert line, (tmp_path / "stderr").read_text()
            acknowledged.append(line.strip())

        # WHEN it is killed mid-loop with SIGKILL
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.kill()
        writer.wait(timeout=5)
    acknowledged += writer.stdout.read().split()

    # THEN every acknowledged item is restored as its last acknowledged write left it
    _, found = restored(tmp_path / "state")
    assert writer.returncode == -signal.SIGKILL
    for action_id in acknowledged:
        assert found[action_id]["status"] == {"S": "IN_PROGRESS"}
        assert found[action_id]["generation"] == {"N": "2"}
    assert len(found) - len(acknowledged) in (0, 1)  # at most the write in flight


def test_served_batch_transaction_and_partiql_writes_are_journaled(tmp_path: Path) -> None:
    # GIVEN the emulator served on a port, and batch, transactional and PartiQL writes
    with served_stack() as local:
        dynamodb = local.client("dynamodb")
        with Journal(tmp_path, {TABLE}).installed():
            dynamodb.batch_write_item(
                RequestItems={
                    TABLE: [
                        {"PutRequest": {"Item": {"id": {"S": f"batch:{n}"}, "n": {"N": str(n)}}}}
                        for n in range(3)
                    ]
                }
            )
            dynamodb.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": TABLE, "Item": {"id": {"S": "tx:ok"}}}},
                    {"Delete": {"TableName": TABLE, "Key": {"id": {"S": "batch:0"}}}},
                ]
            )
            # a cancelled transaction is rolled back, so nothing of it is journaled
            with pytest.raises(dynamodb.exceptions.TransactionCanceledException):
                dynamodb.transact_write_items(
                    TransactItems=[
                        {"Put": {"TableName": TABLE, "Item": {"id": {"S": "tx:rolled-back"}}}},
                        {
                            "ConditionCheck": {
                                "TableName": TABLE,
                                "Key": {"id": {"S": "batch:1"}},
                                "ConditionExpression": "attribute_not_exists(id)",
                            }
                        },
                    ]
                )
            dynamodb.execute_statement(
                Statement=f"UPDATE \"{TABLE}\" SET n = ? WHERE id = 'batch:2'",
                Parameters=[{"N": "7"}],
            )
            written = items(local)

    # WHEN restored into a new in-process emulator
    count, found = restored(tmp_path)

    # THEN the journal agrees with what the served emulator held
    assert found == written
    assert sorted(found) == ["batch:1", "batch:2", "tx:ok"] and count == 3
    assert found["batch:2"]["n"] == {"N": "7"}
