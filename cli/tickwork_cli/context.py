"""What every command shares: the stack it talks to, --json, and refusals as clean errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import click

from tickwork.domain.errors import TickworkError, ValidationFailed
from tickwork_cli.target import Target, TargetNotFound

__all__ = ["DEFAULT_STATE_DIR", "Context", "guard", "json_option", "pass_context"]

DEFAULT_STATE_DIR = Path(".tickwork")


class Context:
    def __init__(self, stack: str | None, region: str | None, state_dir: Path) -> None:
        self.stack = stack
        self.region = region
        self.state_dir = state_dir
        self._target: Target | None = None

    @property
    def target(self) -> Target:
        if self._target is None:
            try:
                self._target = (
                    Target.deployed(self.stack, self.region)
                    if self.stack
                    else Target.local(self.state_dir)
                )
            except TargetNotFound as missing:
                raise click.ClickException(str(missing)) from missing
        return self._target


pass_context = click.make_pass_decorator(Context)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


def _tsv(context: click.Context, parameter: click.Parameter, on: bool) -> None:
    from tickwork_cli import render

    render.use_tsv(on)


tsv_option = click.option(
    "--tsv",
    is_flag=True,
    expose_value=False,
    callback=_tsv,
    help="Print tables tab-separated (a header line, then a row a line) for cut, awk and sort. "
    "In a pipe or a file the drawn tables keep every value whole too; --json for scripts.",
)


def flag_named(field: str, flags: Mapping[str, str] | None) -> str:
    """``field`` as the user typed it: its flag (``data.url`` is ``--data (url)``), else
    itself."""
    if not flags:
        return field
    top, dot, rest = field.partition(".")
    flag = flags.get(top)
    if flag is None:
        return field
    return f"{flag} ({rest})" if dot else flag


def problem_lines(
    problems: Iterable[Mapping[str, str]], flags: Mapping[str, str] | None = None
) -> str:
    """A refusal's problems (``field``, ``problem``, ``fix``), a line each, naming the flag that
    set each field where there is one."""
    return "\n".join(
        f"  {flag_named(p['field'], flags)}: {p['problem']}. Fix: {p['fix']}" for p in problems
    )


def guard[T](call: Callable[[], T], flags: Mapping[str, str] | None = None) -> T:
    """Domain refusals become a clean error naming the field and the fix (exit 1); ``flags``:
    the flag that set each field, named instead (``delay`` is ``--in``)."""
    try:
        return call()
    except ValidationFailed as refused:
        raise click.ClickException(
            "refused:\n" + problem_lines([p.as_dict() for p in refused.problems], flags)
        ) from refused
    except (TickworkError, ValueError) as error:
        raise click.ClickException(str(error)) from error
