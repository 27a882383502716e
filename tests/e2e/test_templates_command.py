"""GIVEN `tickwork local` running WHEN notification templates are put, listed, shown, rendered and
deleted with `tickwork templates` THEN they round-trip through the stack's own stores (SSM
texts, SES templates) and render as a fire would send them; a fire of a missing one fails
saying the exact command that creates it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tickwork_local.process import LocalProcess

SMS = "USER_LATE_PAYMENT_NOTIFICATION"


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    process = LocalProcess(
        Path(tmp_path_factory.mktemp("templates")) / "state", cli_in_process=True
    )
    process.start()
    yield process
    process.stop()


def test_texts_and_emails_round_trip_and_render(local: LocalProcess) -> None:
    text = "Hi {{name}}, your payment is late. Reply STOP to opt out."
    put = local.cli_json("templates", "put", "sms", SMS, "--text", text)
    assert put["where"] == f"SSM parameter /tickwork/templates/{SMS}"
    local.cli_json(
        "templates",
        "put",
        "email",
        "ORDER_READY",
        "--subject",
        "Order ready for {{name}}",
        "--text",
        "Hello {{name}}, your order is ready.",
        "--html",
        "<p>Hello {{name}}</p>",
    )

    listed = local.cli_json("templates", "list")
    assert [(t["kind"], t["name"]) for t in listed] == [
        ("sms/push", SMS),
        ("email", "ORDER_READY"),
    ]
    assert [t["name"] for t in local.cli_json("templates", "list", "--kind", "email")] == [
        "ORDER_READY"
    ]
    assert [t["name"] for t in local.cli_json("templates", "list", "--kind", "push")] == [SMS]
    assert local.cli_json("templates", "show", "sms", SMS)["text"] == text
    shown = local.cli_json("templates", "show", "email", "ORDER_READY")
    assert shown["subject"] == "Order ready for {{name}}"
    assert shown["html"] == "<p>Hello {{name}}</p>"

    rendered = local.cli_json("templates", "render", "sms", SMS, "--data", '{"name": "Joojo"}')
    assert rendered["text"] == "Hi Joojo, your payment is late. Reply STOP to opt out."
    sample = local.cli_json("templates", "render", "push", SMS)  # push shares the text
    assert sample["text"].startswith("Hi Ada,")
    mail = local.cli_json("templates", "render", "email", "ORDER_READY", "--data", '{"name": "Bo"}')
    assert mail["subject"] == "Order ready for Bo"
    assert mail["text"] == "Hello Bo, your order is ready."

    # a put replaces: the new text is what shows and renders
    local.cli_json("templates", "put", "sms", SMS, "--text", "Late: {{name}}")
    assert local.cli_json("templates", "render", "sms", SMS)["text"] == "Late: Ada"

    # and a delete takes it away
    local.cli_json("templates", "delete", "email", "ORDER_READY")
    assert [t["name"] for t in local.cli_json("templates", "list")] == [SMS]


def test_bad_names_and_missing_templates_are_refused_with_the_fix(local: LocalProcess) -> None:
    bad = local.cli("templates", "put", "sms", "lower-case", "--text", "x", check=False)
    assert bad.returncode != 0 and "UPPER_SNAKE_CASE" in bad.stderr
    missing = local.cli("templates", "show", "sms", "NO_SUCH_TEXT", check=False)
    assert missing.returncode != 0
    assert 'tickwork templates put sms NO_SUCH_TEXT --text "Hello {{name}}, ..."' in missing.stderr
    no_subject = local.cli("templates", "put", "email", "X_MAIL", "--text", "x", check=False)
    assert no_subject.returncode != 0 and "--subject" in no_subject.stderr


@pytest.mark.parametrize(
    ("option", "text", "shown"),
    [
        ("--text", "Hi {{name", "'{{' at character 4 has no '}}'"),
        ("--text", "Hi {{#if late}}late{{/if}}", "blocks"),
        ("--html", "<p>Hi {{name</p>", "'{{' at character 7 has no '}}'"),
    ],
)
def test_a_template_a_fire_could_not_fill_is_refused_and_nothing_written(
    local: LocalProcess, option: str, text: str, shown: str
) -> None:
    kind, args = ("sms", []) if option == "--text" else ("email", ["--text", "Hello"])
    put = local.cli("templates", "put", kind, "BROKEN", option, text, *args, check=False)
    assert put.returncode == 2, put
    assert option in put.stderr and shown in put.stderr
    assert "BROKEN" not in [t["name"] for t in local.cli_json("templates", "list")]


def test_an_email_is_ses_handlebars_its_blocks_and_css_taken(local: LocalProcess) -> None:
    put = local.cli_json(
        "templates", "put", "email", "RECEIPT",
        "--subject", "Receipt {{orderNumber}}",
        "--text", "{{#if late}}Late: {{/if}}you paid {{amount}} {{formatDate paidAt}}",
        "--html", "<style>@media print{.a{color:red}}</style><p>{{{receiptHtml}}}</p>",
    )  # fmt: skip
    assert put["fields"] == ["amount", "orderNumber", "paidAt", "receiptHtml"]


def test_a_put_and_a_show_list_the_fields_a_start_must_give(local: LocalProcess) -> None:
    text = "Hi {{name}}, {{ amount }} was due on {{dueDate}}: {{link}}"
    put = local.cli_json("templates", "put", "sms", "INVOICE_DUE", "--text", text)
    assert put["fields"] == ["amount", "dueDate", "link", "name"]
    assert local.cli_json("templates", "show", "sms", "INVOICE_DUE")["fields"] == put["fields"]
    sample = local.cli_json(
        "templates", "render", "sms", "INVOICE_DUE", "--data", '{"amount": 12.5}'
    )
    assert sample["sampled"] == ["dueDate", "link"]  # shown, never sent, as <name>
    assert sample["text"] == "Hi Ada, 12.5 was due on <dueDate>: <link>"


def test_the_seeds_sms_example_fires_and_its_rendered_text_is_in_the_outbox(
    local: LocalProcess,
) -> None:
    """Published exactly as the seed writes it (no id, daily from a past executionTime), fired
    now by hand: `tickwork outbox` shows the SMS as sent, with the fire that sent it."""
    local.cli_json("templates", "put", "sms", SMS, "--text", "Hi {{name}}, your payment is late.")
    sent = local.cli_json("send", "events/demo/seed-sms.json")
    action_id = f"evt-{sent['eventId']}"
    deadline = time.monotonic() + 30
    while local.cli("show", action_id, check=False).returncode != 0:
        assert time.monotonic() < deadline, "the seed's Start was never scheduled"
        time.sleep(0.2)
    local.cli_json("run-now", action_id)

    texts: list[dict[str, Any]] = []
    while not texts:
        assert time.monotonic() < deadline, "no SMS in the outbox"
        time.sleep(0.2)
        texts = local.cli_json("outbox", "--kind", "sms", "--id", action_id)
    (sms,) = texts
    assert (sms["to"], sms["body"]) == ("+60123456789", "Hi Joojo, your payment is late.")
    assert sms["fire"]["id"] == action_id
    whole = local.cli_json("outbox", "--read", str(sms["number"]))
    assert whole["body"] == sms["body"]
    listed = local.cli("outbox").stdout
    assert f"(fire {action_id} #0)" in listed and "sms" in listed
