"""GIVEN the API served as a deployed stack serves it — every route behind SigV4, checked for
real — WHEN `tickwork dashboard --stack NAME` forwards the page's calls THEN they arrive signed
with the user's own credentials and are answered; unsigned or wrongly signed calls are refused
before the function runs; and the proxy forwards nothing without its own token, nor for a page
that did not address it by name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
import requests
from botocore.credentials import Credentials
from moto import mock_aws

from tests.e2e.support import Stack
from tickwork.steering.start import StartCommand, start_action
from tickwork_cli.dashboard import SigV4Signer, serving_dashboard
from tickwork_cli.target import Target
from tickwork_local.server import LOCAL_CREDENTIALS
from tickwork_local.stack import LocalStack

KEY, SECRET = LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"], LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"]


@pytest.fixture
def signed_api() -> Iterator[tuple[Stack, str]]:
    """The API behind SigV4, as on AWS (`tickwork local --api-auth sigv4`)."""
    with mock_aws(), LocalStack.from_repo().running() as local:
        stack = Stack(local)
        start_action(StartCommand({"id": "dash:1", "delay": "1h"}), stack.deps)
        stack.wait_counted()
        with local.serving_api(auth="sigv4") as url:
            yield stack, url


def _signer(secret: str = SECRET) -> SigV4Signer:
    return SigV4Signer(Credentials(KEY, secret), "us-east-1")


def _signed_get(url: str, signer: SigV4Signer) -> requests.Response:
    return requests.get(url, headers=signer("GET", url, {}, b""), timeout=10)


def test_the_api_refuses_unsigned_and_badly_signed_calls_before_the_function_runs(
    signed_api: tuple[Stack, str],
) -> None:
    stack, url = signed_api
    before = len(stack.invocations("ApiFunction"))

    unsigned = requests.get(f"{url}/actions", timeout=10)
    forged = _signed_get(f"{url}/actions", _signer("not-the-secret"))
    bearer = requests.get(f"{url}/actions", headers={"Authorization": "Bearer x"}, timeout=10)
    signed = _signed_get(f"{url}/actions", _signer())
    wrong_path = _signer()("GET", f"{url}/stats", {}, b"")  # signed for another path
    replaced = requests.get(f"{url}/actions", headers=wrong_path, timeout=10)

    assert [r.status_code for r in (unsigned, forged, bearer, replaced)] == [403] * 4
    assert "Missing Authentication Token" in unsigned.json()["message"]
    assert "does not match" in forged.json()["message"]
    assert signed.status_code == 200
    assert [a["id"] for a in signed.json()["items"]] == ["dash:1"]
    assert len(stack.invocations("ApiFunction")) == before + 1  # only the signed call ran


@pytest.fixture
def proxy(signed_api: tuple[Stack, str]) -> Iterator[tuple[str, str]]:
    _, url = signed_api
    with serving_dashboard(f"{url}/", _signer()) as served:
        yield served


def test_the_proxy_signs_the_pages_calls_with_the_users_credentials(
    proxy: tuple[str, str],
) -> None:
    url, token = proxy
    bearer = {"Authorization": f"Bearer {token}"}

    listed = requests.get(f"{url}/actions", headers=bearer, timeout=10)
    created = requests.post(
        f"{url}/actions",
        headers={**bearer, "Content-Type": "application/json"},
        data=json.dumps({"id": "dash:2", "duration": "2h"}),
        timeout=10,
    )
    page = requests.get(f"{url}/", timeout=10)
    docs = requests.get(f"{url}/docs", timeout=10)

    assert listed.status_code == 200 and [a["id"] for a in listed.json()["items"]] == ["dash:1"]
    assert created.status_code == 201 and created.json()["id"] == "dash:2"
    assert page.status_code == 200 and "<!doctype html" in page.text.lower()
    assert docs.status_code == 200 and "SwaggerUIBundle" in docs.text


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer not-the-token"}, {"Authorization": "AWS4-HMAC-SHA256 x"}],
    ids=["none", "wrong-token", "a-signature"],
)
def test_the_proxy_forwards_no_call_without_its_token(
    proxy: tuple[str, str], headers: dict[str, str]
) -> None:
    url, _ = proxy
    refused = requests.get(f"{url}/actions", headers=headers, timeout=10)
    assert refused.status_code == 401
    (problem,) = refused.json()["problems"]
    assert problem["field"] == "Authorization" and "#token=" in problem["fix"]


def test_the_proxy_answers_only_requests_addressed_to_it(proxy: tuple[str, str]) -> None:
    """A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) is refused."""
    url, token = proxy
    rebound = requests.get(
        f"{url}/actions",
        headers={"Authorization": f"Bearer {token}", "Host": "evil.example"},
        timeout=10,
    )
    assert rebound.status_code == 403 and rebound.json()["problems"][0]["field"] == "Host"


def test_dashboard_stack_resolves_the_api_from_cloudformation(
    signed_api: tuple[Stack, str],
) -> None:
    """`--stack NAME`: the stack's outputs come from CloudFormation, its ApiUrl is signed for
    with the session's credentials."""
    stack, url = signed_api
    outputs: dict[str, Any] = {**stack.local.outputs, "ApiUrl": f"{url}/"}
    template = {
        "Resources": {"Marker": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {name: {"Value": value} for name, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name="us-east-1").create_stack(
        StackName="tickwork-prod", TemplateBody=json.dumps(template)
    )
    target = Target.deployed("tickwork-prod", "us-east-1")
    session_signer = target.api_signer()
    assert isinstance(session_signer, SigV4Signer)

    # The session's credentials are moto's; the API knows the local ones: refused as unknown,
    # which shows the proxy signs with the session's own. With the local ones it is let in.
    with serving_dashboard(target.outputs["ApiUrl"], session_signer) as (proxy_url, token):
        unknown = requests.get(
            f"{proxy_url}/actions", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
    assert unknown.status_code == 403 and "security token" in unknown.json()["message"]
    with serving_dashboard(target.outputs["ApiUrl"], _signer()) as (proxy_url, token):
        known = requests.get(
            f"{proxy_url}/stats", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
    assert known.status_code == 200 and known.json()["byStatus"]["PENDING"] == 1
