"""SEND_NOTIFICATION: a templated SMS, e-mail or push message, sent through a ``Notifier``
(``tickwork.fulfillment.notifier``), which is told the fire it sends for: its key, occurrence,
scheduled time, attempt and trigger (``tickwork.ports.notifier.Notification``)."""

from __future__ import annotations

import json
import math
import re
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel, to_snake

from tickwork.domain.errors import FieldProblem, ValidationFailed
from tickwork.fulfillment.base import FulfillmentData, FulfillmentRequest, data_problem
from tickwork.fulfillment.delivery import Delivery
from tickwork.ports.notifier import Notification, Notifier

__all__ = ["MOST_OWN_FIELDS", "NotificationData", "NotificationFulfillment", "missing_fields"]

MOST_OWN_FIELDS = 50  # a team's own fields in one notification's data
_OWN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # as a template's {{placeholder}}
_MOBILE = re.compile(r"\+?[0-9]{8,15}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_TEMPLATE_TYPE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*")

NotificationType = Literal["SMS", "EMAIL", "PUSH"]


class NotificationData(FulfillmentData):
    """The action's ``data``, in the camelCase of the Start event.

    SMS needs ``mobile``, EMAIL needs ``email``, PUSH needs ``userId``. Any other field is the
    team's own (``amount``, ``dueDate``, ``link``): a string, number or boolean that fills the
    template's ``{{placeholder}}`` of the same name.
    """

    model_config = ConfigDict(
        extra="allow",
        frozen=True,
        alias_generator=to_camel,
        json_schema_extra={
            "additionalProperties": {
                "anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]
            },
            "propertyNames": {"pattern": f"^{_OWN_NAME.pattern}$"},
        },
    )

    # Declared first: the address validators below read it.
    notification_type: NotificationType
    template_type: str
    mobile: str | None = Field(default=None, validate_default=True)
    email: str | None = Field(default=None, validate_default=True)
    user_id: str | None = Field(default=None, validate_default=True)
    subject: str | None = None
    name: str | None = None

    @field_validator("template_type")
    @classmethod
    def _template_type_is_upper_snake(cls, value: str) -> str:
        if not _TEMPLATE_TYPE.fullmatch(value):
            raise data_problem(
                f"{value!r} is not an UPPER_SNAKE_CASE template name",
                "use the template's name, e.g. USER_LATE_PAYMENT_NOTIFICATION",
            )
        return value

    @field_validator("mobile")
    @classmethod
    def _mobile_for_sms(cls, value: str | None, info: ValidationInfo) -> str | None:
        _require_for("SMS", "mobile", value, info)
        if value is not None and not _MOBILE.fullmatch(value):
            raise data_problem(
                f"{value!r} is not a phone number",
                "give 8 to 15 digits with the country code and an optional leading +, "
                "e.g. 60123456789",
            )
        return value

    @field_validator("email")
    @classmethod
    def _email_for_email(cls, value: str | None, info: ValidationInfo) -> str | None:
        _require_for("EMAIL", "email", value, info)
        if value is not None and not _EMAIL.fullmatch(value):
            raise data_problem(f"{value!r} is not an e-mail address", "give name@domain.tld")
        return value

    @field_validator("user_id")
    @classmethod
    def _user_id_for_push(cls, value: str | None, info: ValidationInfo) -> str | None:
        _require_for("PUSH", "userId", value, info)
        if value is not None and not value.strip():
            raise data_problem("is blank", "give the id of the user whose devices get the push")
        return value

    @model_validator(mode="after")
    def _own_fields_fill_placeholders(self) -> NotificationData:
        own = self.model_extra or {}
        if len(own) > MOST_OWN_FIELDS:
            raise data_problem(
                f"has {len(own)} fields of your own, more than {MOST_OWN_FIELDS}",
                "keep the fields the template uses",
            )
        known = {name: field.alias for name, field in type(self).model_fields.items()}
        for name, value in own.items():
            if to_snake(name) in known:
                raise data_problem(
                    "is a spelling of a known field", f"write it {known[to_snake(name)]}", name
                )
            if not _OWN_NAME.fullmatch(name):
                raise data_problem(
                    "is not a name a template can use",
                    "name it with letters, digits and _ (up to 64), starting with a letter, "
                    "as its {{placeholder}} is",
                    name,
                )
            if value is None or not isinstance(value, str | int | float | bool):
                raise data_problem(
                    f"must be a string, number or boolean, got {_kind(value)}",
                    "give the text the template shows (flatten an object into fields of "
                    "its own, e.g. customerName), or drop it",
                    name,
                )
            if isinstance(value, float) and not math.isfinite(value):
                raise data_problem(f"is {value}, not a number", "give a finite number", name)
        for name, value in self.model_dump(by_alias=True).items():
            if isinstance(value, str) and ("{{" in value or "}}" in value):
                raise data_problem(
                    "holds {{ or }}, which the customer would see as they are",
                    "give the value without template syntax (a value is never filled again)",
                    name,
                )
        return self

    def template_values(self) -> dict[str, str]:
        """What fills the template's placeholders: every field given, as the text it shows
        (numbers as JSON writes them, booleans as true/false); a field not given, or given
        empty or blank, is absent — a template using it is refused, never sent with a blank."""
        values = {
            name: value
            for name, value in self.model_dump(
                by_alias=True, exclude=set(self.model_extra or {})
            ).items()
            if isinstance(value, str)
        }
        for name, value in (self.model_extra or {}).items():
            values[name] = _shown(value)
        # An empty or blank value fills nothing: its placeholder counts as not given.
        return {name: value for name, value in values.items() if value.strip()}

    @property
    def recipient(self) -> str:
        by_type = {"SMS": self.mobile, "EMAIL": self.email, "PUSH": self.user_id}
        recipient = by_type[self.notification_type]
        assert recipient is not None  # guaranteed by the validators above
        return recipient


