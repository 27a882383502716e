"""Action type → fulfillment, and validation of an action's ``data`` against its model.

A registry may be given a ``build`` that registers its fulfillments at its first use: the
fulfillment modules (and pydantic, their models' library) are then imported only by a
function that fires or validates an action, and only when it first does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tickwork.domain.errors import (
    FieldProblem,
    InvalidActionData,
    UnknownActionType,
    field_path,
)

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic_core import ErrorDetails

    from tickwork.fulfillment.base import Fulfillment

__all__ = ["FulfillmentRegistry", "validate_data"]

_SHOWN_INPUT_CHARS = 60


class FulfillmentRegistry:
    def __init__(self, build: Callable[[FulfillmentRegistry], None] | None = None) -> None:
        self._by_type: dict[str, Fulfillment] = {}
        self._build = build
        self._lock = threading.Lock()

    def _ready(self) -> dict[str, Fulfillment]:
        if self._build is not None:
            with self._lock:
                if self._build is not None:
                    self._build(self)
                    self._build = None
        return self._by_type

    def register(self, fulfillment: Fulfillment) -> Fulfillment:
        action_type = fulfillment.action_type
        if action_type in self._by_type:
            raise ValueError(f"action type {action_type!r} is already registered")
        self._by_type[action_type] = fulfillment
        return fulfillment

    def get(self, action_type: str) -> Fulfillment:
        try:
            return self._ready()[action_type]
        except KeyError:
            raise UnknownActionType(action_type, self.types()) from None

    def types(self) -> list[str]:
        return sorted(self._ready())

    def validate(self, action_type: str, data: Any, *, stored: bool = False) -> BaseModel:
        """Parse ``data`` with the action type's model, or say what to change, field by field.
        ``stored``: the data of an action's record, read at its fire (``validate_data``)."""
        return validate_data(self.get(action_type).data_model, data, stored=stored)

    def admit(self, action_type: str, data: BaseModel) -> None:
        """The checks of an action's parsed data that read the stack (a notification's
        template), for the action types that have them: ``ValidationFailed`` naming the field."""
        admit = getattr(self.get(action_type), "admit", None)
        if admit is not None:
            admit(data)

    def json_schemas(self) -> dict[str, dict[str, Any]]:
        return {t: f.data_model.model_json_schema() for t, f in sorted(self._ready().items())}


def validate_data(model: type[BaseModel], data: Any, *, stored: bool = False) -> BaseModel:
    """``data`` parsed with an action type's model, or ``InvalidActionData`` naming each field
    to change (the stack's check of a Start, and the publisher client's before it sends).

    ``stored``: the data of an action's record, read at its fire. A model may hold a new Start
    to a limit tightened since the action was taken (``base.is_stored``): the action, taken
    under the older one, still fires.
    """
    from pydantic import ValidationError

    from tickwork.fulfillment.base import STORED

    try:
        return model.model_validate(data, context=STORED if stored else None)
    except ValidationError as err:
        problems = [_field_problem(e, model) for e in err.errors(include_url=False)]
        raise InvalidActionData(problems) from None


def _field_problem(error: ErrorDetails, model: type[BaseModel]) -> FieldProblem:
    kind = error["type"]
    path = _path(error["loc"], model, is_known_field=kind != "extra_forbidden")
    ctx = error.get("ctx") or {}
    if "fix" in ctx:
        where = f"{path}.{ctx['field']}" if "field" in ctx else path
        return FieldProblem(where, str(ctx["problem"]), str(ctx["fix"]))
    if kind == "missing":
        return FieldProblem(path, "is required", f"add {path}")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return FieldProblem(
            path,
            f"must be a JSON object, got {_shown(error['input'])}",
            f"send {path} as a JSON object, e.g. {{}}",
        )
    if kind == "extra_forbidden":
        allowed = ", ".join(_field_names(model)) or "none"
        return FieldProblem(path, "is not a known field", f"remove it; allowed fields: {allowed}")
    problem = f"{error['msg'][:1].lower()}{error['msg'][1:]}, got {_shown(error['input'])}"
    return FieldProblem(path, problem, _fix_from(error))


def _fix_from(error: ErrorDetails) -> str:
    ctx = error.get("ctx") or {}
    if "expected" in ctx:
        return f"use {ctx['expected']}"
    message = error["msg"]
    if message.startswith("Input should be "):
        return "make it " + message.removeprefix("Input should be ")
    if message.startswith("Value error, "):
        return message.removeprefix("Value error, ")
    return message


def _path(loc: tuple[int | str, ...], model: type[BaseModel], *, is_known_field: bool) -> str:
    # pydantic names a field by its Python name when it fails on its default value;
    # the caller wrote its alias, so report that.
    field = model.model_fields.get(str(loc[0])) if loc and is_known_field else None
    if field is not None and field.alias:
        loc = (field.alias, *loc[1:])
    return field_path(loc, under="data")


def _field_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_INPUT_CHARS else text[: _SHOWN_INPUT_CHARS - 3] + "..."
