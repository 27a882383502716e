"""GIVEN the local stack's fixes to the emulator's costs WHEN the emulator is used through them
THEN it answers as before — a Wait ends at its (truncated) second, not up to a second early; a
parsed program, path or client is reused only where that is safe; queues still count, FIFO
queues still deduplicate, oversized items are still refused."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import boto3
import pytest
from botocore.exceptions import ClientError
from hypothesis import given, settings
from hypothesis import strategies as st
from moto import mock_aws

from tickwork_local.activity import Activity
from tickwork_local.emulator_clock import emulator_on_clock
from tickwork_local.server import EMULATOR_CONFIG
from tickwork_local.tuning import tuned_emulator
from tickwork_local.virtual_clock import LocalClock

REGION = "us-east-1"
WAIT_THEN_PASS = {
    "StartAt": "Wait",
    "States": {
        "Wait": {"Type": "Wait", "TimestampPath": "$.until", "Next": "Done"},
        "Done": {"Type": "Pass", "End": True},
    },
}


@pytest.fixture
def emulator() -> Iterator[None]:
    clock = LocalClock()  # the wall clock: moto's answers, only never early
    with (
        mock_aws(config=EMULATOR_CONFIG),
        tuned_emulator(),
        emulator_on_clock(clock, Activity(clock)),
    ):
        yield


def _client(service: str):
    return boto3.client(service, region_name=REGION)


def test_a_timestamp_wait_ends_at_its_second_not_before(emulator: None) -> None:
    sfn = _client("stepfunctions")
    machine = sfn.create_state_machine(
        name="wait",
        definition=json.dumps(WAIT_THEN_PASS),
        roleArn="arn:aws:iam::123456789012:role/x",
    )["stateMachineArn"]
    # A timestamp 1.9 s ahead with milliseconds: AWS truncates it to its second.
    until = datetime.now(UTC) + timedelta(seconds=1.9)
    second = until.replace(microsecond=0)
    text = until.strftime("%Y-%m-%dT%H:%M:%S.") + f"{until.microsecond // 1000:03d}Z"
    arn = sfn.start_execution(stateMachineArn=machine, input=json.dumps({"until": text}))[
        "executionArn"
    ]
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        time.sleep(0.02)
    ended = datetime.now(UTC)
    # moto alone waited int(seconds left) and could end up to a second before `second`.
    assert second <= ended < second + timedelta(seconds=0.5)


def test_parsed_programs_are_shared_only_without_map_or_parallel(emulator: None) -> None:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    plain = json.dumps(WAIT_THEN_PASS)
    first, second = AmazonStateLanguageParser.parse(plain), AmazonStateLanguageParser.parse(plain)
    assert first is second
    with_map = json.dumps(
        {
            "StartAt": "Each",
            "States": {
                "Each": {
                    "Type": "Map",
                    "ItemProcessor": {
                        "StartAt": "P",
                        "States": {"P": {"Type": "Pass", "End": True}},
                    },
                    "End": True,
                }
            },
        }
    )
    assert AmazonStateLanguageParser.parse(with_map) is not AmazonStateLanguageParser.parse(
        with_map
    )


def test_a_parse_is_shared_by_every_stack_the_process_starts() -> None:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    plain = json.dumps(WAIT_THEN_PASS)
    parsed = []
    for _ in range(2):  # one stack, then another, as a test worker starts them
        with mock_aws(config=EMULATOR_CONFIG), tuned_emulator():
            parsed.append(AmazonStateLanguageParser.parse(plain))
    assert parsed[0] is parsed[1]
    # Outside a stack, moto's own parse again: a fresh program each time.
    assert AmazonStateLanguageParser.parse(plain) is not AmazonStateLanguageParser.parse(plain)


def test_two_stacks_at_once_parse_a_new_definition_without_waiting_on_each_other() -> None:
    import threading

    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    fresh = json.dumps({**WAIT_THEN_PASS, "Comment": f"two stacks {time.monotonic_ns()}"})
    parsed: list[Any] = []

    def two_stacks() -> None:
        with mock_aws(config=EMULATOR_CONFIG), tuned_emulator(), tuned_emulator():
            parsed.append(AmazonStateLanguageParser.parse(fresh))
            parsed.append(AmazonStateLanguageParser.parse(fresh))

    both = threading.Thread(target=two_stacks, daemon=True)
    both.start()
    both.join(timeout=60)  # a parse holding the lock while it calls another stack's patch hangs
    assert not both.is_alive(), "the second stack's parse waited on the first's lock for ever"
    assert len(parsed) == 2 and parsed[0] is parsed[1]


def test_one_interpreter_client_per_service(emulator: None) -> None:
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

    one = lambda_eval_utils.boto_client_for(region=REGION, service="lambda")
    assert lambda_eval_utils.boto_client_for(region=REGION, service="lambda") is one
    assert lambda_eval_utils.boto_client_for(region="eu-west-1", service="lambda") is not one


def test_queues_still_count_and_fifo_queues_still_deduplicate(emulator: None) -> None:
    sqs = _client("sqs")
    standard = sqs.create_queue(QueueName="standard")["QueueUrl"]
    for n in range(3):
        sqs.send_message(QueueUrl=standard, MessageBody=f"m{n}")
    counts = sqs.get_queue_attributes(QueueUrl=standard, AttributeNames=["All"])["Attributes"]
    assert counts["ApproximateNumberOfMessages"] == "3"

    fifo = sqs.create_queue(
        QueueName="q.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    )["QueueUrl"]
    for _ in range(2):
        sqs.send_message(QueueUrl=fifo, MessageBody="same", MessageGroupId="g")
    attributes = sqs.get_queue_attributes(QueueUrl=fifo, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "1"


def test_items_over_the_size_limit_are_still_refused(emulator: None) -> None:
    ddb = _client("dynamodb")
    ddb.create_table(
        TableName="t",
        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    item = {"k": {"S": "a"}, "n": {"N": "1"}, "m": {"M": {"x": {"L": [{"S": "y"}]}}}}
    ddb.put_item(TableName="t", Item=item)
    assert ddb.get_item(TableName="t", Key={"k": {"S": "a"}})["Item"] == item
    with pytest.raises(ClientError, match="Item size has exceeded"):
        ddb.put_item(
            TableName="t",
            Item={"k": {"S": "b"}, **{f"a{n}": {"S": "x" * 50_000} for n in range(9)}},
        )


def test_messages_past_their_retention_are_still_not_received(emulator: None) -> None:
    from moto.sqs.models import sqs_backends

    sqs = _client("sqs")
    url = sqs.create_queue(QueueName="short", Attributes={"MessageRetentionPeriod": "60"})[
        "QueueUrl"
    ]
    sqs.send_message(QueueUrl=url, MessageBody="new")
    sqs.send_message(QueueUrl=url, MessageBody="old")
    queue = sqs_backends["123456789012"][REGION].get_queue("short")
    old = next(m for m in queue._messages if m.body == "old")
    old.sent_timestamp -= 120_000  # sent two minutes ago: past its 60 s
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert [m["Body"] for m in received] == ["new"]


def test_a_batch_delete_answers_as_moto_and_hidden_or_delayed_messages_stay_unreceived(
    emulator: None,
) -> None:
    sqs = _client("sqs")
    url = sqs.create_queue(QueueName="backlog")["QueueUrl"]
    for n in range(6):
        sqs.send_message(QueueUrl=url, MessageBody=f"m{n}")
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=60)
    first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=2, VisibilityTimeout=0)
    old = first["Messages"][0]["ReceiptHandle"]  # received again below: an old handle
    again = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=4, VisibilityTimeout=300)
    bodies = [m["Body"] for m in again["Messages"]]
    assert sorted(bodies) == ["m0", "m1", "m2", "m3"]  # not the delayed one
    entries = [
        {"Id": "old", "ReceiptHandle": old},
        *(
            {"Id": f"n{n}", "ReceiptHandle": m["ReceiptHandle"]}
            for n, m in enumerate(again["Messages"][1:])
        ),
        {"Id": "bogus", "ReceiptHandle": "not-a-handle"},
    ]
    answer = sqs.delete_message_batch(QueueUrl=url, Entries=entries)
    assert sorted(s["Id"] for s in answer["Successful"]) == ["n0", "n1", "n2", "old"]
    assert [(f["Id"], f["Code"]) for f in answer["Failed"]] == [("bogus", "ReceiptHandleIsInvalid")]
    repeat = sqs.delete_message_batch(QueueUrl=url, Entries=entries[:1])  # deleted twice: fine
    assert [s["Id"] for s in repeat["Successful"]] == ["old"]
    rest = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    assert sorted(m["Body"] for m in rest) == [
        "m4",
        "m5",
    ]  # the hidden ones and the delayed one stay out


# --- each fix answers as moto does: the same calls, with the fix and without it ----------------
ITEM = {
    "id": {"S": "a:1"},
    "n": {"N": "1.50"},
    "yes": {"BOOL": True},
    "none": {"NULL": True},
    "tags": {"SS": ["x", "y"]},
    "numbers": {"NS": ["1", "2"]},
    "blob": {"B": b"\x00\xff"},
    "blobs": {"BS": [b"\x01", b"\x02"]},
    "nested": {"M": {"list": {"L": [{"S": "s"}, {"N": "2"}, {"M": {"b": {"B": b"\x03"}}}]}}},
    "group": {"S": "g"},
}


def _table_answers() -> list[Any]:
    """What a get, a query on the table, projections on top-level and nested names, and a
    query of a KEYS_ONLY index answer for ITEM."""
    ddb = _client("dynamodb")
    ddb.create_table(
        TableName="t",
        AttributeDefinitions=[
            {"AttributeName": "id", "AttributeType": "S"},
            {"AttributeName": "group", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "ByGroup",
                "KeySchema": [{"AttributeName": "group", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.put_item(TableName="t", Item=ITEM)
    key = {"id": {"S": "a:1"}}
    return [
        ddb.get_item(TableName="t", Key=key)["Item"],
        ddb.query(
            TableName="t",
            KeyConditionExpression="id = :i",
            ExpressionAttributeValues={":i": {"S": "a:1"}},
        )["Items"],
        ddb.get_item(
            TableName="t",
            Key=key,
            ProjectionExpression="n, #b, nested",
            ExpressionAttributeNames={"#b": "blob"},
        )["Item"],
        ddb.get_item(TableName="t", Key=key, ProjectionExpression="nested.list[2], tags")["Item"],
        ddb.query(
            TableName="t",
            IndexName="ByGroup",
            KeyConditionExpression="#g = :g",
            ExpressionAttributeNames={"#g": "group"},
            ExpressionAttributeValues={":g": {"S": "g"}},
        )["Items"],
        ddb.batch_get_item(RequestItems={"t": {"Keys": [key]}})["Responses"]["t"],
    ]


@pytest.mark.parametrize(
    "fix",
    ["attribute_values_passed_through", "top_level_projections_copied"],
)
def test_dynamodb_answers_are_the_same_with_each_fix(fix: str) -> None:
    from tickwork_local.tuning.attribute_values import attribute_values_passed_through
    from tickwork_local.tuning.projections import top_level_projections_copied

    fixes = {
        "attribute_values_passed_through": attribute_values_passed_through,
        "top_level_projections_copied": top_level_projections_copied,
    }
    with mock_aws(config=EMULATOR_CONFIG), fixes[fix]():
        fixed = _table_answers()
    with mock_aws(config=EMULATOR_CONFIG):
        moto_alone = _table_answers()
    assert fixed == moto_alone
    assert fixed[0]["blob"] == {"B": b"\x00\xff"} and fixed[0]["n"] == {"N": "1.50"}


def test_only_values_without_binary_are_passed_through() -> None:
    from tickwork_local.tuning.attribute_values import plain

    assert plain({"M": {"a": {"L": [{"S": "s"}, {"N": "1"}, {"NULL": True}]}}})
    assert plain({"SS": ["a"]}) and plain({"BOOL": False})
    assert not plain({"M": {"a": {"B": b"x"}}})
    assert not plain({"BS": [b"x"]})
    assert not plain({"S": 1}) and not plain({"S": "a", "N": "1"})


def test_a_cached_jsonpath_finds_and_updates_as_a_fresh_parse() -> None:
    import jsonpath_ng.ext
    from moto.stepfunctions.parser.asl.utils import json_path

    from tickwork_local.tuning.jsonpath_parse import jsonpath_parsed_once

    documents = [{"a": {"b": [1, {"c": 2}]}}, {"a": {"b": []}}, {"x": 1}]
    paths = ["$.a.b[1].c", "$.a.b[*]", "$.x", "$..c"]
    fresh = [[m.value for m in jsonpath_ng.ext.parse(p).find(d)] for p in paths for d in documents]
    with jsonpath_parsed_once():
        assert json_path.parse("$.a.b[*]") is json_path.parse("$.a.b[*]")  # parsed once
        cached = [[m.value for m in json_path.parse(p).find(d)] for p in paths for d in documents]
    assert cached == fresh


def test_the_state_machine_paths_answer_the_same_with_the_jsonpath_cache() -> None:
    definition = {
        "StartAt": "Shape",
        "States": {
            "Shape": {
                "Type": "Pass",
                "InputPath": "$.in",
                "Parameters": {"v.$": "$.v", "all.$": "$"},
                "ResultPath": "$.out",
                "OutputPath": "$.out",
                "End": True,
            }
        },
    }

    def run() -> Any:
        sfn = _client("stepfunctions")
        machine = sfn.create_state_machine(
            name="paths",
            definition=json.dumps(definition),
            roleArn="arn:aws:iam::123456789012:role/x",
        )["stateMachineArn"]
        arn = sfn.start_execution(
            stateMachineArn=machine, input=json.dumps({"in": {"v": [1, 2], "w": "x"}})
        )["executionArn"]
        while (found := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
            time.sleep(0.02)
        return found["status"], json.loads(found["output"])

    from tickwork_local.tuning.jsonpath_parse import jsonpath_parsed_once

    with mock_aws(config=EMULATOR_CONFIG), jsonpath_parsed_once():
        fixed = run()
    with mock_aws(config=EMULATOR_CONFIG):
        moto_alone = run()
    assert fixed == moto_alone == ("SUCCEEDED", {"v": [1, 2], "all": {"v": [1, 2], "w": "x"}})


def test_the_module_listing_is_moto_s_own_read_once() -> None:
    from moto import backends

    from tickwork_local.tuning.module_listing import moto_modules_listed_once

    moto_alone = list(backends.list_of_moto_modules())
    with moto_modules_listed_once():
        first = list(backends.list_of_moto_modules())
        with mock.patch("os.listdir", side_effect=AssertionError("listed again")):
            again = list(backends.list_of_moto_modules())
    assert first == again == moto_alone and "dynamodb" in first


def test_a_response_class_s_method_names_are_moto_s_own_listed_once() -> None:
    from moto.core import responses
    from moto.dynamodb.responses import DynamoHandler

    from tickwork_local.tuning.method_names import method_names_listed_once

    moto_alone = responses.method_names_from_class(DynamoHandler)
    with method_names_listed_once():
        first = responses.method_names_from_class(DynamoHandler)
        with mock.patch("inspect.getmembers", side_effect=AssertionError("listed again")):
            again = responses.method_names_from_class(DynamoHandler)
    assert first == again == moto_alone and "query" in first


def test_a_user_agent_kept_is_botocore_s_own_for_each_client_and_set_of_features() -> None:
    from botocore.config import Config
    from botocore.context import start_as_current_context
    from botocore.useragent import register_feature_id

    from tickwork_local.tuning.user_agent import user_agents_built_once

    def agents() -> list[str]:
        sent: list[str] = []
        clients = [
            boto3.client("sqs", region_name="us-east-1"),
            boto3.client("sqs", region_name="us-east-1", config=Config(user_agent_appid="app-1")),
            boto3.client("sqs", region_name="us-east-1", config=Config(user_agent_extra="x/2")),
        ]
        for client in clients:
            client.meta.events.register(
                "before-send", lambda request, **_: sent.append(request.headers["User-Agent"])
            )
            for waiter_feature in (False, True, False):
                with start_as_current_context():
                    if waiter_feature:
                        register_feature_id("WAITER")
                    client.list_queues()
        return [a.decode() if isinstance(a, bytes) else a for a in sent]

    with mock_aws():
        agents()  # the default session finds its credentials once (a feature id of its own)
        moto_alone = agents()
        with user_agents_built_once():
            kept = agents()
    assert kept == moto_alone
    assert len(set(kept)) >= 4  # each config and the waiter's feature id change the header


def test_batch_and_ec2_are_imported_when_used_not_with_the_interpreter() -> None:
    # A process of its own: this worker may have imported moto.batch already.
    script = """
