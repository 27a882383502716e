"""SEND_NOTIFICATION through AWS messaging, by ``notificationType``:

- ``EMAIL``: Amazon SES, the templated email named ``<EmailTemplatePrefix><templateType>``,
  from ``EmailFromAddress`` (a verified identity), with the action's data as template data;
- ``SMS``: Amazon SNS to the phone number (``mobile``, E.164), the text rendered from the SSM
  parameter ``<TemplateParameterPath><templateType>``;
- ``PUSH``: Amazon SNS to the stack's push topic, the same text, with message attributes
  ``userId`` and ``templateType`` for subscribers (a mobile backend) to filter on.

Each says which fire it is where its channel has room: a push in the message attributes an
SNS_MESSAGE carries (``tickwork-idempotency-key``, ``tickwork-action-id``,
``tickwork-occurrence``, ``tickwork-fire``: its scheduled time, attempt and trigger); an e-mail
in SES message tags (``idempotency-key``, ``occurrence``, ``scheduled-time-ms``, ``attempt``,
``trigger``: what a configuration set's event publishing reports, tag values allowing only
letters, digits, ``_`` and ``-``, hence epoch milliseconds). An SMS is its text alone.

Texts and e-mails are templates with ``{{field}}`` placeholders (``tickwork.domain.placeholders``)
filled from the data: its known fields (``name``, ``subject``, ``mobile``, ``email``, ``userId``,
``templateType``, ``notificationType``) and the team's own (``amount``, ``dueDate``...). A
placeholder the data does not fill fails the fire for good, naming the field: nothing is sent
with a blank. AWS refusals are classified as every target's are: throttling and 5xx retried; a
missing template, identity or topic is final.
"""

from __future__ import annotations

import email
import email.policy
import json
import logging
from typing import Any

from tickwork.adapters.clients import AwsClients
from tickwork.domain.errors import PermanentFulfillmentError
from tickwork.domain.placeholders import MissingFields, TemplateSyntaxProblem, fill, placeholders
from tickwork.domain.times import to_epoch_ms
from tickwork.fulfillment.aws_errors import classified
from tickwork.ports.notifier import Notification

__all__ = ["AwsNotifier", "render", "render_email"]

_TEXT_SECONDS = 300  # how long a text is cached (TEXT_CACHE_SECONDS; the local stack: 0)
_EMAIL_PARTS = ("SubjectPart", "TextPart", "HtmlPart")
_log = logging.getLogger(__name__)


def render(template: str, data: dict[str, str]) -> str:
    """``template`` filled from ``data``: ``MissingFields`` or ``TemplateSyntaxProblem`` when it
    cannot be filled whole (``tickwork.domain.placeholders``)."""
    return fill(template, data)


def fields_of(*parts: str | None, handlebars: bool = False) -> frozenset[str]:
    """The placeholders of a template's parts: a text's (tickwork fills it), or with
    ``handlebars`` an e-mail's subject, text and HTML (SES fills them)."""
    return frozenset().union(*(placeholders(part, handlebars=handlebars) for part in parts if part))


def render_email(ses: Any, template: str, template_data: str) -> dict[str, Any]:
    """The e-mail SES would send of ``template`` with ``template_data`` (JSON text), as SES's
    TestRenderTemplate renders it: its ``subject``, its ``text`` body and its ``html`` one."""
    mime = ses.test_render_template(TemplateName=template, TemplateData=template_data)[
        "RenderedTemplate"
    ]
    message = email.message_from_string(mime, policy=email.policy.default)
    parts: dict[str, Any] = {"subject": message["Subject"]}
    for part in message.walk():
        kind = part.get_content_type()
        if kind in ("text/plain", "text/html") and not part.is_multipart():
            parts["text" if kind == "text/plain" else "html"] = str(part.get_content()).strip()
    return parts


