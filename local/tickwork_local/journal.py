"""A write-ahead journal of the emulator's DynamoDB items, so the local stack survives a restart.

While ``Journal.installed()`` is active, every successful write to a watched table (in-process
``mock_aws`` or a ``ThreadedMotoServer`` in this process: both use moto's backend objects) appends
the item as it now is, read back from the backend in DynamoDB JSON, or a deletion marker, to
``journal.jsonl``; the line is fsync'd before the write returns, so whatever a caller saw
acknowledged is on disk. ``compact()`` folds the journal into ``snapshot.json``; ``restore()``
puts the state back into a fresh emulator's tables. Only the item tables are kept: executions
and queues are rebuilt from them.
"""

from __future__ import annotations

import base64
import inspect
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table
from moto.dynamodb.models.utilities import dynamo_json_dump

from tickwork_local.keys import fsync_dir

__all__ = ["Journal", "JournalCorrupt"]

JOURNAL = "journal.jsonl"
SNAPSHOT = "snapshot.json"
BATCH_SIZE = 25  # BatchWriteItem's limit

# The backend methods that change items. batch_write_item's handler (in responses.py) and
# transact_write_items both call put/update/delete_item on the backend; transact_write_items is
# hooked as well because it rolls back a failed transaction by swapping whole tables, so its
# inner writes are journaled only once the transaction as a whole has succeeded. PartiQL
# (execute_statement, also behind execute_transaction and batch_execute_statement) writes to the
# tables directly, so its changes are found by comparing the watched tables before and after.
_KEYED = ("put_item", "update_item", "delete_item")
_TRANSACTION = "transact_write_items"
_STATEMENT = "execute_statement"
_HOOKED = (*_KEYED, _TRANSACTION, _STATEMENT)
_MARK = "__tickwork_journal__"

State = dict[str, dict[str, dict[str, Any]]]  # table -> key string -> item in DynamoDB JSON
Key = dict[str, dict[str, Any]]


class JournalCorrupt(Exception):
    def __init__(self, path: Path, line: int | None = None) -> None:
        what = (
            f"{path} is not what the stack wrote there (it writes a snapshot whole, then "
            "renames it)"
            if line is None
            else f"{path}: line {line} is not a journal record and is not the last line (only "
            "a kill can tear a line, and only the last)"
        )
        super().__init__(
            f"{what}: put back a copy of the state dir, or start over with "
            "`tickwork local --fresh` (it drops the actions kept there)"
        )


