"""Where moto's emulator spends its time, and the fixes the local stack (and the tests) run with.

Each fix changes what the emulator costs, never what it answers; each was found with py-spy on
a running ``tickwork local`` and is measured by ``make bench``:

- **ASL parsing** — the Step Functions interpreter parses the definition (ANTLR) again for
  every execution. Parsed once per definition here. A parsed program keeps no per-execution
  state (that lives in the execution's Environment) except the lazily drawn ``heap_key`` of
  each component, drawn here at once so that concurrent executions cannot race on it; programs
  with Map or Parallel states, which do keep state in their components, are not shared.
- **JSONPath parsing** — every path in every state, and every EventBridge target, builds a
  fresh PLY parser (which even lists directories). Parsed paths are cached; they are immutable.
- **A boto3 client per task** — each Task state makes a new client (~10 ms). One per service
  and region is kept; botocore clients are thread-safe.
- **Waits in whole seconds** — a ``TimestampPath`` Wait computed ``int(seconds left)``, so it
  woke up to a second early (on top of AWS's documented truncation of the timestamp to the
  second, which is kept). It now sleeps until that second exactly.
- **Sizing an item once per attribute** — building a DynamoDB item re-added the size of the
  whole item for each attribute set (O(n²) in its attributes). It is sized once, against the
  same 400 KB limit.
- **Counting a queue for every message sent or received** — SendMessage read the queue's
  attributes to learn whether it deduplicates by content, and ReceiveMessage read them for
  each message it returned, to learn the retention period; computing them counts every
  message in the queue, so a burst of N messages cost O(N²). A send to a standard queue (which
  has no such attribute) skips the count, and the retention period is read from the queue.
  SQS also asks for the time of day for every message it looks at, through two datetime
  conversions; it now reads the clock directly (the same number).
- **Serializing every attribute value member by member** — moto's response serializer looks
  up each of the ten members an ``AttributeValue`` may have, through five alias providers, for
  every string or number of every item it returns: 0.47 s for a BatchGetItem of 50 records. A
  value already in its wire form (strings, numbers, booleans, and lists, maps and sets of them)
  is passed through as is, the same JSON; anything holding binary still goes through moto.
- **Projecting an item through JSON** — projecting an item on an index's keys (or a
  projection expression) turned the whole item into plain JSON and back, three times for a
  KEYS_ONLY index, for every item a query returns. Top-level names are now copied as they are.
- **A queue's backlog read for every message** — DeleteMessage looked for its receipt handle
  in every message of the queue and rebuilt the queue's list, once per message of a
  DeleteMessageBatch, and ReceiveMessage listed the visible messages through two clock reads
  per message. With 100,000 Starts waiting in a function's queue the Start function ran at
  9/s. A batch now looks only at messages that were received (near the front) until it has
  found its handles, and a receive reads visible messages only until it has enough, with one
  clock read.
- **Finding the service of a served request** — the server lists moto's package directory for
  every request from outside; the listing is read once.
- **A transaction copying whole tables** — TransactWriteItems deep-copied every table it touches
  before it began (its rollback), so each transaction cost O(items in the table): with the
  action counters, every Start. Only the items it names are copied now, and put back if it
  fails (tables with a sort key keep moto's own copy).
- **A query on a global secondary index reading the whole table** — moto listed, sorted and
  tested every item of the table for each Query on a GSI. Each index now keeps its partitions
  sorted, and a query is shown only the items it can return (``tickwork_local.index_buckets``).
"""

from __future__ import annotations

import calendar
import copy as real_copy
import functools
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

from tickwork_local.index_buckets import index_buckets

__all__ = ["tuned_emulator"]


@contextmanager
def tuned_emulator() -> Iterator[None]:
    with ExitStack() as patches:
        for fix in (
            _asl_parsed_once,
            _jsonpath_parsed_once,
            _one_client_per_service,
            _exact_waits,
            _sends_without_counting,
            _backlogs_read_once,
            _items_sized_once,
            _moto_modules_listed_once,
            _attribute_values_passed_through,
            _top_level_projections_copied,
            _transactions_copy_what_they_touch,
            index_buckets,  # after the transaction fix: it indexes again what a rollback put back
        ):
            patches.enter_context(fix())
        yield


