"""SEND_NOTIFICATION through AWS messaging, by ``notificationType``:

- ``EMAIL``: Amazon SES, the templated email named ``<EmailTemplatePrefix><templateType>``,
  from ``EmailFromAddress`` (a verified identity), with the action's data as template data;
- ``SMS``: Amazon SNS to the phone number (``mobile``, E.164), the text rendered from the SSM
  parameter ``<TemplateParameterPath><templateType>``;
- ``PUSH``: Amazon SNS to the stack's push topic, the same text, with message attributes
  ``userId`` and ``templateType`` for subscribers (a mobile backend) to filter on.

Texts are templates with ``{{field}}`` placeholders filled from the data (``name``, ``subject``,
``mobile``, ``email``, ``userId``, ``templateType``). AWS refusals are classified as every
target's are: throttling and 5xx retried; a missing template, identity or topic is final.
"""

from __future__ import annotations

import email
import email.policy
import json
import re
from typing import Any

from tickwork.adapters.clients import AwsClients
from tickwork.domain.errors import PermanentFulfillmentError
from tickwork.fulfillment.aws_errors import classified
from tickwork.ports.notifier import Notification

__all__ = ["AwsNotifier", "render", "render_email"]

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_TEXT_SECONDS = 300  # how long a text is cached (TEXT_CACHE_SECONDS; the local stack: 0)


def render(template: str, data: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda match: data.get(match[1], ""), template)


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
                        "tickwork-idempotency-key": notification.idempotency_key,
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
        try:
            answer = self._clients.client("ses").send_templated_email(
                Source=self._email_from,
                Destination={"ToAddresses": [notification.recipient]},
                Template=template,
                TemplateData=json.dumps(notification.template_data),
                Tags=[{"Name": "idempotency-key", "Value": notification.idempotency_key}],
            )
        except Exception as error:
            if "TemplateDoesNotExist" in str(error):
                raise PermanentFulfillmentError(
                    f"no e-mail template {notification.template_type!r} (SES template "
                    f"{template}): create it with `{self._cli} templates put email "
                    f'{notification.template_type} --subject "{{{{subject}}}}" '
                    f'--text "Hello {{{{name}}}}, ..."`'
                ) from error
            raise classified(error, f"SES templated e-mail {template!r}") from error
        return str(answer["MessageId"])

    @property
    def _cli(self) -> str:
        """The CLI pointed at this stack: ``--stack NAME`` for a deployed one (a group option,
        before the command); nothing for the local stack, the CLI's default."""
        return f"tickwork --stack {self._stack_name}" if self._stack_name else "tickwork"

    def _text(self, notification: Notification) -> str:
        name = f"{self._texts}{notification.template_type}"
        try:
            template = self._provider().get(name, max_age=self._text_seconds)
        except Exception as error:
            if "ParameterNotFound" in str(error) or "not found" in str(error).lower():
                kind = notification.notification_type.lower()
                raise PermanentFulfillmentError(
                    f"no text for template {notification.template_type!r} (SSM parameter "
                    f"{name}): create it with `{self._cli} templates put {kind} "
                    f'{notification.template_type} --text "Hello {{{{name}}}}, ..."`'
                ) from error
            cause = error.__cause__ if isinstance(error.__cause__, Exception) else error
            raise classified(cause, f"the text of {notification.template_type}") from error
        return render(str(template), notification.template_data)

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


def _e164(mobile: str) -> str:
    return mobile if mobile.startswith("+") else f"+{mobile}"


def _string_attributes(values: dict[str, str]) -> dict[str, dict[str, str]]:
    return {name: {"DataType": "String", "StringValue": value} for name, value in values.items()}
