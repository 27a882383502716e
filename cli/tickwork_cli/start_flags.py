"""`tickwork schedule`'s flags, one per Start field that has one, derived from ``START_FIELDS``
(name, type, choices, help), and the Start detail they build."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.json_text import loads_strict
from tickwork.domain.start_fields import START_FIELDS, StartField, field_named

__all__ = ["FIRST_FLAG", "field_option", "flags_of_fields", "start_detail", "start_options"]

FLAGGED = tuple(spec for spec in START_FIELDS if spec.flag)
WHEN_FLAGS = tuple(spec for spec in FLAGGED if spec.argument == "when")
FIRST_FLAG = "--first"  # the command line's own: a frequency's first fire, sent as `at`


def _option(spec: StartField) -> Callable[[Any], Any]:
    kind: Any = None
    if spec.choices:
        kind = click.Choice(spec.choices, case_sensitive=False)
    elif spec.type == "integer":
        kind = int
    assert spec.flag is not None
    return click.option(
        spec.flag, spec.attribute, type=kind, metavar=spec.metavar, help=spec.help()
    )


def field_option(name: str) -> Callable[[Any], Any]:
    """The flag of the Start field ``name``, as `tickwork schedule` has it, for another
    command."""
    return _option(field_named(name))


def start_options[F: Callable[..., Any]](command: F) -> F:
    """``command`` with a flag for each Start field that has one, in the fields' order, and
    ``--first``."""
    command = click.option(
        FIRST_FLAG,
        "first",
        metavar="TIME",
        help="With --every: its first fire, an ISO 8601 time (sent as the Start's at).",
    )(command)
    for spec in reversed(FLAGGED):
        command = _option(spec)(command)
    return command


def start_detail(flags: Mapping[str, Any], first: str | None = None) -> dict[str, Any]:
    """The Start detail the flags (by field attribute, as ``start_options`` names them) ask
    for; a refusal names the flag."""
    given = [str(spec.flag) for spec in WHEN_FLAGS if flags.get(spec.attribute) is not None]
    if len(given) != 1:
        choices = ", ".join(f"{spec.flag} {_metavar(spec)}" for spec in WHEN_FLAGS)
        if not given:
            raise ValidationFailed.of(
                "when", "is missing: no flag says when", f"give exactly one of {choices}"
            )
        if set(given) == {"--at", "--every"}:
            raise ValidationFailed.of(
                "--at and --every",
                "are each a when: only one may be given",
                "with --every, give its first fire with --first "
                "(--every DAILY --first 2030-11-20T09:00:00Z), or drop --every for a one-off",
            )
        raise ValidationFailed.of(
            " and ".join(given),
            "are each a when: only one may be given",
            f"give exactly one of {choices}",
        )
    detail: dict[str, Any] = {}
    for spec in FLAGGED:
        value = flags.get(spec.attribute)
        if value is None:
            continue
        if spec.type == "object":
            value = _json_object(str(spec.flag), value)
        elif spec.choices:
            value = value.upper()
        detail[spec.name] = value
    if first is not None:
        if "frequency" not in detail:
            raise ValidationFailed.of(
                FIRST_FLAG, "is the first fire of --every", "give --every too, or use --at"
            )
        detail["at"] = first
    return detail


def flags_of_fields(first: bool) -> dict[str, str]:
    """The flag that set each Start field (``at`` is ``--first`` when it came from it): a
    refusal of the Start names what the user typed."""
    flags = {spec.name: str(spec.flag) for spec in FLAGGED}
    if first:
        flags["at"] = FIRST_FLAG
    return flags


def _metavar(spec: StartField) -> str:
    return spec.metavar or ("PRESET" if spec.choices else "EXPR")


def _text_of(flag: str, given: str) -> str:
    """The JSON a flag names: as given, from ``@FILE``, or from stdin (``-`` or ``@-``)."""
    if given in ("-", "@-"):
        return click.get_text_stream("stdin").read()
    if not given.startswith("@"):
        return given
    path = Path(given[1:]).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValidationFailed.of(
            flag, f"cannot read {path} ({error.strerror})", f"give a readable file: {flag} @FILE"
        ) from error


def _json_object(flag: str, given: str) -> dict[str, Any]:
    text = _text_of(flag, given)
    try:
        value = loads_strict(text, field=flag)
    except json.JSONDecodeError as error:
        raise ValidationFailed.of(
            flag, f"is not JSON ({error.msg})", f"quote it: {flag} '{{\"k\": 1}}'"
        ) from error
    if not isinstance(value, dict):
        raise ValidationFailed.of(flag, "must be a JSON object", f"e.g. {flag} '{{\"k\": 1}}'")
    return value
