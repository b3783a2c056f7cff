"""The ``searchnasa`` command: one entry point, a subcommand per job.

Each group of commands lives in the module named after it and registers itself on :data:`app`;
a command parses its options, calls one library function and renders the result. This module only
wires the groups together, lists the commands in the order ``--help`` shows them, and turns
product errors into one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import sys

from typer.models import CommandInfo

from searchnasa.cli import dedup, eval, harvest, index, ingest, search, semantic, serve, store, update  # noqa: F401  (register commands)
from searchnasa.cli.app import app, err_console
from searchnasa.errors import SearchNasaError

# the order of `searchnasa --help`: the write path first, then build, serve, query and batch jobs
COMMAND_ORDER = ("import", "stats", "export", "renormalize", "load-sample", "index", "search", "serve",
                 "harvest", "update", "embed", "related", "eval", "dedup", "cite")


def _command_name(info: CommandInfo) -> str:
    return info.name or info.callback.__name__.replace("_", "-")


app.registered_commands.sort(key=lambda info: COMMAND_ORDER.index(_command_name(info)))


def main() -> None:
    """Console entry point."""
    try:
        app()
    except SearchNasaError as exc:
        err_console.print(f"[red]error:[/red] {exc.message}", highlight=False, soft_wrap=True)
        sys.exit(2)