import sys, boto3
from moto import mock_aws
from tickwork_local.server import EMULATOR_CONFIG
from tickwork_local.tuning import tuned_emulator
with mock_aws(config=EMULATOR_CONFIG), tuned_emulator():
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
    AmazonStateLanguageParser.parse(
        '{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}'
    )
    before = sorted(m for m in ("moto.ec2", "moto.batch.models") if m in sys.modules)
    batch = boto3.client("batch", region_name="us-east-1")
    queues = batch.describe_job_queues()["jobQueues"]
    from moto.batch import batch_backends
    print(before, queues, type(batch_backends).__name__, "moto.ec2" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    # Not imported by the interpreter; the backend as moto's own once a Batch call comes.
    assert done.stdout.split() == ["[]", "[]", "BackendDict", "True"]


def test_in_process_requests_go_unsigned_and_answer_as_signed_ones(emulator: None) -> None:
    sent: list[Any] = []
    sqs = _client("sqs")
    sqs.meta.events.register("before-send", lambda request, **_: sent.append(dict(request.headers)))
    url = sqs.create_queue(QueueName="unsigned")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x")
    # The same account and region as a signed request would get, and no signature computed.
    assert url.split("/")[-2:] == ["123456789012", "unsigned"]
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=url)["Messages"]] == ["x"]
    # The credential moto reads, with no signature computed
    written = [h["Authorization"] for h in sent]
    assert written and all(bytes(w).endswith(b", Signature=0") for w in written)
    # A presigned URL is still signed (it leaves the process).
    presigned = _client("s3").generate_presigned_url(
        "get_object", Params={"Bucket": "b", "Key": "k"}
    )
    assert "Signature=" in presigned


