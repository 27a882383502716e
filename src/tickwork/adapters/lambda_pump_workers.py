"""PumpWorkers over Lambda: a shard of the pump's fires, or a share of a shard's, handed to the
pump worker function (``PUMP_WORKER_FUNCTION``, the template's ``PumpWorkerFunction``) by an
asynchronous invoke: ``{"shard": k}`` or ``{"ids": [...]}``.

Lambda queues the event and runs the worker beside the pump: a run that fails is retried
twice, one held back by the workers' reserved concurrency waits in Lambda's queue (up to six
hours). A share whose worker never ran stays parked, and the next pump run finds it (and may
hand it out again: the marks are fenced, so a fire is launched once, by whichever comes first).
An invoke Lambda refuses (the call itself throttled) raises: logged, the fires stay parked.
"""

from __future__ import annotations

import json
import os

from tickwork.adapters.clients import AwsClients
from tickwork.domain.pump_shares import share_payload

__all__ = ["WORKER_FUNCTION_VARIABLE", "LambdaPumpWorkers"]

WORKER_FUNCTION_VARIABLE = "PUMP_WORKER_FUNCTION"


class LambdaPumpWorkers:
    def __init__(self, function: str, clients: AwsClients) -> None:
        self._function = function
        self._clients = clients

    @classmethod
    def from_environment(cls, clients: AwsClients, own: bool = False) -> LambdaPumpWorkers | None:
        """The workers the stack configures, named to the pump (``PUMP_WORKER_FUNCTION``);
        ``own``: a worker's, which hands the shares of a busy shard to its own function
        (Lambda's ``AWS_LAMBDA_FUNCTION_NAME`` where the worker is not given the name). None: a
        stack without them, the pump alone."""
        function = os.environ.get(WORKER_FUNCTION_VARIABLE)
        if not function and own:
            function = os.environ.get("AWS_LAMBDA_FUNCTION_NAME")
        return cls(function, clients) if function else None

    def hand_out_shard(self, shard: int) -> None:
        self._invoke(json.dumps({"shard": shard}).encode())

    def hand_out(self, ids: list[str]) -> None:
        self._invoke(share_payload(ids))

    def _invoke(self, payload: bytes) -> None:
        self._clients.client("lambda").invoke(
            FunctionName=self._function, InvocationType="Event", Payload=payload
        )
