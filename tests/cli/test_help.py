"""Command help texts are complete: every command and option says what it does, paths name their kind."""
import click
import pytest

from hlsgen.cli import cli
from tests.cli.test_errors import run_cli


@pytest.mark.parametrize("name", sorted(cli.commands))
def test_every_option_is_documented(name, capsys):
    command = cli.commands[name]
    assert command.help and command.get_short_help_str()
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help, f"hlsgen {name} {param.opts[0]} has no help text"
    code, out, _ = run_cli(capsys, name, "--help")
    assert code == 0 and "TEXT" not in out  # options that take paths or lists name what they expect
