"""Writes action items through a journal until it is killed, printing each acknowledged id.

Run by test_journal.py as ``python journal_writer.py FOLDER``: it prints ``ready TABLE`` once
the stack is up, then for each n puts ``kill:n`` as PENDING, moves it to IN_PROGRESS with an
update, and prints ``kill:n`` only after the update has returned.
"""

from __future__ import annotations

import sys
from pathlib import Path

from moto import mock_aws

from tickwork_local.journal import Journal
from tickwork_local.stack import LocalStack


def main(folder: Path) -> None:
    with mock_aws(), LocalStack.from_repo().running() as local:
        table = local.outputs["ActionsTableName"]
        dynamodb = local.client("dynamodb")
        with Journal(folder, {table}).installed():
            print(f"ready {table}", flush=True)
            number = 0
            while True:
                number += 1
                key = {"id": {"S": f"kill:{number}"}}
                dynamodb.put_item(
                    TableName=table,
                    Item={**key, "status": {"S": "PENDING"}, "generation": {"N": "1"}},
                )
                dynamodb.update_item(
                    TableName=table,
                    Key=key,
                    UpdateExpression="SET #s = :s, generation = generation + :one",
                    ExpressionAttributeNames={"#s": "status"},
                    ExpressionAttributeValues={":s": {"S": "IN_PROGRESS"}, ":one": {"N": "1"}},
                )
                print(key["id"]["S"], flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
