"""``searchnasa serve``: the web pages and JSON API under uvicorn."""

from __future__ import annotations

import logging.config
from pathlib import Path
from typing import Any, Optional

import typer

from searchnasa.cli.app import HomeOption, app, err_console, settings_for
from searchnasa.errors import BadInput
from searchnasa.settings import Settings, export_variable

MAX_REQUEST_HEAD_BYTES = 1_048_576
KEEP_ALIVE_SECONDS = 75


def log_config(level: str) -> dict[str, Any]:
    """One line per event on stderr (the access lines are JSON with a request id).

    Given to uvicorn as a dict so that every worker process configures itself the same way.
    """
    level = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"line": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "line",
                                "stream": "ext://sys.stderr"}},
        "loggers": {
            "searchnasa": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
        },
    }


def _nodelay_shared_socket() -> None:
    """Give ``--workers N`` servers TCP_NODELAY, as a single-worker server has.

    With several workers uvicorn binds the shared socket as ``socket.socket(family)`` (proto 0),
    and asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, so Nagle's algorithm
    met the client's delayed ACK and held every small response back by the delayed-ACK timeout.
    Accepted sockets inherit TCP_NODELAY from the listener on Linux, so it is set there.
    """
    import socket

    from uvicorn.config import Config

    original = Config.bind_socket
    if getattr(original, "_searchnasa_nodelay", False):
        return

    def bind_socket(self: Config) -> socket.socket:
        sock = original(self)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    bind_socket._searchnasa_nodelay = True  # type: ignore[attr-defined]
    Config.bind_socket = bind_socket  # type: ignore[method-assign]


def _check_home(settings: Settings) -> None:
    """Before any worker starts: say when there is no index yet, rebuild a corrupt one from the
    store, and warn when the disk's read-ahead would slow memory-mapped indexes."""
    if not settings.index_dir.exists():
        err_console.print(f"[yellow]warning:[/yellow] no index under {settings.home}; "
                          "run `searchnasa index` (pages answer 503 until then)", highlight=False)
        return
    from searchnasa.index.health import ensure_healthy_index
    from searchnasa.web.readahead import read_ahead_warning

    ensure_healthy_index(settings.home, settings.index_dir)
    warning = read_ahead_warning(settings.index_dir, settings.vectors_dir)
    if warning:
        err_console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    workers: int = typer.Option(1, "--workers", min=1, max=64,
                                help="Worker processes, each reading the same index."),
    log_level: str = typer.Option("info", "--log-level", help="debug, info, warning or error."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Serve the search pages and the JSON API (stops gracefully on Ctrl-C or SIGTERM)."""
    import uvicorn

    if log_level.lower() not in ("debug", "info", "warning", "error"):
        raise BadInput(f"unknown log level {log_level!r}")
    settings = settings_for(home)
    # Worker processes build their app from the environment, so pass the chosen home down.
    export_variable("HOME", str(settings.home))
    logging.config.dictConfig(log_config(log_level))
    _check_home(settings)
    err_console.print(f"serving {settings.home} on http://{host}:{port} ({workers} worker(s))",
                      highlight=False)
    _nodelay_shared_socket()
    uvicorn.run(
        "searchnasa.web.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        access_log=False,  # our middleware logs each request once, with its request id
        log_level=log_level.lower(),
        log_config=log_config(log_level),
        timeout_graceful_shutdown=30,
        # Longer than the idle timeout of common load balancers (60 s): the server never closes
        # a kept-alive connection just as the balancer (or a busy client) sends on it.
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        proxy_headers=False,
        server_header=False,
        # A request line past h11's 16 KiB default gets a bare text 400 from the protocol layer;
        # up to 1 MiB the app answers instead, with its JSON 422 saying the query limit.
        h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
    )
