"""``tickwork templates``: the texts and e-mails SEND_NOTIFICATION fires send, managed where the
stack reads them — SMS and push texts as SSM parameters ``<TextParameterPath><NAME>``, e-mails
as SES templates ``<EmailTemplatePrefix><NAME>`` — on the local stack or a deployed one
(``--stack NAME``). ``render`` shows what a fire would send, with sample data or yours:
texts through the same renderer a fire uses, e-mails through SES's own TestRenderTemplate.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click

from tickwork.adapters.aws_notifier import fields_of, render, render_email
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.placeholders import TemplateSyntaxProblem, placeholders
from tickwork_cli import render as show
from tickwork_cli.context import Context, guard, json_option, pass_context

__all__ = ["templates"]

KINDS = ("sms", "push", "email")
DEFAULT_TEXT_PATH = "/tickwork/templates/"  # template.yaml's TextParameterPath default
_NAME = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*")  # as a notification's templateType
_MOST_TEXT = 4096  # a standard SSM parameter


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValidationFailed.of(
            "NAME",
            f"{name!r} is not an UPPER_SNAKE_CASE template name",
            "use the templateType a Start gives, e.g. USER_LATE_PAYMENT_NOTIFICATION",
        )
    return name


def _text_path(context: Context) -> str:
    parameters = context.target.parameters or {}
    return parameters.get("TextParameterPath") or DEFAULT_TEXT_PATH


def _email_name(context: Context, name: str) -> str:
    return f"{(context.target.parameters or {}).get('EmailTemplatePrefix', '')}{name}"


def put_command(kind: str, name: str, text: str | None = None, subject: str | None = None) -> str:
    """The exact command that creates a template (what a fire missing one says to run)."""
    if kind == "email":
        return (
            f"tickwork templates put email {name} --subject {json.dumps(subject or name)} "
            f'--text "Hello {{{{name}}}}, ..."'
        )
    return (
        f"tickwork templates put {kind} {name} --text {json.dumps(text or 'Hello {{name}}, ...')}"
    )


def sample_data(kind: str, name: str) -> dict[str, str]:
    """The fields a fire fills a template from (its data's text fields), with sample values."""
    return {
        "notificationType": kind.upper(),
        "templateType": name,
        "name": "Ada",
        "subject": "Sample subject",
        "mobile": "60123456789",
        "email": "ada@example.com",
        "userId": "user-1",
    }


@click.group()
def templates() -> None:
    """SMS, push and e-mail templates of SEND_NOTIFICATION: put, list, show, render, delete.

    \b
    tickwork templates put sms USER_LATE_PAYMENT_NOTIFICATION \\
        --text "Hi {{name}}, your payment is late."
    tickwork templates put email ORDER_READY --subject "{{subject}}" \\
        --text "Hello {{name}}, your order is ready."
    tickwork templates render sms USER_LATE_PAYMENT_NOTIFICATION --data '{"name": "Joojo"}'
    tickwork templates list

    Texts use {{field}} placeholders, filled from the action's data: its known fields (name,
    subject, mobile, email, userId, templateType, notificationType) and your own (amount,
    dueDate, link: any string, number or boolean the data gives). In an SMS or push text only
    {{name}} is a placeholder: an unclosed {{, a stray }} or blocks like {{#if}} are refused
    when put. An e-mail is an SES template (Handlebars): its blocks and helpers are SES's; an
    unclosed {{ is refused. A Start whose data
    lacks a placeholder of an existing template is refused naming the field, and a fire never
    sends a blank. SMS and push share one text per name.
    """


@templates.command()
@click.argument("kind", type=click.Choice(KINDS, case_sensitive=False))
@click.argument("name")
@click.option("--text", required=True, help="The text, with {{field}} placeholders.")
@click.option("--subject", help="E-mail only: the subject line (placeholders too).")
@click.option("--html", help="E-mail only: an HTML body beside the text one.")
@json_option
@pass_context
def put(
    context: Context,
    kind: str,
    name: str,
    text: str,
    subject: str | None,
    html: str | None,
    as_json: bool,
) -> None:
    """Create or replace the template NAME (a notification's templateType)."""
    kind = kind.lower()
    guard(lambda: _check_name(name))
    fields = _fields({"--text": text, "--subject": subject, "--html": html}, kind == "email")
    if kind == "email":
        where = _put_email(context, name, text, subject, html)
    else:
        if subject or html:
            raise click.UsageError("--subject and --html are for e-mail templates only")
        where = _put_text(context, name, text)
    show.echo_result({"put": kind, "name": name, "where": where, "fields": fields}, as_json)


def _fields(parts: dict[str, str | None], handlebars: bool) -> list[str]:
    """The placeholders of a template's parts, each part's syntax checked before anything is
    written (the option holding a problem is named). An e-mail is SES's Handlebars: its blocks
    and helpers are SES's to fill; a text's syntax is tickwork's own, {{name}} only."""
    found: set[str] = set()
    for option, part in parts.items():
        if part is None:
            continue
        try:
            found |= placeholders(part, handlebars=handlebars)
        except TemplateSyntaxProblem as problem:
            message = f"{problem.problem}: {problem.fix}"
            raise click.BadParameter(message, param_hint=option) from None
    return sorted(found)


def _put_text(context: Context, name: str, text: str) -> str:
    if not text.strip() or len(text.encode()) > _MOST_TEXT:
        raise click.BadParameter(
            f"give 1 to {_MOST_TEXT} bytes of text (an SMS segment is 160 characters)",
            param_hint="--text",
        )
    parameter = f"{_text_path(context)}{name}"
    context.target.client("ssm").put_parameter(
        Name=parameter, Value=text, Type="String", Overwrite=True
    )
    return f"SSM parameter {parameter}"


def _put_email(
    context: Context, name: str, text: str, subject: str | None, html: str | None
) -> str:
    if not subject:
        raise click.BadParameter("an e-mail template needs one", param_hint="--subject")
    template = {
        "TemplateName": _email_name(context, name),
        "SubjectPart": subject,
        "TextPart": text,
        **({"HtmlPart": html} if html else {}),
    }
    ses = context.target.client("ses")
    try:
        ses.get_template(TemplateName=template["TemplateName"])
    except ses.exceptions.TemplateDoesNotExistException:
        ses.create_template(Template=template)
    else:
        ses.update_template(Template=template)
    return f"SES template {template['TemplateName']}"


@templates.command(name="list")
@click.option("--kind", type=click.Choice(KINDS, case_sensitive=False), help="Only this kind.")
@json_option
@pass_context
def list_(context: Context, kind: str | None, as_json: bool) -> None:
    """Every template the stack's notifications can use, by kind (SMS and push share texts)."""
    kind = kind.lower() if kind else None
    rows = [] if kind == "email" else [{"kind": "sms/push", **t} for t in _texts(context)]
    rows += [] if kind in ("sms", "push") else [{"kind": "email", **t} for t in _emails(context)]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no templates yet: " + put_command("sms", "YOUR_TEMPLATE"))
        return
    for row in rows:
        click.echo(f"{row['kind']:9} {row['name']:40} {row['where']}")


def _texts(context: Context) -> list[dict[str, str]]:
    path = _text_path(context)
    pages = context.target.client("ssm").get_paginator("get_parameters_by_path")
    found = []
    for page in pages.paginate(Path=path, Recursive=False):
        for parameter in page["Parameters"]:
            name = parameter["Name"].removeprefix(path)
            found.append({"name": name, "where": parameter["Name"]})
    return sorted(found, key=lambda t: t["name"])


def _emails(context: Context) -> list[dict[str, str]]:
    prefix = _email_name(context, "")
    ses = context.target.client("ses")
    found, token = [], None
    while True:
        page = ses.list_templates(**({"NextToken": token} if token else {}))
        for template in page.get("TemplatesMetadata", []):
            full = str(template["Name"])
            if full.startswith(prefix):
                found.append({"name": full.removeprefix(prefix), "where": f"SES {full}"})
        token = page.get("NextToken")
        if not token:
            return sorted(found, key=lambda t: t["name"])


@templates.command(name="show")
@click.argument("kind", type=click.Choice(KINDS, case_sensitive=False))
@click.argument("name")
@json_option
@pass_context
def show_(context: Context, kind: str, name: str, as_json: bool) -> None:
    """The template NAME as stored (its placeholders unfilled)."""
    show.echo_result(_stored(context, kind.lower(), guard(lambda: _check_name(name))), as_json)


def _stored(context: Context, kind: str, name: str) -> dict[str, Any]:
    if kind == "email":
        ses = context.target.client("ses")
        full = _email_name(context, name)
        try:
            template = ses.get_template(TemplateName=full)["Template"]
        except ses.exceptions.TemplateDoesNotExistException:
            raise click.ClickException(
                f"no e-mail template {name} (SES {full}): create it with "
                + put_command("email", name)
            ) from None
        return {
            "kind": kind,
            "name": name,
            "where": f"SES {full}",
            "subject": template.get("SubjectPart"),
            "text": template.get("TextPart"),
            **({"html": template["HtmlPart"]} if template.get("HtmlPart") else {}),
            "fields": _stored_fields(
                template.get("SubjectPart"),
                template.get("TextPart"),
                template.get("HtmlPart"),
                handlebars=True,
            ),
        }
    ssm = context.target.client("ssm")
    parameter = f"{_text_path(context)}{name}"
    try:
        value = ssm.get_parameter(Name=parameter)["Parameter"]["Value"]
    except ssm.exceptions.ParameterNotFound:
        raise click.ClickException(
            f"no {kind} text {name} (SSM {parameter}): create it with " + put_command(kind, name)
        ) from None
    return {
        "kind": kind,
        "name": name,
        "where": f"SSM {parameter}",
        "text": value,
        "fields": _stored_fields(value),
    }


def _stored_fields(*parts: str | None, handlebars: bool = False) -> list[str] | str:
    """The placeholders of a stored template, or what makes it unfillable (one put by hand)."""
    try:
        return sorted(fields_of(*parts, handlebars=handlebars))
    except TemplateSyntaxProblem as problem:
        return f"cannot be filled: {problem}"


@templates.command(name="render")
@click.argument("kind", type=click.Choice(KINDS, case_sensitive=False))
@click.argument("name")
@click.option("--data", help="JSON object of the fields to fill (default: sample values).")
@json_option
@pass_context
def render_(context: Context, kind: str, name: str, data: str | None, as_json: bool) -> None:
    """What a fire of this template would send, with sample data or --data."""
    kind = kind.lower()
    guard(lambda: _check_name(name))
    fields = sample_data(kind, name)
    if data:
        try:
            given = json.loads(data)
        except ValueError as error:
            raise click.BadParameter(f"is not JSON ({error})", param_hint="--data") from None
        if not isinstance(given, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--data")
        fields.update({k: _text(v) for k, v in given.items()})
    show.echo_result(rendered(context, kind, name, fields), as_json)


def _text(value: Any) -> str:
    """A data value as a placeholder shows it (as the fire does: JSON for numbers)."""
    return value if isinstance(value, str) else json.dumps(value)


def rendered(context: Context, kind: str, name: str, fields: dict[str, str]) -> dict[str, Any]:
    """The template filled with ``fields``, as a fire would send it. A placeholder ``fields``
    lacks is shown as ``<name>`` and listed under ``sampled``: a fire with data lacking it is
    refused, never sent with a blank."""
    stored = _stored(context, kind, name)
    if isinstance(stored["fields"], str):
        raise click.ClickException(f"the template {name} {stored['fields']}")
    sampled = [f for f in stored["fields"] if f not in fields]
    fields = {**fields, **{f: f"<{f}>" for f in sampled}}
    extra = {"sampled": sampled} if sampled else {}
    if kind != "email":
        return {"kind": kind, "name": name, "text": render(stored["text"], fields), **extra}
    ses = context.target.client("ses")
    parts = render_email(ses, _email_name(context, name), json.dumps(fields))
    return {"kind": kind, "name": name, **parts, **extra}


@templates.command()
@click.argument("kind", type=click.Choice(KINDS, case_sensitive=False))
@click.argument("name")
@json_option
@pass_context
def delete(context: Context, kind: str, name: str, as_json: bool) -> None:
    """Delete the template NAME: fires that use it fail until it is put again."""
    kind = kind.lower()
    where = _stored(context, kind, guard(lambda: _check_name(name)))["where"]
    if kind == "email":
        context.target.client("ses").delete_template(TemplateName=_email_name(context, name))
    else:
        context.target.client("ssm").delete_parameter(Name=f"{_text_path(context)}{name}")
    show.echo_result({"deleted": kind, "name": name, "where": where}, as_json)
