"""The ``{{field}}`` placeholders of a notification's template: read when the template is put
(its syntax checked), compared with an action's data when the action is created, and filled when
a fire sends — a field missing from the data is an error, never a blank.

SMS and push texts, which tickwork fills itself, take a deliberately small syntax: ``{{name}}``
(spaces inside the braces allowed), where ``name`` starts with a letter or ``_`` and holds up to
64 letters, digits and ``_``. Anything else between ``{{`` and ``}}`` (handlebars blocks,
helpers, triple braces, dotted paths) and any ``{{`` or ``}}`` without its partner is refused,
so a text never sends its own syntax to a customer.

E-mails are filled by SES, whose templates are Handlebars: with ``handlebars=True`` a
``{{name}}`` or ``{{{name}}}`` is a field the data must give, blocks, helpers and paths
(``{{#if late}}``, ``{{formatDate due}}``, ``{{customer.name}}``) are left to SES, a ``}}`` alone
is text (CSS in an HTML body), and only a ``{{`` never closed is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["MissingFields", "TemplateSyntaxProblem", "fill", "placeholders"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
MOST_NAME_CHARS = 64  # as a data field's name (NotificationData)
_TAG = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_HANDLEBARS_TAG = re.compile(r"\{\{\{(.*?)\}\}\}|\{\{(.*?)\}\}", re.DOTALL)
_FIELD = re.compile(rf"\s*({_NAME})\s*")
_SHOWN = 40


class TemplateSyntaxProblem(ValueError):
    """A template's text that a fire could not fill: ``problem`` and ``fix`` say what to change."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}: {fix}")
        self.problem = problem
        self.fix = fix


class MissingFields(KeyError):
    """Placeholders of a template that the data does not give (sorted, without braces)."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(", ".join(names))
        self.names = names


def placeholders(text: str, *, handlebars: bool = False) -> frozenset[str]:
    """The field names ``text`` uses, or ``TemplateSyntaxProblem`` naming what is not a field
    (with ``handlebars``, an SES template's: only an unclosed ``{{``)."""
    if handlebars:
        return _handlebars_fields(text)
    names: set[str] = set()
    position = 0
    for tag in _TAG.finditer(text):
        _no_stray_braces(text[position : tag.start()], text, position)
        inside = tag[1]
        if "{{" in inside.lstrip("{"):
            _no_stray_braces(tag[0][:-2], text, tag.start())
        field = _FIELD.fullmatch(inside)
        if field is None:
            raise _unknown(tag[0], inside)
        if text[tag.end() : tag.end() + 1] == "}":
            raise _unknown(tag[0] + "}", "{" + inside)
        if len(field[1]) > MOST_NAME_CHARS:
            raise TemplateSyntaxProblem(
                f"{field[1][:20]!r}... is {len(field[1])} characters",
                f"name a placeholder with at most {MOST_NAME_CHARS}, as a data field is named",
            )
        names.add(field[1])
        position = tag.end()
    _no_stray_braces(text[position:], text, position)
    return frozenset(names)


def _handlebars_fields(text: str) -> frozenset[str]:
    names: set[str] = set()
    position = 0
    for tag in _HANDLEBARS_TAG.finditer(text):
        if "{{" in text[position : tag.start()]:
            _unclosed(text, position + text[position : tag.start()].index("{{"))
        names |= _expression_fields(tag[1] if tag[1] is not None else tag[2], tag[0])
        position = tag.end()
    if "{{" in text[position:]:
        _unclosed(text, position + text[position:].index("{{"))
    return frozenset(names)


_SKIPPED = ("#", "/", "^", "!", ">", "else")  # blocks, their ends, comments, partials
_SCOPES = re.compile(r"^(?:@root\.|this\.|\./|\.\./)+")
_NOT_FIELDS = {"this", "else", "@index", "@key", "@first", "@last", "true", "false", "null"}


def _expression_fields(inside: str, tag: str) -> set[str]:
    """The data fields a Handlebars mustache reads: its name, or a helper's plain arguments
    (``{{formatDate due}}`` reads ``due``), whitespace control (``~``), ``&``, ``this.``,
    ``./``, ``../``, ``@root.`` and ``[name]`` taken off. A block's condition is optional
    (``{{#if late}}``); a path into an object can never be filled (the data is flat): refused."""
    expression = inside.strip().strip("~").strip().removeprefix("&").strip()
    if not expression or expression.startswith(_SKIPPED):
        return set()
    words = expression.split()
    arguments = words[1:] if len(words) > 1 else words
    fields: set[str] = set()
    for word in arguments:
        if "=" in word or word[:1] in "\"'0123456789-(" or word in _NOT_FIELDS:
            continue  # a hash argument, a literal, a subexpression: not a field
        name = _SCOPES.sub("", word).removeprefix("[").removesuffix("]")
        if name in _NOT_FIELDS or name.startswith("@"):
            continue
        if not re.fullmatch(_NAME, name):
            raise TemplateSyntaxProblem(
                f"{tag[:_SHOWN]!r} reads {word!r}, which the action's data cannot hold",
                "use a top-level field of the action's data, e.g. {{customerName}}",
            )
        if len(name) > MOST_NAME_CHARS:
            raise TemplateSyntaxProblem(
                f"{name[:20]!r}... is {len(name)} characters",
                f"name a placeholder with at most {MOST_NAME_CHARS}, as a data field is named",
            )
        fields.add(name)
    return fields


def _unclosed(text: str, where: int) -> None:
    raise TemplateSyntaxProblem(
        f"'{{{{' at character {where + 1} has no '}}}}' ({_excerpt(text, where)!r})",
        "close each placeholder as {{name}}",
    )


def fill(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each placeholder replaced by its value; ``MissingFields`` when the values
    lack any of them (nothing is filled with a blank), ``TemplateSyntaxProblem`` as
    ``placeholders`` says."""
    missing = sorted(placeholders(text) - values.keys())
    if missing:
        raise MissingFields(missing)
    return _TAG.sub(lambda tag: values[tag[1].strip()], text)


def _no_stray_braces(between: str, text: str, offset: int) -> None:
    for brace, partner in (("{{", "}}"), ("}}", "{{")):
        at = between.find(brace)
        if at >= 0:
            where = offset + at
            raise TemplateSyntaxProblem(
                f"{brace!r} at character {where + 1} has no {partner!r} "
                f"({_excerpt(text, where)!r})",
                "close each placeholder as {{name}}",
            )


def _unknown(tag: str, inside: str) -> TemplateSyntaxProblem:
    shown = tag if len(tag) <= _SHOWN else tag[: _SHOWN - 3] + "..."
    if inside.startswith("{"):
        fix = "use {{name}}: values are sent as they are, triple braces are not needed"
    elif inside.strip().startswith(("#", "/", "^", "!", ">", "else")):
        fix = (
            "blocks, comments and partials are not supported: use only {{name}} placeholders "
            "(a template per case, chosen by templateType)"
        )
    elif "." in inside or "[" in inside:
        fix = "use a top-level field of the action's data, e.g. {{customerName}}"
    else:
        fix = "a placeholder is {{name}}: letters, digits and _ only, starting with a letter"
    return TemplateSyntaxProblem(f"{shown!r} is not a placeholder", fix)


def _excerpt(text: str, at: int) -> str:
    return text[max(0, at - 10) : at + 12]