def _require_for(
    notification_type: str, field: str, value: str | None, info: ValidationInfo
) -> None:
    if value is None and info.data.get("notification_type") == notification_type:
        raise data_problem(
            f"is required when notificationType is {notification_type}",
            f"add data.{field}, or change notificationType",
        )


def _kind(value: object) -> str:
    return {type(None): "null", list: "a list", dict: "an object"}.get(type(value), "a value")


def _shown(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def missing_fields(data: NotificationData, fields: frozenset[str]) -> list[str]:
    """The placeholders ``fields`` of a template that ``data`` does not fill, sorted."""
    return sorted(fields - data.template_values().keys())


class NotificationFulfillment:
    action_type: ClassVar[str] = "SEND_NOTIFICATION"
    data_model: ClassVar[type[BaseModel]] = NotificationData

    @classmethod
    def built(cls, delivery: Delivery) -> NotificationFulfillment:
        return cls(delivery.notifier)

    def __init__(self, notifier: Notifier) -> None:
        self._notifier = notifier

    def admit(self, data: BaseModel) -> None:
        """Refuse an action whose template exists and uses a field its data does not give (a
        template not put yet is left to the fire, which fails naming the command to put it)."""
        assert isinstance(data, NotificationData)
        fields = self._notifier.template_fields(data.notification_type, data.template_type)
        missing = missing_fields(data, fields) if fields is not None else []
        if missing:
            raise ValidationFailed(
                [
                    FieldProblem(
                        f"data.{name}",
                        f"is used by the template {data.template_type} ({{{{{name}}}}}) "
                        "but not given",
                        f"add data.{name}, or put the template without {{{{{name}}}}} "
                        "(tickwork templates put)",
                    )
                    for name in missing
                ]
            )

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = NotificationData.model_validate(request.data)
        message_id = self._notifier.send(
            Notification(
                notification_type=data.notification_type,
                recipient=data.recipient,
                template_type=data.template_type,
                subject=data.subject,
                name=data.name,
                action_id=request.action_id,
                idempotency_key=request.idempotency_key,
                occurrence=request.occurrence,
                scheduled_time=request.scheduled_time,
                attempt=request.attempt,
                trigger=request.trigger,
                template_data=data.template_values(),
            )
        )
        return {"notificationType": data.notification_type, "messageId": message_id}
