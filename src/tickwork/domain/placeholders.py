"""The ``{{field}}`` placeholders of a notification's template: read when the template is put
(its syntax checked), compared with an action's data when the action is created, and filled when
a fire sends — a field missing from the data is an error, never a blank.

The syntax is deliberately small, the same for SMS and push texts and e-mail subjects and bodies:
``{{name}}`` (spaces inside the braces allowed), where ``name`` starts with a letter or ``_`` and
holds letters, digits and ``_``. Anything else between ``{{`` and ``}}`` (handlebars blocks,
helpers, triple braces, dotted paths) and any ``{{`` or ``}}`` without its partner is refused,
so a template never sends its own syntax to a customer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["MissingFields", "TemplateSyntaxProblem", "fill", "placeholders"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_TAG = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
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


def placeholders(text: str) -> frozenset[str]:
    """The field names ``text`` uses, or ``TemplateSyntaxProblem`` naming what is not a field."""
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
        names.add(field[1])
        position = tag.end()
    _no_stray_braces(text[position:], text, position)
    return frozenset(names)


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
