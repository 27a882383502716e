"""The Step Functions interpreter parses a definition once, not once per execution.

Found: moto's interpreter parses the definition (ANTLR) again for every execution it runs
(``moto/stepfunctions/parser/asl/parse/asl_parser.py``, ``AmazonStateLanguageParser.parse``,
called from ``Execution.start``): most of an execution's CPU on a busy local stack.

Replaced: ``AmazonStateLanguageParser.parse`` — the same parse, kept per definition text for
the life of the process: every stack a process starts (a test suite's worker starts hundreds)
shares the parse of a definition it has seen, both when the state machine is created (moto
validates the definition by parsing it) and at each execution. A parsed program keeps no
per-execution state (that lives in the execution's ``Environment``)
except each component's lazily drawn ``heap_key``, drawn here at once so that concurrent
executions cannot race on it; definitions with Map or Parallel states, whose components do keep
state, are parsed each time as before. Upstreamable as is: a cache keyed on the definition.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["asl_parsed_once"]

_STATEFUL_STATE_TYPES = ("Map", "Parallel")
_MOST_KEPT = 64  # definitions kept parsed (a stack has two; a test may add a target's own)
_PARSED: dict[str, Any] = {}  # definition text -> parsed program, shared by every stack
_LOCK = threading.Lock()


@contextmanager
def asl_parsed_once() -> Iterator[None]:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    # moto's own parse, also where another stack of this process has its patch in place (two
    # stacks at once): the patch calls moto's parse under the lock, never another patch.
    current = AmazonStateLanguageParser.parse
    original = getattr(current, "moto_parse", current)

    def parse(definition: str) -> Any:
        if not _shareable(definition):
            return original(definition)
        with _LOCK:  # parsed by one thread while the others wait for it
            if definition not in _PARSED:
                parsed = original(definition)
                _draw_heap_keys(parsed[0])
                if len(_PARSED) >= _MOST_KEPT:  # a process that makes many: the oldest go
                    del _PARSED[next(iter(_PARSED))]
                _PARSED[definition] = parsed
            return _PARSED[definition]

    parse.moto_parse = original
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