# --- ASL ----------------------------------------------------------------------------------------
_STATEFUL_STATE_TYPES = ("Map", "Parallel")


@contextmanager
def _asl_parsed_once() -> Iterator[None]:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    original = AmazonStateLanguageParser.parse
    cache: dict[str, Any] = {}
    lock = threading.Lock()

    def parse(definition: str) -> Any:
        if not _shareable(definition):
            return original(definition)
        with lock:  # parsed by one thread while the others wait for it
            if definition not in cache:
                parsed = original(definition)
                _draw_heap_keys(parsed[0])
                cache[definition] = parsed
            return cache[definition]

    with mock.patch.object(AmazonStateLanguageParser, "parse", staticmethod(parse)):
        yield


def _shareable(definition: str) -> bool:
    try:
        states = json.loads(definition).get("States", {})
    except (ValueError, AttributeError):
        return False
    return not any(
        isinstance(state, dict) and state.get("Type") in _STATEFUL_STATE_TYPES
        for state in states.values()
    )


def _draw_heap_keys(program: Any) -> None:
    from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent

    seen: set[int] = set()
    pending: list[Any] = [program]
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, EvalComponent):
            _ = item.heap_key
            pending.extend(vars(item).values())
        elif isinstance(item, list | tuple | set):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())


# --- JSONPath -------------------------------------------------------------------------------------
@contextmanager
def _jsonpath_parsed_once() -> Iterator[None]:
    import jsonpath_ng
    import jsonpath_ng.ext
    from moto.stepfunctions.parser.asl.component.common.path import result_path
    from moto.stepfunctions.parser.asl.utils import json_path

    plain = functools.lru_cache(maxsize=4096)(jsonpath_ng.parse)
    extended = functools.lru_cache(maxsize=4096)(jsonpath_ng.ext.parse)
    with (
        mock.patch.object(result_path, "parse", plain),
        mock.patch.object(json_path, "parse", extended),
        mock.patch.object(jsonpath_ng.ext, "parse", extended),  # moto.events imports it late
    ):
        yield


# --- clients --------------------------------------------------------------------------------------
@contextmanager
def _one_client_per_service() -> Iterator[None]:
    from moto.core.models import botocore_stubber
    from moto.settings import moto_server_port
    from moto.stepfunctions.parser.asl.utils import boto_client

    original: Callable[..., Any] = boto_client.boto_client_for
    clients: dict[tuple[str, str, bool, str], Any] = {}
    lock = threading.Lock()

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        key = (region, service, botocore_stubber.enabled, str(moto_server_port()))
        with lock:
            if key not in clients:
                clients[key] = original(region, service, state_credentials)
            return clients[key]

    users = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("moto.stepfunctions.parser")
        and getattr(module, "boto_client_for", None) is original
    ]
    with ExitStack() as patches:
        for module in users:
            patches.enter_context(mock.patch.object(module, "boto_client_for", boto_client_for))
        yield


# --- waits --------------------------------------------------------------------------------------
@contextmanager
def _exact_waits() -> Iterator[None]:
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
        FailureEventException,
    )
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.timestamp import (
        Timestamp,
    )
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import (
        WaitFunction,
    )

    def seconds_left(self: Timestamp, env: Any) -> float:
        self.string.eval(env=env)
        text: str = env.stack.pop()
        moment = self._from_timestamp_string(timestamp=text)  # truncated to the second, as AWS
        if moment is None:
            raise FailureEventException(self._create_failure_event(env, text))
        return calendar.timegm(moment.timetuple()) - time.time()

    def wait_interval(self: WaitFunction, env: Any, wait_seconds: float) -> None:
        deadline = time.monotonic() + wait_seconds
        while env.is_running():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            env.program_state_event.wait(left)  # set when the execution is stopped

    with (
        mock.patch.object(Timestamp, "_get_wait_seconds", seconds_left),
        mock.patch.object(WaitFunction, "_wait_interval", wait_interval),
    ):
        yield


# --- DynamoDB items ------------------------------------------------------------------------------
_ITEM_SIZE_LIMIT = 405000  # moto's own figure: the documented 400 KB, as measured on AWS