class AwsNotifier:
    def __init__(
        self,
        clients: AwsClients,
        email_from: str | None,
        email_template_prefix: str,
        text_parameter_path: str,
        push_topic_arn: str | None,
        stack_name: str | None = None,
        text_cache_seconds: int = _TEXT_SECONDS,
    ) -> None:
        self._base = clients
        self._configured: AwsClients | None = None
        self._email_from = email_from
        self._prefix = email_template_prefix
        self._texts = text_parameter_path
        self._push_topic = push_topic_arn
        self._stack_name = stack_name  # a deployed stack's name, for the commands it suggests
        self._text_seconds = text_cache_seconds
        self._ssm: Any = None

    def template_fields(self, notification_type: str, template_type: str) -> frozenset[str] | None:
        """The placeholders of the stored template, read now (not from the fire's cache: a
        Start is checked against the template as it stands), or ``None`` when it is missing or
        cannot be read or parsed here (the fire then says why)."""
        try:
            if notification_type == "EMAIL":
                parts = self._email_parts(template_type)
                return fields_of(*parts.values(), handlebars=True)
            return fields_of(self._stored_text(notification_type, template_type, fresh=True))
        except Exception as error:  # a check before the fire's own: never fatal
            if not _is_missing(error):  # a template not put yet: the fire reports it
                _log.warning(
                    "template not read: the Start's data is not checked against it",
                    extra={"template_type": template_type, "error": str(error)},
                )
            return None

    def send(self, notification: Notification) -> str:
        if notification.notification_type == "EMAIL":
            return self._email(notification)
        text = self._text(notification)
        if notification.notification_type == "SMS":
            return self._publish(
                {
                    "PhoneNumber": _e164(notification.recipient),
                    "Message": text,
                    "MessageAttributes": _string_attributes(
                        {"AWS.SNS.SMS.SMSType": "Transactional"}
                    ),
                },
                f"SMS to {notification.recipient}",
            )
        if not self._push_topic:
            raise PermanentFulfillmentError("no push topic: deploy the stack's PushTopic")
        return self._publish(
            {
                "TopicArn": self._push_topic,
                "Message": text,
                "Subject": (notification.subject or notification.template_type)[:100],
                "MessageAttributes": _string_attributes(
                    {
                        "userId": notification.recipient,
                        "templateType": notification.template_type,
                        **_fire_attributes(notification),
                    }
                ),
            },
            f"push to {notification.recipient}",
        )

    def _email(self, notification: Notification) -> str:
        if not self._email_from:
            raise PermanentFulfillmentError(
                "no sender for e-mail: set the stack's EmailFromAddress to a verified identity"
            )
        template = f"{self._prefix}{notification.template_type}"
        self._check_email(notification, template)
        try:
            answer = self._clients.client("ses").send_templated_email(
                Source=self._email_from,
                Destination={"ToAddresses": [notification.recipient]},
                Template=template,
                TemplateData=json.dumps(notification.template_data),
                Tags=_fire_tags(notification),
            )
        except Exception as error:
            if "TemplateDoesNotExist" in str(error):
                raise self._no_email(notification.template_type) from error
            raise classified(error, f"SES templated e-mail {template!r}") from error
        return str(answer["MessageId"])

    def _check_email(self, notification: Notification, template: str) -> None:
        """Every ``{{field}}`` of the SES template given by the data, or the fire fails for good
        naming it. A template that cannot be read (a missing permission, throttling) is left to
        SES, which refuses to send a template its data does not fill (a rendering failure)."""
        try:
            parts = self._email_parts(notification.template_type)
            fields = fields_of(*parts.values(), handlebars=True)
        except TemplateSyntaxProblem as problem:
            raise PermanentFulfillmentError(
                f"the template {notification.template_type} (SES template {template}) cannot be "
                f"filled: {problem.problem}; {problem.fix}, and put it again with `{self._cli} "
                f"templates put email {notification.template_type} ...`"
            ) from None
        except Exception as error:
            if _is_missing(error):
                raise  # no such template: nothing to send
            _log.warning(
                "e-mail template not read before sending: SES checks its fields",
                extra={"template": template, "error": str(error)},
            )
            return
        self._check_filled(notification, fields, f"SES template {template}")

    def _email_parts(self, template_type: str) -> dict[str, str]:
        """The stored e-mail template's subject, text and HTML, read now: as SES renders it."""
        name = f"{self._prefix}{template_type}"
        try:
            stored = self._clients.client("ses").get_template(TemplateName=name)["Template"]
        except Exception as error:
            if "TemplateDoesNotExist" in str(error):
                raise self._no_email(template_type) from error
            raise classified(error, f"SES template {name!r}") from error
        return {part: str(stored[part]) for part in _EMAIL_PARTS if stored.get(part)}

    def _no_email(self, template_type: str) -> PermanentFulfillmentError:
        return PermanentFulfillmentError(
            f"no e-mail template {template_type!r} (SES template "
            f"{self._prefix}{template_type}): create it with `{self._cli} templates put email "
            f'{template_type} --subject "{{{{subject}}}}" --text "Hello {{{{name}}}}, ..."`'
        )

    def _check_filled(self, notification: Notification, fields: frozenset[str], where: str) -> None:
        missing = sorted(fields - notification.template_data.keys())
        if missing:
            raise self._unfilled(notification, missing, where)

    def _unfilled(
        self, notification: Notification, missing: list[str], where: str
    ) -> PermanentFulfillmentError:
        shown = ", ".join(f"{{{{{name}}}}}" for name in missing)
        return PermanentFulfillmentError(
            f"the template {notification.template_type} ({where}) uses {shown}, which the "
            f"action's data does not give: nothing was sent. Add data.{missing[0]} to the action "
            f"(a new Start with the same id replaces its data), or put the template without it: "
            f"`{self._cli} templates put {notification.notification_type.lower()} "
            f"{notification.template_type} ...`"
        )

    @property
    def _cli(self) -> str:
        """The CLI pointed at this stack: ``--stack NAME`` for a deployed one (a group option,
        before the command); nothing for the local stack, the CLI's default."""
        return f"tickwork --stack {self._stack_name}" if self._stack_name else "tickwork"

    def _text(self, notification: Notification) -> str:
        text = self._stored_text(notification.notification_type, notification.template_type)
        where = f"SSM parameter {self._texts}{notification.template_type}"
        try:
            return render(text, notification.template_data)
        except MissingFields as missing:
            raise self._unfilled(notification, missing.names, where) from None
        except TemplateSyntaxProblem as problem:
            raise PermanentFulfillmentError(
                f"the template {notification.template_type} ({where}) cannot be filled: "
                f"{problem.problem}; {problem.fix}, and put it again with `{self._cli} templates "
                f"put {notification.notification_type.lower()} {notification.template_type}`"
            ) from None

    def _stored_text(self, notification_type: str, template_type: str, fresh: bool = False) -> str:
        name = f"{self._texts}{template_type}"
        try:
            age = 0 if fresh else self._text_seconds
            return str(self._provider().get(name, max_age=age, force_fetch=fresh))
        except Exception as error:
            if "ParameterNotFound" in str(error) or "not found" in str(error).lower():
                kind = notification_type.lower()
                raise PermanentFulfillmentError(
                    f"no text for template {template_type!r} (SSM parameter "
                    f"{name}): create it with `{self._cli} templates put {kind} "
                    f'{template_type} --text "Hello {{{{name}}}}, ..."`'
                ) from error
            cause = error.__cause__ if isinstance(error.__cause__, Exception) else error
            raise classified(cause, f"the text of {template_type}") from error

    def _publish(self, message: dict[str, Any], target: str) -> str:
        try:
            answer = self._clients.client("sns").publish(**message)
        except Exception as error:
            raise classified(error, target) from error
        return str(answer["MessageId"])

    @property
    def _clients(self) -> AwsClients:
        """One attempt per call, as a target's: the state machine's Retry is the retry policy."""
        if self._configured is None:
            from tickwork.adapters.target_clients import target_config

            self._configured = self._base.configured(target_config())
        return self._configured

    def _provider(self) -> Any:
        if self._ssm is None:
            from aws_lambda_powertools.utilities.parameters import SSMProvider

            self._ssm = SSMProvider(boto3_client=self._clients.client("ssm"))
        return self._ssm


