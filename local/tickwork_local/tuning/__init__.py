"""Where moto's emulator spends its time, and the fixes the local stack (and the tests) run with.

Each fix changes what the emulator costs, never what it answers. Each was found with py-spy on
a running ``tickwork local``, is measured by ``make bench``, and has its own module here saying
what cost it removes, which moto 5.2.5 code it replaces, and why the answer stays the same;
tests/functional/test_emulator_tuning.py holds each to moto's own answer.

- ``batch_import`` — moto's Batch and EC2 backends are imported when used, not with the
  Step Functions interpreter;
- ``asl_parse`` — a definition is parsed once, not per execution;
- ``jsonpath_parse`` — a JSONPath is parsed once;
- ``task_clients`` — one boto3 client per service for Task states;
- ``item_size`` — an item is sized once, not once per attribute;
- ``sqs_counts`` — a send or receive does not count the whole queue;
- ``sqs_backlog`` — a receive or a batch delete reads the backlog only as far as it needs;
- ``attribute_values`` — attribute values already in wire form are not serialized again;
- ``projections`` — top-level projections copy attributes instead of a JSON round trip;
- ``module_listing`` — the server lists moto's modules once;
- ``method_names`` — a response class's methods are listed once, not per request;
- ``transactions`` — a transaction copies the items it names, not whole tables;
- ``index_buckets`` — a query on a global secondary index reads the items it can return;
- ``user_agent`` — a client's User-Agent header is built once, not twice per request;
- ``model_loader`` — botocore's service models are read once per process, not per session;
- ``unsigned_requests`` — a request the emulator answers in this process is not signed;
- ``request_environ`` — an in-process request is handed to moto without werkzeug's test-client
  builder;
- ``request_ids`` — a response's request id is drawn in one call, not one per character;
- ``camelcase_names`` — a camelCase name is turned into snake_case once, not per request;
- ``handler_signatures`` — an event handler's signature is read once, not per client;
- ``untracked_models`` — moto keeps no list of every item, message and execution it ever made
  (a long-running stack's memory stays bounded);
- ``collector`` — Python's cyclic garbage collector runs far less often (set once for
  the whole process, by ``tickwork local`` and by the test suite, not by ``tuned_emulator``).

The Wait states' and Retry pauses' time is the stack's clock: ``tickwork_local.emulator_clock``
(it also ends a ``TimestampPath`` Wait at its second, never up to a second early).
moto_version.py pins the moto release these were written for.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from tickwork_local.tuning.asl_parse import asl_parsed_once
from tickwork_local.tuning.attribute_values import attribute_values_passed_through
from tickwork_local.tuning.batch_import import batch_imported_when_used
from tickwork_local.tuning.camelcase_names import camelcase_names_converted_once
from tickwork_local.tuning.handler_signatures import handler_signatures_read_once
from tickwork_local.tuning.index_buckets import index_buckets
from tickwork_local.tuning.item_size import items_sized_once
from tickwork_local.tuning.jsonpath_parse import jsonpath_parsed_once
from tickwork_local.tuning.method_names import method_names_listed_once
from tickwork_local.tuning.model_loader import models_loaded_once
from tickwork_local.tuning.module_listing import moto_modules_listed_once
from tickwork_local.tuning.projections import top_level_projections_copied
from tickwork_local.tuning.request_environ import requests_built_directly
from tickwork_local.tuning.request_ids import request_ids_drawn_at_once
from tickwork_local.tuning.sqs_backlog import backlogs_read_once
from tickwork_local.tuning.sqs_counts import sends_without_counting
from tickwork_local.tuning.task_clients import one_client_per_service
from tickwork_local.tuning.transactions import transactions_copy_what_they_touch
from tickwork_local.tuning.unsigned_requests import in_process_requests_unsigned
from tickwork_local.tuning.untracked_models import models_untracked
from tickwork_local.tuning.user_agent import user_agents_built_once

__all__ = ["tuned_emulator"]


@contextmanager
def tuned_emulator() -> Iterator[None]:
    with ExitStack() as patches:
        for fix in (
            batch_imported_when_used,  # before the interpreter is imported
            asl_parsed_once,
            jsonpath_parsed_once,
            one_client_per_service,
            sends_without_counting,
            backlogs_read_once,
            items_sized_once,
            moto_modules_listed_once,
            method_names_listed_once,
            attribute_values_passed_through,
            top_level_projections_copied,
            transactions_copy_what_they_touch,
            index_buckets,  # after the transaction fix: it indexes again what a rollback put back
            user_agents_built_once,
            models_loaded_once,
            in_process_requests_unsigned,
            requests_built_directly,
            request_ids_drawn_at_once,
            camelcase_names_converted_once,
            handler_signatures_read_once,
            models_untracked,
        ):
            patches.enter_context(fix())
        yield
