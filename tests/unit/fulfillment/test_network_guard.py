"""GIVEN an HTTP_REQUEST's URL WHEN the SSRF guard reads its host THEN the address it stands for
is found however it is spelled (decimal, octal, hex, short forms, trailing dots, case, IDNA,
IPv4 inside IPv6), every address a name resolves to is checked, and the request connects to the
address that was checked — never resolving again, never through a proxy."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickwork.domain.errors import PermanentFulfillmentError
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.fulfillment.http_request import HttpRequestData, HttpRequestFulfillment
from tickwork.fulfillment.network_guard import checked_target, read_ipv4, resolve_once

METADATA = int(ipaddress.IPv4Address("169.254.169.254"))
FULL_WIDTH = "".join(chr(0xFF10 + int(c)) if c.isdigit() else "\uff0e" for c in "169.254.169.254")
FORBIDDEN_NETWORKS = [
    "169.254.0.0/16",  # link-local, the metadata service among them
    "127.0.0.0/8",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",  # shared address space (carrier NAT)
    "0.0.0.0/8",
]


# --- spellings --------------------------------------------------------------------------------


def _part(value: int, style: str) -> str:
    if style == "hex":
        return hex(value)
    if style == "HEX":
        return "0X" + format(value, "X")
    if style == "oct":
        return "0" + format(value, "o")
    return str(value)


@st.composite
def ipv4_spellings(draw: st.DrawFn, value: int) -> str:
    """``value`` as a resolver would read it: 1 to 4 parts, each decimal, octal or hex."""
    count = draw(st.integers(1, 4))
    octets = value.to_bytes(4, "big")
    head = list(octets[: count - 1])
    last = int.from_bytes(octets[count - 1 :], "big")
    styles = st.sampled_from(["dec", "hex", "HEX", "oct"])
    parts = [_part(n, draw(styles)) for n in (*head, last)]
    return ".".join(parts) + "." * draw(st.integers(0, 2))  # trailing dots, as DNS allows


@st.composite
def ipv6_embeddings(draw: st.DrawFn, value: int) -> str:
    """``value`` inside IPv6: mapped, compatible, NAT64 or 6to4, in either case."""
    dotted = str(ipaddress.IPv4Address(value))
    high, low = value >> 16, value & 0xFFFF
    form = draw(st.sampled_from(["mapped", "mapped-hex", "compatible", "nat64", "6to4"]))
    text = {
        "mapped": f"::ffff:{dotted}",
        "mapped-hex": f"::ffff:{high:x}:{low:x}",
        "compatible": f"::{dotted}",
        "nat64": f"64:ff9b::{dotted}",
        "6to4": f"2002:{high:x}:{low:x}::1",
    }[form]
    return f"[{text.upper() if draw(st.booleans()) else text}]"


def _forbidden(draw: st.DrawFn) -> int:
    network = ipaddress.ip_network(draw(st.sampled_from(FORBIDDEN_NETWORKS)))
    offset = draw(st.integers(0, network.num_addresses - 1))
    return int(network.network_address) + offset


@st.composite
def forbidden_hosts(draw: st.DrawFn) -> tuple[str, int]:
    value = _forbidden(draw)
    spelled = draw(st.one_of(ipv4_spellings(value), ipv6_embeddings(value)))
    return spelled, value


@given(st.integers(0, 2**32 - 1).flatmap(lambda v: st.tuples(ipv4_spellings(v), st.just(v))))
@settings(max_examples=300, deadline=None)
def test_every_ipv4_spelling_is_read_as_the_resolver_reads_it(case: tuple[str, int]) -> None:
    spelled, value = case
    read = read_ipv4(spelled.rstrip("."))
    assert read is not None and int(read) == value
    assert socket.inet_aton(spelled.rstrip(".")) == value.to_bytes(4, "big")  # glibc agrees


@given(forbidden_hosts())
@settings(max_examples=400, deadline=None)
def test_no_spelling_of_a_private_or_metadata_address_passes(case: tuple[str, int]) -> None:
    spelled, value = case
    with pytest.raises(PermanentFulfillmentError, match="refused"):
        checked_target(spelled, resolve_once, allow_private=False)
    if ipaddress.IPv4Address(value).is_link_local:  # refused even where private ones are not
        with pytest.raises(PermanentFulfillmentError, match="link-local"):
            checked_target(spelled, resolve_once, allow_private=True)


@given(st.one_of(ipv4_spellings(METADATA), ipv6_embeddings(METADATA)))
@settings(max_examples=200, deadline=None)
def test_the_metadata_service_is_refused_in_every_spelling(spelled: str) -> None:
    with pytest.raises(PermanentFulfillmentError, match=r"169\.254\.169\.254"):
        checked_target(spelled, resolve_once, allow_private=True)


@pytest.mark.parametrize(
    "host",
    [
        "169.254.169.254.",  # the review's trailing dot
        "169.254.169.254..",
        "[fd00:ec2::254]",
        "[FD00:EC2:0:0:0:0:0:254]",
        "[fd00:ec2::254%eth0]",
        FULL_WIDTH,  # full-width digits and dots: IDNA maps them
        "metadata.example.com",  # a name that resolves to it
    ],
)
def test_named_spellings_of_the_metadata_service_are_refused(host: str) -> None:
    def resolver(name: str) -> list[str]:
        assert name == "metadata.example.com", name  # literals are never resolved
        return ["93.184.216.34", "169.254.169.254"]  # one bad address is enough

    with pytest.raises(PermanentFulfillmentError, match="refused"):
        checked_target(host, resolver, allow_private=True)


def test_a_public_address_passes_in_any_spelling() -> None:
    for spelled in ("93.184.216.34", "0x5db8d822", "1572395042", "93.184.55330", "[2606:2800::1]"):
        target = checked_target(spelled, resolve_once, allow_private=False)
        assert ipaddress.ip_address(target.address).is_global


# --- what is connected to ----------------------------------------------------------------------


class _Seen(BaseHTTPRequestHandler):
    hosts: list[str] = []

    def do_POST(self) -> None:
        _Seen.hosts.append(self.headers["Host"])
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Seen)
    _Seen.hosts = []
    Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _fire(url: str) -> FulfillmentRequest:
    from datetime import UTC, datetime

    return FulfillmentRequest(
        action_id="hook:1",
        action="HTTP_REQUEST",
        occurrence=1,
        scheduled_time=datetime(2026, 3, 7, tzinfo=UTC),
        data=HttpRequestData.model_validate({"url": url, "body": {}}),
        idempotency_key="k",
    )


def test_the_connection_goes_to_the_address_checked_and_dns_is_asked_once(receiver: int) -> None:
    """DNS rebinding: the name answers a harmless address to the check and the metadata
    service to a second lookup. There is no second lookup."""
    answers = iter([["127.0.0.1"], ["169.254.169.254"]])
    asked: list[str] = []

    def rebinding(name: str) -> list[str]:
        asked.append(name)
        return next(answers)

    fulfillment = HttpRequestFulfillment(allow_private=True, resolve=rebinding)
    result = fulfillment.fulfill(_fire(f"http://Hooks.Example.:{receiver}/hook"))

    assert result["status"] == 200
    assert asked == ["hooks.example"]
    assert _Seen.hosts == [f"hooks.example:{receiver}"]  # the name, on the checked address


def test_proxies_from_the_environment_are_never_used(
    receiver: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(variable, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    result = HttpRequestFulfillment(allow_private=True).fulfill(
        _fire(f"http://127.0.0.1:{receiver}/hook")
    )

    assert result["status"] == 200 and _Seen.hosts == [f"127.0.0.1:{receiver}"]


def test_the_reviews_trailing_dot_is_refused_at_once_without_a_connection() -> None:
    fulfillment = HttpRequestFulfillment(allow_private=True, resolve=lambda name: [])
    with pytest.raises(PermanentFulfillmentError, match=r"169\.254\.169\.254"):
        fulfillment.fulfill(_fire("http://169.254.169.254.:80/latest/meta-data/"))
