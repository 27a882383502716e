"""Where an HTTP_REQUEST may connect: the SSRF guard.

A scheduled webhook must not become a way into the network it runs in. The guard works on what
is actually connected to, not on how the URL spells it:

1. the host is normalised — case, trailing dots, IDNA (so full-width digits are digits),
   brackets and an IPv6 zone id;
2. an address literal is read in every form a resolver accepts: dotted decimal, one 32-bit
   number, octal and hexadecimal parts, the short ``a.b.c`` and ``a.b`` forms, and IPv6 with
   IPv4 embedded (mapped ``::ffff:``, compatible ``::``, NAT64 ``64:ff9b::``, 6to4 ``2002::``,
   Teredo);
3. a name is resolved once, and *every* address it resolves to is checked (an IPv4 address
   embedded in an IPv6 one too);
4. the caller connects to the address that was checked (``Target.address``), never resolving
   the name again — so a DNS answer that changes between the check and the connection (DNS
   rebinding) changes nothing — and uses no proxy from the environment.

Refused always: the instance metadata service (169.254.169.254, fd00:ec2::254) and every
link-local address. Refused unless ``allow_private``: private, loopback, unspecified, shared
(100.64/10), reserved, multicast and other non-global addresses.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass

from tickwork.domain.errors import PermanentFulfillmentError, TransientFulfillmentError

__all__ = [
    "Resolver",
    "Target",
    "checked_target",
    "embedded_ipv4",
    "normalized_host",
    "read_ipv4",
    "resolve_once",
]

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], list[str]]

_METADATA = (ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_PART = re.compile(r"0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*")


@dataclass(frozen=True)
class Target:
    host: str  # normalised: what the Host header and TLS name carry
    address: str  # the checked address to connect to


def normalized_host(host: str) -> str:
    """The host as a resolver sees it: no brackets or zone id, no trailing dots, lower case,
    IDNA-encoded (nameprep maps full-width and other compatibility characters first)."""
    bare = host.strip().strip("[]").split("%", 1)[0].rstrip(".")
    if not bare:
        raise PermanentFulfillmentError("refused: the URL names no host")
    try:
        encoded = bare.encode("idna").decode("ascii") if not bare.isascii() else bare
    except UnicodeError as error:
        raise PermanentFulfillmentError(f"refused {host!r}: not a valid host name") from error
    return encoded.lower().rstrip(".")


def read_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """``text`` as IPv4 in any form ``inet_aton`` takes (``127.1``, ``0x7f000001``,
    ``0177.0.0.1``, ``2130706433``), else None."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or not all(_PART.fullmatch(p) for p in parts):
        return None
    *head, last = [_number(p) for p in parts]
    if any(n > 0xFF for n in head) or last >= 1 << (8 * (5 - len(parts))):
        return None
    value = last  # the last part fills every byte the others leave
    for index, n in enumerate(head):
        value |= n << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _number(part: str) -> int:
    if part[:2].lower() == "0x":
        return int(part[2:] or "0", 16)
    if part.startswith("0"):
        return int(part, 8)
    return int(part)


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (and would reach through a translator)."""
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    low = int(address) & 0xFFFFFFFF
    if address in _NAT64 or address in _NAT64_LOCAL or int(address) >> 32 == 0:
        found.append(ipaddress.IPv4Address(low))  # NAT64, and IPv4-compatible ::a.b.c.d
    return found


def _literal(host: str) -> IpAddress | None:
    ipv4 = read_ipv4(host)
    if ipv4 is not None:
        return ipv4
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _refusal(address: IpAddress, host: str, allow_private: bool) -> str | None:
    for seen in (address, *(embedded_ipv4(address) if address.version == 6 else [])):
        assert isinstance(seen, ipaddress.IPv4Address | ipaddress.IPv6Address)
        if seen in _METADATA or seen.is_link_local:
            return f"refused {host}: {seen} is link-local or the instance metadata service"
        if not allow_private and not seen.is_global:
            return (
                f"refused {host}: {seen} is a private, loopback or reserved address; set "
                "AllowPrivateTargets to send to private networks"
            )
        if not allow_private and seen.is_multicast:
            return f"refused {host}: {seen} is a multicast address"
    return None


def checked_target(host: str, resolve: Resolver, allow_private: bool) -> Target:
    """The address to connect to for ``host``, every address it stands for checked; else a
    permanent refusal (a DNS failure is transient: the name may resolve later)."""
    name = normalized_host(host)
    literal = _literal(name)
    if literal is not None:
        addresses: list[IpAddress] = [literal]
    else:
        try:
            answers = resolve(name)
        except OSError as error:
            raise TransientFulfillmentError(f"cannot resolve {name}: {error}") from error
        addresses = []
        for answer in answers:
            try:
                addresses.append(ipaddress.ip_address(answer.split("%", 1)[0]))
            except ValueError as error:
                raise PermanentFulfillmentError(
                    f"refused {name}: resolved to {answer!r}"
                ) from error
        if not addresses:
            raise TransientFulfillmentError(f"cannot resolve {name}: no address")
    for address in addresses:
        refused = _refusal(address, name, allow_private)
        if refused:
            raise PermanentFulfillmentError(refused)
    return Target(name, str(addresses[0]))


def resolve_once(host: str) -> list[str]:
    """Every address ``host`` resolves to, in the resolver's order."""
    seen: dict[str, None] = {}
    for info in socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP):
        seen.setdefault(str(info[4][0]), None)
    return list(seen)