class Journal:
    def __init__(self, folder: Path, tables: set[str]) -> None:
        self.folder = Path(folder)
        self.tables = frozenset(tables)
        self.journal_path = self.folder / JOURNAL
        self.snapshot_path = self.folder / SNAPSHOT
        # Held across the backend write and its append: concurrent writes (the server's request
        # threads) are serialised, which also makes moto's condition-check-then-write atomic.
        self._lock = threading.RLock()
        self._file: Any = None
        self._depth = 0
        self._pending: list[tuple[str, Key]] = []

    # --- recording ---------------------------------------------------------------------------
    @contextmanager
    def installed(self) -> Iterator[Journal]:
        originals = {name: getattr(DynamoDBBackend, name) for name in _HOOKED}
        if any(getattr(method, _MARK, False) for method in originals.values()):
            raise RuntimeError("a journal is already installed on moto's DynamoDB backend")
        self._file = self._open_for_append()
        try:
            for name, original in originals.items():
                setattr(DynamoDBBackend, name, self._hooked(name, original))
            yield self
        finally:
            for name, original in originals.items():
                setattr(DynamoDBBackend, name, original)
            with self._lock:
                self._file.close()
                self._file = None

    def _hooked(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(original)

        def write(backend: DynamoDBBackend, *args: Any, **kwargs: Any) -> Any:
            arguments = signature.bind(backend, *args, **kwargs).arguments
            with self._lock:
                before = self._watched(backend) if name == _STATEMENT else None
                self._depth += 1
                try:
                    result = original(backend, *args, **kwargs)
                    self._pending.extend(self._touched(backend, name, arguments, before))
                except BaseException:
                    if self._depth == 1:
                        self._pending.clear()
                    raise
                finally:
                    self._depth -= 1
                if self._depth == 0:
                    self._append(backend)
                return result

        setattr(write, _MARK, True)
        return write

    def _touched(
        self,
        backend: DynamoDBBackend,
        name: str,
        arguments: dict[str, Any],
        before: State | None,
    ) -> list[tuple[str, Key]]:
        if name == _STATEMENT:
            return _changed(before or {}, self._watched(backend))
        if name == _TRANSACTION:
            return []  # its puts, updates and deletes were recorded as they ran
        table = backend.get_table(arguments["table_name"])
        if table.name not in self.tables:
            return []
        attrs = arguments["item_attrs"] if name == "put_item" else arguments["key"]
        return [(table.name, _key(table, attrs))]

    def _watched(self, backend: DynamoDBBackend) -> State:
        return {
            name: {_key_string(_key(table, item.attrs)): _wire(item) for item in table.all_items()}
            for name, table in backend.tables.items()
            if name in self.tables
        }

    def _append(self, backend: DynamoDBBackend) -> None:
        latest = {(table, _key_string(key)): (table, key) for table, key in self._pending}
        self._pending.clear()
        lines = []
        for table_name, key in latest.values():
            table = backend.tables.get(table_name)
            item = _read(table, key) if table else None
            record = {"table": table_name, "key": key, "item": _wire(item) if item else None}
            lines.append(json.dumps(record, separators=(",", ":")) + "\n")
        if lines:
            self._file.write("".join(lines).encode())
            self._file.flush()
            os.fsync(self._file.fileno())

    def _open_for_append(self) -> Any:
        """Open the journal, mending a line torn by a kill so the next record starts clean."""
        self.folder.mkdir(parents=True, exist_ok=True)
        created = not self.journal_path.exists()
        handle = open(self.journal_path, "ab")  # noqa: SIM115 - closed when uninstalled
        if created:
            fsync_dir(self.folder)
        data = self.journal_path.read_bytes()
        if data and not data.endswith(b"\n"):
            end = data.rfind(b"\n") + 1
            if _parse(data[end:]) is None:
                handle.truncate(end)
            else:
                handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        return handle

    # --- reading back ------------------------------------------------------------------------
    def load(self) -> State:
        with self._lock:
            state: State = {}
            if self.snapshot_path.exists():
                try:
                    state = json.loads(self.snapshot_path.read_text())
                except (OSError, ValueError):
                    raise JournalCorrupt(self.snapshot_path) from None
                if not _is_state(state):
                    raise JournalCorrupt(self.snapshot_path)
            for record in self._records():
                items = state.setdefault(record["table"], {})
                key = _key_string(record["key"])
                if record["item"] is None:
                    items.pop(key, None)
                else:
                    items[key] = record["item"]
            return state

    def _records(self) -> Iterator[dict[str, Any]]:
        if not self.journal_path.exists():
            return
        try:
            lines = self.journal_path.read_bytes().split(b"\n")
        except OSError:  # a folder in its place
            raise JournalCorrupt(self.journal_path) from None
        for number, line in enumerate(lines, start=1):
            if not line:
                continue
            record = _parse(line)
            if record is not None:
                yield record
            elif number < len(lines):  # only the last line can be torn by a kill
                raise JournalCorrupt(self.journal_path, number)

    def compact(self) -> None:
        """Fold the journal into the snapshot; a kill at any point leaves either file valid."""
        with self._lock:
            state = self.load()
            temporary = self.snapshot_path.with_suffix(".tmp")
            with open(temporary, "w") as handle:
                json.dump(state, handle, separators=(",", ":"))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.snapshot_path)
            fsync_dir(self.folder)
            if self.journal_path.exists():
                with open(self.journal_path, "r+b") as handle:
                    handle.truncate(0)
                    os.fsync(handle.fileno())

    def restore(self, client: Any, state: State | None = None) -> int:
        """Put every kept item back through a boto3 DynamoDB client; return how many of them
        are action records (not the stack's own items: counters, tabs, the pump's watermark,
        whose ids start with ``#``). ``state``: what ``load()`` answered, if it was read already.

        Call it before ``installed()``: the restored items are already on disk.
        """
        count = 0
        for table, items in (self.load() if state is None else state).items():
            values = list(items.values())
            for start in range(0, len(values), BATCH_SIZE):
                requests = {
                    table: [
                        {"PutRequest": {"Item": _for_client(item)}}
                        for item in values[start : start + BATCH_SIZE]
                    ]
                }
                while requests:
                    requests = client.batch_write_item(RequestItems=requests).get(
                        "UnprocessedItems"
                    )
            count += sum(1 for item in values if not _is_bookkeeping(item))
        return count