@pytest.mark.parametrize(
    ("intercepting", "endpoint"),
    [
        (False, "http://127.0.0.1:9"),
        (True, "http://127.0.0.1:9"),  # moto on, but moto's server on a port of its own
        (True, "https://vpce-1.sqs.us-east-1.vpce.amazonaws.com:443"),  # a port: not moto's
    ],
    ids=["moto-off", "own-endpoint", "aws-host-with-a-port"],
)
def test_requests_that_leave_the_process_are_signed(intercepting: bool, endpoint: str) -> None:
    sent: list[Any] = []
    with ExitStack() as on:
        if intercepting:
            on.enter_context(mock_aws(config=EMULATOR_CONFIG))
        on.enter_context(tuned_emulator())
        sqs = boto3.client(
            "sqs",
            region_name=REGION,
            aws_access_key_id="k",
            aws_secret_access_key="s",
            endpoint_url=endpoint,
        )

        def stop_before_sending(request: Any, **_: Any) -> Any:
            sent.append(request.headers)
            raise RuntimeError("not sent")

        sqs.meta.events.register("before-send", stop_before_sending)
        with pytest.raises(RuntimeError, match="not sent"):
            sqs.list_queues()
    assert "AWS4-HMAC-SHA256" in str(sent[0]["Authorization"])


