"""The one way tickwork reads what arrives: a declared pydantic model per payload, and a refusal
that names every bad field at once, each with its fix.

``read(Model, value, where)`` validates ``value`` against ``Model`` and raises the given
``ValidationFailed`` (``MalformedFire`` for the fire contract) listing one ``FieldProblem`` per
bad field, its path under ``where`` (``detail.generation``, ``payload.input.fireAt``,
``batch.fires[3].fireAt``). The field types below refuse in the stack's own words — what is
wrong and how to fix it — instead of pydantic's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from tickwork.domain.errors import FieldProblem, ValidationFailed, field_path
from tickwork.domain.times import parse_iso

__all__ = [
    "Flag",
    "FromZero",
    "Instant",
    "JsonObject",
    "OptionalText",
    "Positive",
    "Text",
    "Whole",
    "WireModel",
    "one_of",
    "read",
    "refusal",
    "whole_from",
]

_CONTRACT = "add it (see docs/contracts.md)"


class WireModel(BaseModel):
    """A contract's wire model: camelCase on the wire, and fields a newer stack adds left for
    it (a tolerant reader)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        frozen=True,
        extra="ignore",
        defer_build=True,  # built at its first use: a function builds only what it reads
    )


def refusal(problem: str, fix: str, problems: Iterable[FieldProblem] = ()) -> PydanticCustomError:
    """A field's refusal, in the stack's words (``problems``: several, each named by its path
    after the field's: ``[2]``, ``.MON``, or "" for the field itself)."""
    return PydanticCustomError(
        "tickwork", "{problem}", {"problem": problem, "fix": fix, "problems": list(problems)}
    )


def read[M: BaseModel](
    model: type[M],
    value: Any,
    where: str,
    refused: type[ValidationFailed] = ValidationFailed,
    *,
    not_object: tuple[str, str] = ("is not a JSON object", "send the documented object"),
    missing_fix: str | Callable[[str], str] = _CONTRACT,
    unknown: Callable[[str], tuple[str, str]] | None = None,
) -> M:
    """``value`` as ``model``, or ``refused`` naming every bad field (paths under ``where``).
    ``missing_fix`` (or ``missing_fix(path)``) says how to fix a field left out; ``unknown(path)``
    words the refusal of a field the model does not have (for a model that forbids them)."""
    if not isinstance(value, dict):
        raise refused([FieldProblem(where or "detail", *not_object)])
    try:
        return model.model_validate(value)
    except ValidationError as error:
        problems: list[FieldProblem] = []
        for item in error.errors(include_url=False):
            problems += _problems(item, where, missing_fix, unknown)
        raise refused(problems) from error


def _problems(
    item: Any,
    where: str,
    missing_fix: str | Callable[[str], str],
    unknown: Callable[[str], tuple[str, str]] | None,
) -> list[FieldProblem]:
    path = _path(where, item["loc"])
    kind, context = item["type"], item.get("ctx") or {}
    if kind == "tickwork":
        inner = [FieldProblem(path + p.field, p.problem, p.fix) for p in context["problems"]]
        return inner or [FieldProblem(path, context["problem"], context["fix"])]
    if kind == "missing":
        fix = missing_fix if isinstance(missing_fix, str) else missing_fix(path)
        return [FieldProblem(path, "is missing", fix)]
    if kind == "extra_forbidden":
        problem, fix = unknown(path) if unknown else ("is not a known field", "remove it")
        return [FieldProblem(path, problem, fix)]
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return [FieldProblem(path, "is not a JSON object", "send an object")]
    return [FieldProblem(path, str(item["msg"]), "see docs/contracts.md")]


def _path(where: str, loc: Iterable[Any]) -> str:
    return field_path(loc, where)


# --- field types: each refuses in the stack's own words -----------------------------------------
def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise refusal(f"{value!r} is not a non-empty string", "give one")
    return value


def _optional_text(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise refusal(f"{value!r} is not a string", "give a string or null")
    return value


def _flag(value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise refusal(f"{value!r} is not true or false", "give a boolean")
    return value


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise refusal(f"{value!r} is not a whole number", "give one")
    return value


def _instant(value: Any) -> datetime:
    try:
        return parse_iso(value, "")
    except ValidationFailed as refused:
        problem = refused.problems[0]
        raise refusal(problem.problem, problem.fix) from refused


def _json_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise refusal(f"{value!r} is not a JSON object", "give an object")
    return value


def whole_from(minimum: int) -> Callable[[Any], int]:
    """A validator: a whole number of ``minimum`` or more (never a boolean)."""

    def count(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise refusal(
                f"{value!r} is not a whole number of {minimum} or more",
                f"give a whole number of {minimum} or more",
            )
        return value

    return count


def one_of[Choice: StrEnum](
    choices: type[Choice], what: str, among: Iterable[str] = ()
) -> Callable[[Any], Choice]:
    """A validator: one of ``choices`` (or of ``among`` of them) by its value, else
    ``'...' is not {what}``."""
    allowed = [str(c) for c in among] or [str(c) for c in choices]

    def one(value: Any) -> Choice:
        if not isinstance(value, str) or value not in allowed:
            raise refusal(f"{value!r} is not {what}", f"use one of {', '.join(allowed)}")
        return choices(value)

    return one


Text = Annotated[str, PlainValidator(_text)]
OptionalText = Annotated[str | None, PlainValidator(_optional_text)]
Flag = Annotated[bool, PlainValidator(_flag)]
Whole = Annotated[int, PlainValidator(_whole)]
Instant = Annotated[datetime, PlainValidator(_instant)]
JsonObject = Annotated[dict[str, Any], PlainValidator(_json_object)]
Positive = Annotated[int, PlainValidator(whole_from(1))]
FromZero = Annotated[int, PlainValidator(whole_from(0))]