@contextmanager
def _items_sized_once() -> Iterator[None]:
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
    from moto.dynamodb.models.utilities import bytesize

    def build(item: Item, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
        item.hash_key = hash_key
        item.range_key = range_key
        converted = {key: DynamoType(value) for key, value in attrs.items()}
        size = sum(bytesize(key) + value.size() for key, value in converted.items())
        if size > _ITEM_SIZE_LIMIT:
            raise ItemSizeTooLarge
        item.attrs = LimitedSizeDict(converted)  # later single-attribute sets are still checked

    with mock.patch.object(Item, "__init__", build):
        yield


# --- SQS ----------------------------------------------------------------------------------------
@contextmanager
def _sends_without_counting() -> Iterator[None]:
    from moto.sqs.models import Queue, SQSBackend

    sending = threading.local()
    counted = Queue.attributes
    original_send = SQSBackend.send_message

    from moto.sqs import models as sqs_models

    original_time = sqs_models.unix_time

    def unix_time(dt: Any = None) -> float:
        return time.time() if dt is None else float(original_time(dt))

    def unix_time_millis(dt: Any = None) -> float:
        return unix_time(dt) * 1000.0

    def retained(backend: SQSBackend, queue_name: str, message: Any) -> bool:
        period = int(backend.get_queue(queue_name).message_retention_period)
        return bool(period + message.sent_timestamp / 1000 > time.time())

    def attributes(queue: Queue) -> dict[str, Any]:
        if getattr(sending, "depth", 0) and not queue.fifo_queue:
            # All a send reads of a standard queue's attributes is ContentBasedDeduplication,
            # which only FIFO queues have.
            return {}
        counts: dict[str, Any] = counted.fget(queue)
        return counts

    @functools.wraps(original_send)
    def send_message(backend: SQSBackend, *args: Any, **kwargs: Any) -> Any:
        sending.depth = getattr(sending, "depth", 0) + 1
        try:
            return original_send(backend, *args, **kwargs)
        finally:
            sending.depth -= 1

    with (
        mock.patch.object(Queue, "attributes", property(attributes)),
        mock.patch.object(SQSBackend, "send_message", send_message),
        mock.patch.object(SQSBackend, "is_message_valid_based_on_retention_period", retained),
        mock.patch.object(sqs_models, "unix_time", unix_time),
        mock.patch.object(sqs_models, "unix_time_millis", unix_time_millis),
    ):
        yield


class _Visible:
    """A queue's visible messages (not hidden, not delayed), found as they are read: a receive
    that wants 10 stops at the 10th instead of listing the whole backlog first."""

    def __init__(self, messages: list[Any]) -> None:
        self._messages = list(messages)  # the queue's list as it is now, as moto's copy was
        self._now = time.time() * 1000.0  # Message.visible and .delayed, with one clock read

    def __iter__(self) -> Iterator[Any]:
        now = self._now
        return (m for m in self._messages if m.visible_at < now and not now < m.delayed_until)

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@contextmanager
def _backlogs_read_once() -> Iterator[None]:
    from moto.sqs.models import Queue, SQSBackend

    def messages(queue: Queue) -> _Visible:
        return _Visible(queue._messages)

    def delete_message_batch(
        backend: SQSBackend, queue_name: str, receipts: list[dict[str, Any]]
    ) -> tuple[list[str], list[dict[str, str]]]:
        queue = backend.get_queue(queue_name)
        wanted = {r["ReceiptHandle"] for r in receipts}
        done = wanted & queue.deleted_messages  # deleting twice is not an error
        left = wanted - done
        found: list[int] = []
        for at, message in enumerate(queue._messages):  # received ones are near the front
            if not left:
                break
            if message.receipt_handle is None:
                continue  # never received: it has no handle
            handles: list[Any] = [message.receipt_handle, *message._old_receipt_handles]
            if left.isdisjoint(handles):
                continue
            left.difference_update(handles)
            done.update(wanted.intersection(handles))
            queue.pending_messages.discard(message)
            queue.deleted_messages.update(handles)
            found.append(at)
        for at in reversed(found):
            del queue._messages[at]
        success, errors = [], []
        for receipt in receipts:
            if receipt["ReceiptHandle"] in done:
                success.append(receipt["Id"])
            else:
                errors.append(
                    {
                        "Id": receipt["Id"],
                        "SenderFault": True,
                        "Code": "ReceiptHandleIsInvalid",
                        "Message": f'The input receipt handle "{receipt["ReceiptHandle"]}" is '
                        "not a valid receipt handle.",
                    }
                )
        return success, errors

    with (
        mock.patch.object(Queue, "messages", property(messages)),
        mock.patch.object(SQSBackend, "delete_message_batch", delete_message_batch),
    ):
        yield


# --- DynamoDB responses ---------------------------------------------------------------------------
_SCALARS = {"S": str, "N": str, "BOOL": bool, "NULL": bool}


def _plain(value: Any) -> bool:
    """An AttributeValue already in its wire form: no binary anywhere in it."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    ((kind, inner),) = value.items()
    if kind in _SCALARS:
        return isinstance(inner, _SCALARS[kind])
    if kind == "M":
        return isinstance(inner, dict) and all(_plain(v) for v in inner.values())
    if kind == "L":
        return isinstance(inner, list) and all(_plain(v) for v in inner)
    if kind in ("SS", "NS"):
        return isinstance(inner, list) and all(isinstance(v, str) for v in inner)
    return False


@contextmanager
def _attribute_values_passed_through() -> Iterator[None]:
    from moto.core.serialize import BaseJSONSerializer

    original = BaseJSONSerializer._serialize_type_structure

    @functools.wraps(original)
    def serialize(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if key and shape.name == "AttributeValue" and _plain(value):
            serialized[self.get_serialized_name(shape, key)] = value
            return
        original(self, serialized, value, shape, key)

    with mock.patch.object(BaseJSONSerializer, "_serialize_type_structure", serialize):
        yield


@contextmanager
def _top_level_projections_copied() -> Iterator[None]:
    from moto.dynamodb.models.dynamo_type import Item

    original = Item.project

    @functools.wraps(original)
    def project(self: Item, projection_expressions: list[list[str]]) -> Item:
        if any(len(path) != 1 for path in projection_expressions):
            return original(self, projection_expressions)  # nested paths: moto's way
        names = {path[0] for path in projection_expressions}
        return Item(
            hash_key=self.hash_key,
            range_key=self.range_key,
            attrs={n: real_copy.deepcopy(v.to_json()) for n, v in self.attrs.items() if n in names},
        )

    with mock.patch.object(Item, "project", project):
        yield


# --- the server -----------------------------------------------------------------------------------
@contextmanager
def _moto_modules_listed_once() -> Iterator[None]:
    from moto import backends

    listed = tuple(backends.list_of_moto_modules())
    with mock.patch.object(backends, "list_of_moto_modules", lambda: listed):
        yield


# --- DynamoDB transactions ------------------------------------------------------------------------
@contextmanager
def _transactions_copy_what_they_touch() -> Iterator[None]:

    from moto.dynamodb import models as dynamodb_models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    cheap = threading.local()

    class _Copy:
        """moto's module-level ``copy``: a table is not copied while a transaction snapshots its
        own items instead; everything else is copied as before."""

        @staticmethod
        def deepcopy(value: Any, memo: Any = None) -> Any:
            if isinstance(value, Table) and getattr(cheap, "on", False):
                return value  # its rollback then puts back the same table: a no-op
            return real_copy.deepcopy(value, memo)

    original = DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> Any:
        saved: list[tuple[Any, Any, Any]] = []
        for entry in transact_items:
            _, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName"))
            if table is None or table.range_key_attr is not None or len(entry) != 1:
                return original(self, transact_items)  # moto's own way, whole-table copies
            attrs = op["Item"] if "Item" in op else op.get("Key", {})
            if table.hash_key_attr not in attrs:
                return original(self, transact_items)
            hash_value = DynamoType(attrs[table.hash_key_attr])
            saved.append((table, hash_value, real_copy.deepcopy(table.items.get(hash_value))))
        cheap.on = True
        try:
            return original(self, transact_items)
        except BaseException:
            for table, hash_value, previous in reversed(saved):
                if previous is None:
                    table.items.pop(hash_value, None)
                else:
                    table.items[hash_value] = previous
            raise
        finally:
            cheap.on = False

    with (
        mock.patch.object(dynamodb_models, "copy", _Copy),
        mock.patch.object(DynamoDBBackend, "transact_write_items", transact_write_items),
    ):
        yield
