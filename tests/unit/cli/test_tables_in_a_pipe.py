"""CLI tables in a pipe or a file (a CI log): every value whole, never cut to 80 columns; on a
terminal (or with COLUMNS) the width given."""

from __future__ import annotations

from tickwork_cli import render

_ROW = {
    "id": "sub:customer-000042:downgrade-to-basic-plan-at-period-end",
    "action": "HTTP_REQUEST",
    "status": "PENDING",
    "executionTime": "2026-12-31T23:59:59.999Z",
    "occurrence": 1,
    "executionRemainder": 1,
    "schedule": "once at 2026-12-31T23:59:59.999Z",
}


def test_a_table_in_a_pipe_keeps_every_value_whole(capsys, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)

    render.actions_table([_ROW], as_json=False)

    shown = capsys.readouterr().out
    for value in (_ROW["id"], "HTTP_REQUEST", _ROW["schedule"]):
        assert value in shown
    assert "…" not in shown


def test_columns_still_sets_the_width_when_given(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "60")

    render.actions_table([_ROW], as_json=False)

    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 60


def test_tsv_prints_a_header_and_a_row_a_line_in_plain_text(capsys) -> None:
    render.use_tsv()
    try:
        render.actions_table([_ROW, {**_ROW, "id": "b", "status": "FAILED"}], as_json=False)
    finally:
        render.use_tsv(False)

    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t")[:3] == ["id", "action", "status"]
    assert [line.split("\t")[0] for line in lines[1:]] == [_ROW["id"], "b"]
    assert lines[2].split("\t")[2] == "FAILED"  # the status's colour markup left out
    assert all(line.count("\t") == 6 for line in lines)


def test_list_help_documents_json_and_tsv() -> None:
    from click.testing import CliRunner

    from tickwork_cli.main import cli

    for command in ("list", "stats", "next"):
        shown = CliRunner().invoke(cli, [command, "--help"]).output
        assert "--json" in shown and "--tsv" in shown and "tab-separated" in shown
