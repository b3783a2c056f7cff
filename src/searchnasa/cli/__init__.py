"""The ``searchnasa`` command: one entry point, a subcommand per job.

Each group of commands lives in its own module and registers itself on :data:`app`; this module
only wires them together and turns product errors into one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import sys

from ..errors import SearchNasaError
from .app import app
from . import store_cmds  # noqa: F401  (registers commands)

for _optional in ("search_cmds", "web_cmds", "harvest_cmds", "semantic_cmds", "ops_cmds"):
    try:
        __import__(f"{__name__}.{_optional}")
    except ModuleNotFoundError as _exc:  # a command group not built yet
        if _exc.name != f"{__name__}.{_optional}":
            raise


def main() -> None:
    """Console entry point."""
    try:
        app()
    except SearchNasaError as exc:
        from .app import err_console

        err_console.print(f"[red]error:[/red] {exc.message}", highlight=False, soft_wrap=True)
        sys.exit(2)