def test_two_threads_asking_the_batch_backend_at_once_both_get_it() -> None:
    # A process of its own (as above): one thread runs moto.batch's __init__, about a second,
    # while the other asks; both get moto's backend, as without the fix.
    script = """
import sys, threading, time
from tickwork_local.tuning.batch_import import batch_imported_when_used
got = {}
def ask(who):
    try:
        from moto.batch import batch_backends
        got[who] = type(batch_backends).__name__
    except Exception as error:
        got[who] = type(error).__name__
with batch_imported_when_used():
    first = threading.Thread(target=ask, args=("first",))
    first.start()
    time.sleep(0.05)
    second = threading.Thread(target=ask, args=("second",))
    second.start()
    first.join(); second.join()
print(got["first"], got["second"])
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["BackendDict", "BackendDict"]


def test_an_unsigned_call_with_an_assumed_roles_keys_lands_in_the_roles_account(
    emulator: None,
) -> None:
    # An action's roleArn: its target is called with the role's credentials, in its account.
    sts = _client("sts")
    keys = sts.assume_role(
        RoleArn="arn:aws:iam::222222222222:role/target", RoleSessionName="tickwork"
    )["Credentials"]
    role = boto3.Session(
        aws_access_key_id=keys["AccessKeyId"],
        aws_secret_access_key=keys["SecretAccessKey"],
        aws_session_token=keys["SessionToken"],
        region_name=REGION,
    )
    url = role.client("sqs").create_queue(QueueName="theirs")["QueueUrl"]
    assert url.split("/")[-2:] == ["222222222222", "theirs"]
    assert role.client("sts").get_caller_identity()["Account"] == "222222222222"


# --- request_environ: the environ werkzeug's builder writes, key for key --------------------
# Mostly requests as botocore sends them (the direct path), with every part now and then one
# the direct path must leave to moto's own builder.
_HOSTS = st.one_of(
    st.sampled_from(["dynamodb.us-east-1.amazonaws.com", "localhost", "127.0.0.1"]),
    st.from_regex(r"[a-z0-9-]{1,8}(\.[a-z0-9-]{1,8}){0,2}", fullmatch=True),
    st.from_regex(r"[A-Za-z0-9.\[\]:-]{1,12}", fullmatch=True),  # mostly refused: moto's own path
).flatmap(
    lambda host: st.sampled_from(["", "", "", ":443", ":4566", ":0443", ":99999", ":"]).map(
        lambda port: host + port
    )
)
_PATHS = st.one_of(
    st.sampled_from(
        ["/", "//twice/", "/2015-03-31/functions/arn:aws:lambda:us-east-1:1:function:f/invocations"]
    ),
    st.text(alphabet="/abcXYZ09_.~!$&'()*+,:;=@-", max_size=20).map(lambda p: "/" + p),
    st.text(alphabet='/abc%é "<>{}', max_size=8),
)
_QUERIES = st.one_of(st.just(""), st.text(alphabet="ab=&%2Fé+ ", max_size=10))
_HEADER_NAMES = st.sampled_from(
    ["Content-Type", "content-type", "CONTENT-TYPE", "Content-Length", "Content_Type",
     "Transfer-Encoding", "X-Amz-Target", "x-amz-target", "X-Amz-Meta-My_Key", "Host",
     "User-Agent", "Authorization", "amz-sdk-request"]
)  # fmt: skip
_HEADER_VALUES = st.one_of(
    st.text(alphabet="abc/;= -.0", max_size=12),
    st.text(alphabet="abc/;= -.0", max_size=12).map(str.encode),
    st.sampled_from(["a\nb", "x\r", "é"]),
)


@settings(max_examples=500, deadline=None)
@given(
    method=st.sampled_from(["POST", "GET", "PUT", "DELETE", "post"]),
    scheme=st.sampled_from(["https", "https", "http", "HTTPS", "ftp"]),
    host=_HOSTS,
    path=_PATHS,
    query=_QUERIES,
    headers=st.lists(st.tuples(_HEADER_NAMES, _HEADER_VALUES), max_size=6),
    body=st.one_of(st.binary(min_size=1, max_size=40), st.text(max_size=20), st.none()),
)
def test_a_request_built_directly_has_the_environ_werkzeug_builds(
    method: str, scheme: str, host: str, path: str, query: str, headers: list, body: Any
) -> None:
    from botocore.awsrequest import HeadersDict
    from moto.core.request import Request

    from tickwork_local.tuning.request_environ import requests_built_directly

    url = f"{scheme}://{host}{path}" + (f"?{query}" if query else "")
    sent = HeadersDict()
    for name, value in headers:
        sent[name] = value  # botocore's map: one value per name, whatever its case

    def built() -> tuple[str, Any]:
        try:
            request = Request.from_primitives(method, url, sent, body)
        except Exception as error:  # the same refusal is the same answer
            return "refused", type(error).__name__
        read = (request.data, request.raw_url, list(request.headers))
        environ = dict(request.environ)
        stream = environ.pop("wsgi.input")
        assert environ.pop("werkzeug.request", request) is request  # each its own request
        return "built", (environ, stream.getvalue(), *read)

    by_moto = built()
    with requests_built_directly():
        directly = built()
    assert directly == by_moto


def test_a_response_carries_a_request_id_of_moto_s_length_and_alphabet(emulator: None) -> None:
    sqs = _client("sqs")
    ids = [sqs.list_queues()["ResponseMetadata"]["RequestId"] for _ in range(3)]
    assert all(len(i) == 52 and i.isascii() and i.isalnum() for i in ids)
    assert len(set(ids)) == 3


def test_the_collector_runs_less_often_and_still_frees_cycles() -> None:
    import gc
    import weakref

    from tickwork_local.tuning.collector import EMULATOR_THRESHOLDS, collect_less_often

    assert gc.get_threshold() == EMULATOR_THRESHOLDS  # set for this worker by tests/conftest.py
    collect_less_often()
    assert gc.get_threshold() == EMULATOR_THRESHOLDS

    class Node:
        other: Any = None

    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: reference counting alone never frees it
    gone = weakref.ref(a)
    del a, b
    kept = []
    for _ in range(EMULATOR_THRESHOLDS[0] * 2):  # tracked objects past the young threshold
        kept.append(Node())
        if gone() is None:
            break
    assert gone() is None, "a cycle was never collected: memory would grow without bound"


@given(st.text(alphabet="aAbBzZ0_ -", max_size=12))
def test_a_camelcase_name_converts_as_moto_converts_it(name: str) -> None:
    from moto.core import utils

    from tickwork_local.tuning.camelcase_names import camelcase_names_converted_once

    original = utils.camelcase_to_underscores
    with camelcase_names_converted_once():
        assert utils.camelcase_to_underscores is not original  # the cached one is in place
        assert utils.camelcase_to_underscores(name) == original(name)
        assert utils.camelcase_to_underscores(name) == original(name)  # and from its cache
    assert utils.camelcase_to_underscores is original


def test_a_handler_without_kwargs_is_still_refused_and_one_with_them_taken() -> None:
    import functools

    from botocore import compat
    from botocore.hooks import HierarchicalEmitter

    from tickwork_local.tuning.handler_signatures import handler_signatures_read_once

    def takes(**kwargs: Any) -> None: ...

    def refuses(a: int) -> None: ...

    class Holder:
        def takes(self, **kwargs: Any) -> None: ...

        def refuses(self) -> None: ...

    callables = [
        *(takes, refuses, Holder().takes, Holder().refuses, Holder().takes),
        *(functools.partial(takes), functools.partial(refuses, 1), lambda **kw: None),
    ]
    with handler_signatures_read_once():
        for _ in range(2):  # the second time from what was kept
            for handler in callables:
                emitter = HierarchicalEmitter()
                if compat.accepts_kwargs(handler):
                    emitter.register("before-call.s3", handler)
                else:
                    with pytest.raises(ValueError, match="must accept keyword"):
                        emitter.register("before-call.s3", handler)


def test_an_item_written_over_is_freed_and_the_table_still_answers(emulator: None) -> None:
    """moto keeps every model object it makes in a list for its dashboard: each write's item
    would stay in memory for as long as the stack runs. With the fix an item written over is
    freed, the table holds the last write, and S3's objects (which moto's S3 reads back from
    that list) are still kept there."""
    import gc
    import weakref

    from moto.dynamodb.models import dynamodb_backends
    from moto.s3.models import FakeKey

    dynamodb = _client("dynamodb")
    dynamodb.create_table(
        TableName="t",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    table = dynamodb_backends["123456789012"][REGION].tables["t"]
    dynamodb.put_item(TableName="t", Item={"id": {"S": "a"}, "n": {"N": "0"}})
    first = weakref.ref(next(iter(table.items.values())))
    for n in range(1, 50):
        dynamodb.put_item(TableName="t", Item={"id": {"S": "a"}, "n": {"N": str(n)}})
    dynamodb.update_item(
        TableName="t", Key={"id": {"S": "a"}}, UpdateExpression="SET n = :n",
        ExpressionAttributeValues={":n": {"N": "50"}},
    )  # fmt: skip
    gc.collect()
    assert first() is None, "an item written over is still held: memory grows with every write"
    got = dynamodb.get_item(TableName="t", Key={"id": {"S": "a"}})["Item"]
    assert got == {"id": {"S": "a"}, "n": {"N": "50"}}

    s3 = _client("s3")
    s3.create_bucket(Bucket="tracked-bucket")
    s3.put_object(Bucket="tracked-bucket", Key="k", Body=b"kept")
    assert any(key.name == "k" for key in FakeKey.instances_tracked)  # type: ignore[attr-defined]
    assert s3.list_objects_v2(Bucket="tracked-bucket")["KeyCount"] == 1
