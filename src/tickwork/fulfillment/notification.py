"""SEND_NOTIFICATION: a templated SMS, e-mail or push message, sent through a ``Notifier``
(``tickwork.fulfillment.notifier``)."""

from __future__ import annotations

import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

from tickwork.fulfillment.base import FulfillmentData, FulfillmentRequest, data_problem
from tickwork.ports.notifier import Notification, Notifier

__all__ = ["NotificationData", "NotificationFulfillment"]

_MOBILE = re.compile(r"\+?[0-9]{8,15}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_TEMPLATE_TYPE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*")

NotificationType = Literal["SMS", "EMAIL", "PUSH"]


class NotificationData(FulfillmentData):
    """The action's ``data``, in the camelCase of the Start event.

    SMS needs ``mobile``, EMAIL needs ``email``, PUSH needs ``userId``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel)

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


class NotificationFulfillment:
    action_type: ClassVar[str] = "SEND_NOTIFICATION"
    data_model: ClassVar[type[BaseModel]] = NotificationData

    def __init__(self, notifier: Notifier) -> None:
        self._notifier = notifier

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
                template_data={
                    name: value
                    for name, value in data.model_dump(by_alias=True).items()
                    if isinstance(value, str)
                },
            )
        )
        return {"notificationType": data.notification_type, "messageId": message_id}
