"""An event handler's signature is read once, not each time a client registers it.

Found: ``botocore/hooks.py``, ``BaseEventHooks._verify_accept_kwargs``, calls
``botocore.compat.accepts_kwargs`` — ``inspect.getfullargspec`` — for every handler a client
registers: each new boto3 client registers hundreds, and every function's cold start in a
local stack (one per stack, so one per test) makes new clients. About a fiftieth of the suite's
emulated calls' CPU.

Replaced: the name ``botocore.hooks`` calls, with the same check kept per underlying function
(a bound method's ``__func__``: the handlers are the same few hundred functions bound to each
new client), weakly, so a function that goes away takes its entry with it. A callable that is
not a plain function (a ``functools.partial``, an object with ``__call__``) is checked as
botocore checks it, every time.
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["handler_signatures_read_once"]

_READ: weakref.WeakKeyDictionary[types.FunctionType, bool] = weakref.WeakKeyDictionary()


@contextmanager
def handler_signatures_read_once() -> Iterator[None]:
    from botocore import compat, hooks

    check = compat.accepts_kwargs

    def accepts_kwargs(func: Any) -> Any:
        underlying = func.__func__ if isinstance(func, types.MethodType) else func
        if not isinstance(underlying, types.FunctionType):
            return check(func)
        answer = _READ.get(underlying)
        if answer is None:
            answer = _READ[underlying] = bool(check(func))
        return answer

    with mock.patch.object(hooks, "accepts_kwargs", accepts_kwargs):
        yield