def _is_missing(error: Exception) -> bool:
    """The refusal of a template not put yet (``_no_email``, ``_stored_text``): it says the
    command that creates it."""
    return isinstance(error, PermanentFulfillmentError) and "create it" in str(error)


def _e164(mobile: str) -> str:
    return mobile if mobile.startswith("+") else f"+{mobile}"


def _fire_attributes(notification: Notification) -> dict[str, str]:
    """The fire a push is sent for, as an SNS_MESSAGE's message attributes say it."""
    # Imported here, at a send (the data models are loaded by then): the bootstrap builds this
    # notifier for functions that load no pydantic at a cold start.
    from tickwork.fulfillment.targets import FIRE_ATTRIBUTE, fire_json

    return {
        "tickwork-idempotency-key": notification.idempotency_key,
        "tickwork-action-id": notification.action_id,
        "tickwork-occurrence": str(notification.occurrence),
        FIRE_ATTRIBUTE: fire_json(
            notification.scheduled_time, notification.attempt, notification.trigger
        ),
    }


def _fire_tags(notification: Notification) -> list[dict[str, str]]:
    """The fire an e-mail is sent for, as SES message tags: a tag's value is letters, digits,
    ``_`` and ``-`` only, so the scheduled time is in epoch milliseconds (and the action id,
    free text, is left out: the key names the fire)."""
    tags = {
        "idempotency-key": notification.idempotency_key,
        "occurrence": str(notification.occurrence),
        "scheduled-time-ms": str(to_epoch_ms(notification.scheduled_time)),
        "attempt": str(notification.attempt),
        "trigger": notification.trigger,
    }
    return [{"Name": name, "Value": value} for name, value in tags.items()]


def _string_attributes(values: dict[str, str]) -> dict[str, dict[str, str]]:
    return {name: {"DataType": "String", "StringValue": value} for name, value in values.items()}
