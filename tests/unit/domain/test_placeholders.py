"""GIVEN any template text made of literal text and {{field}} placeholders WHEN it is read and
filled THEN its placeholders are exactly the fields it names, a fill with every field leaves no
brace behind, a fill lacking any field names exactly the missing ones and returns nothing, and
any unclosed or unknown syntax is refused — never sent as it is."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickwork.domain.placeholders import MissingFields, TemplateSyntaxProblem, fill, placeholders

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
# Literal text: anything but the two-brace sequences (single braces are literal).
LITERAL = st.text(max_size=12).filter(lambda t: "{{" not in t and "}}" not in t)
SPACES = st.sampled_from(["", " ", "  "])


@st.composite
def templates(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A text and the names in it, in order (repeats allowed)."""
    parts, names = [], []
    for _ in range(draw(st.integers(0, 6))):
        name = draw(NAMES)
        parts.append(draw(LITERAL))
        parts.append(f"{{{{{draw(SPACES)}{name}{draw(SPACES)}}}}}")
        names.append(name)
    parts.append(draw(LITERAL))
    text = "".join(parts)
    # Literal pieces ending or starting in a brace can join a placeholder's braces: keep those
    # out, as the grammar reads "{{{x}}" as triple braces.
    if "{{{" in text or "}}}" in text:
        text, names = "".join(p for p in parts if p.startswith("{{")), names
    return text, names


@given(templates())
def test_the_placeholders_are_exactly_the_fields_named(drawn: tuple[str, list[str]]) -> None:
    text, names = drawn
    assert placeholders(text) == frozenset(names)


@given(templates(), st.data())
def test_a_fill_with_every_field_leaves_no_placeholder(
    drawn: tuple[str, list[str]], data: st.DataObject
) -> None:
    text, names = drawn
    values = {
        name: data.draw(LITERAL.filter(lambda v: "{" not in v and "}" not in v)) for name in names
    }
    filled = fill(text, values)
    assert "{{" not in filled and "}}" not in filled
    assert all(value in filled for value in values.values())


@given(templates(), st.data())
def test_a_fill_lacking_fields_names_exactly_those_and_returns_nothing(
    drawn: tuple[str, list[str]], data: st.DataObject
) -> None:
    text, names = drawn
    given_names = data.draw(st.sets(st.sampled_from(names))) if names else set()
    missing = sorted(set(names) - given_names)
    values = dict.fromkeys(given_names, "x")
    if not missing:
        assert "{{" not in fill(text, values)
        return
    with pytest.raises(MissingFields) as caught:
        fill(text, values)
    assert caught.value.names == missing


@given(templates(), st.data(), st.sampled_from(["{{", "}}"]))
def test_a_brace_pair_without_its_partner_is_refused(
    drawn: tuple[str, list[str]], data: st.DataObject, stray: str
) -> None:
    text, _ = drawn
    # Put the stray pair between two placeholders (or at either end), never inside one.
    cuts = [0, len(text)] + [i for i in range(len(text)) if text.startswith("{{", i)]
    at = data.draw(st.sampled_from(cuts))
    broken = text[:at] + stray + " " + text[at:]
    with pytest.raises(TemplateSyntaxProblem) as caught:
        placeholders(broken)
    assert caught.value.fix  # says how to close it


@pytest.mark.parametrize(
    ("text", "in_fix"),
    [
        ("{{#if amount}}pay{{/if}}", "blocks"),
        ("{{{amount}}}", "triple braces"),
        ("{{customer.name}}", "top-level field"),
        ("{{ 1st }}", "starting with a letter"),
        ("{{}}", "starting with a letter"),
        ("Hi {{name", "close each placeholder"),
        ("Hi name}}", "close each placeholder"),
    ],
)
def test_unknown_syntax_is_refused_saying_what_a_placeholder_is(text: str, in_fix: str) -> None:
    with pytest.raises(TemplateSyntaxProblem) as caught:
        placeholders(text)
    assert in_fix in caught.value.fix


def test_single_braces_are_literal_text() -> None:
    assert fill("{json} {{ name }}!", {"name": "Cy"}) == "{json} Cy!"


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("{{#if late}}Late: {{/if}}you paid {{amount}}", {"amount"}),
        ("{{{receiptHtml}}} {{ name }}", {"receiptHtml", "name"}),
        ("{{formatDate paidAt}} {{else}} {{this}} {{@index}} {{! note }}", {"paidAt"}),
        (
            "{{~name~}} {{& title}} {{this.a}} {{./b}} {{../c}} {{@root.d}} {{[e]}}",
            set("abcde") | {"name", "title"},
        ),
        ("<style>@media print{.a{color:red}}</style>{{x}}", {"x"}),
    ],
)
def test_an_email_is_handlebars_its_plain_fields_required_the_rest_left_to_ses(
    text: str, fields: set[str]
) -> None:
    assert placeholders(text, handlebars=True) == fields


@given(templates())
def test_an_email_reads_a_plain_template_as_a_text_does(drawn: tuple[str, list[str]]) -> None:
    text, names = drawn
    assert placeholders(text, handlebars=True) == frozenset(names)


@pytest.mark.parametrize("text", ["{{customer.name}}", "{{" + "n" * 65 + "}}"])
def test_an_email_field_the_flat_data_can_never_hold_is_refused(text: str) -> None:
    with pytest.raises(TemplateSyntaxProblem):
        placeholders(text, handlebars=True)


def test_a_text_with_a_brace_after_its_placeholder_is_refused() -> None:
    with pytest.raises(TemplateSyntaxProblem):
        placeholders("Hi {{name}}}")


def test_an_email_with_an_unclosed_brace_pair_is_refused() -> None:
    with pytest.raises(TemplateSyntaxProblem, match="has no"):
        placeholders("<p>Hi {{name</p>", handlebars=True)


def test_a_placeholder_longer_than_a_data_field_name_is_refused() -> None:
    with pytest.raises(TemplateSyntaxProblem, match="at most 64"):
        placeholders("{{" + "n" * 65 + "}}")