def _is_bookkeeping(item: dict[str, Any]) -> bool:
    """An item of the stack's own, not an action: its id starts with ``#`` (no action's can)."""
    key = item.get("id")
    text = key.get("S") if isinstance(key, dict) else key
    return isinstance(text, str) and text.startswith("#")


def _key(table: Table, attrs: dict[str, Any]) -> Key:
    """The item's primary key in DynamoDB JSON, from request values or stored DynamoTypes."""
    key = {}
    for name in table.table_key_attrs:
        value = attrs[name]
        ((kind, raw),) = (value.to_json() if isinstance(value, DynamoType) else value).items()
        key[name] = {kind: _canonical_number(raw) if kind == "N" else raw}
    return key


def _changed(before: State, after: State) -> list[tuple[str, Key]]:
    changed = []
    for table in before.keys() | after.keys():
        old, new = before.get(table, {}), after.get(table, {})
        changed += [
            (table, json.loads(k)) for k in old.keys() | new.keys() if old.get(k) != new.get(k)
        ]
    return changed


def _canonical_number(raw: str) -> str:
    """One spelling for numbers DynamoDB takes as one key value: 1, 1.0 and 1E0."""
    return format(Decimal(raw).normalize(), "f")


def _key_string(key: Key) -> str:
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


def _read(table: Table, key: Key) -> Item | None:
    hash_key = DynamoType(key[table.hash_key_attr])
    range_key = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
    return table.get_item(hash_key, range_key)


def _wire(item: Item) -> dict[str, Any]:
    """The item as DynamoDB's wire format gives it (binary values base64-encoded)."""
    wire: dict[str, Any] = json.loads(dynamo_json_dump(item.to_json()["Attributes"]))
    return wire


def _for_client(item: dict[str, Any]) -> dict[str, Any]:
    """Wire format to boto3 client parameters: the client base64-encodes binary itself."""
    return {name: _attribute_for_client(attribute) for name, attribute in item.items()}


def _attribute_for_client(attribute: dict[str, Any]) -> dict[str, Any]:
    ((kind, raw),) = attribute.items()
    if kind == "B":
        raw = base64.b64decode(raw)
    elif kind == "BS":
        raw = [base64.b64decode(member) for member in raw]
    elif kind == "M":
        raw = _for_client(raw)
    elif kind == "L":
        raw = [_attribute_for_client(member) for member in raw]
    return {kind: raw}


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not {"table", "key", "item"} <= record.keys():
        return None
    item = record["item"]
    shaped = isinstance(record["table"], str) and isinstance(record["key"], dict)
    return record if shaped and (item is None or _is_item(item)) else None


def _is_item(item: Any) -> bool:
    """An item in DynamoDB JSON: each attribute an object naming its type."""
    return isinstance(item, dict) and all(isinstance(v, dict) for v in item.values())


def _is_state(state: Any) -> bool:
    """A snapshot as ``compact`` writes it: table -> key string -> item."""
    return isinstance(state, dict) and all(
        isinstance(items, dict) and all(_is_item(item) for item in items.values())
        for items in state.values()
    )
