"""moto does not keep every model object it ever made: a long-running stack's memory stays
bounded by what its backends hold.

Found: ``moto/core/common_models.py``, ``BaseModel.__new__``, appends every instance of every
model to its class's ``instances_tracked`` list: each DynamoDB ``Item`` a write makes (a put,
an update and a transaction's rollback copy each make new ones), each SQS message, each Step
Functions execution. The lists serve moto server's dashboard (``/moto-api/data.json``) and are
emptied only when ``mock_aws`` stops, so every version of every item the stack ever wrote stayed
in memory: ``bench/collector_memory.py`` measured about 115 KB per fire, a stack's resident
memory growing from 137 MB to 962 MB over 6 virtual hours of 20 actions on rate(1 minute)
(7,200 fires), whatever the collector's thresholds.

Replaced: ``BaseModel.__new__``, while the stack runs, with one that makes the instance as
moto's does without keeping it in the list, except for S3's models: moto's S3 backend reads its
keys back from the list to close their files. What the backends hold (tables, queues,
executions) is unchanged; moto's dashboard lists only what was made before.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["models_untracked"]

_TRACKED = ("moto.s3.",)  # services whose backends read instances_tracked


@contextmanager
def models_untracked() -> Iterator[None]:
    from moto.core.common_models import BaseModel

    def __new__(cls: type[Any], *args: Any, **kwargs: Any) -> Any:
        instance = super(BaseModel, cls).__new__(cls)
        if cls.__module__.startswith(_TRACKED):
            cls.instances_tracked.append(instance)
        return instance

    with mock.patch.object(BaseModel, "__new__", staticmethod(__new__)):
        yield
