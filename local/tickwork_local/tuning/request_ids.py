"""A response's request id is drawn in one call to the random source, not 52.

Found: ``moto/utilities/aws_headers.py``, ``gen_amzn_requestid_long``, called for every response
(``BaseResponse._enrich_response``), draws its 52 characters with 52 calls of
``random.choice``: a few percent of an in-process call's cost to the emulator.

Replaced: the name ``moto.core.responses`` calls, with one ``choices`` over the same 62
characters from the same source (moto's ``mock_random``): an id of the same length and
alphabet, set on the same header.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["request_ids_drawn_at_once"]

_CHARACTERS = string.ascii_letters + string.digits
_LENGTH = 52


@contextmanager
def request_ids_drawn_at_once() -> Iterator[None]:
    from moto.core import responses
    from moto.moto_api._internal import mock_random

    def gen_amzn_requestid_long(headerdict: dict[str, Any] | None = None) -> str:
        request_id = "".join(mock_random.choices(_CHARACTERS, k=_LENGTH))
        if isinstance(headerdict, dict):
            headerdict["x-amzn-requestid"] = request_id
        return request_id

    with mock.patch.object(responses, "gen_amzn_requestid_long", gen_amzn_requestid_long):
        yield
