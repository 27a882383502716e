"""JSONPath expressions are parsed once, not every time a state or a rule target uses them.

Found: every path of every state (``InputPath``, ``ResultPath``, ``OutputPath``, ``...Path``
parameters) and every EventBridge input path builds a fresh PLY parser, which even lists
directories: ``jsonpath_ng.parse`` / ``jsonpath_ng.ext.parse`` as imported by
``moto/stepfunctions/parser/asl/component/common/path/result_path.py``,
``moto/stepfunctions/parser/asl/utils/json_path.py`` and moto.events.

Replaced: those names, by the same functions behind an LRU cache. A parsed path is immutable
(its ``find`` and ``update`` take the data), so sharing it changes no answer. Upstreamable as
is (jsonpath_ng could cache its own parses).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

__all__ = ["jsonpath_parsed_once"]


@contextmanager
def jsonpath_parsed_once() -> Iterator[None]:
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
