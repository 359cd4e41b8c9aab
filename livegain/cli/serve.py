"""`livegain serve`: run the live service (feeds, engine, WebSocket, MQTT, store)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import Any

from livegain.cli.errors import CliError
from livegain.cli.options import add_loop_option
from livegain.cli.running import run_async, stopped


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "serve",
        help="run the live service: feeds -> engine -> WebSocket/MQTT overlays",
        description="Run the live service. Settings come from the TOML file, then "
        "LIVEGAIN_* environment variables (e.g. LIVEGAIN_SERVER__PORT=9000), then flags.",
    )
    p.add_argument("--config", metavar="PATH", help="TOML configuration (config/livegain.toml)")
    p.add_argument("--host", help="address to listen on (overrides server.host)")
    p.add_argument("--port", type=int, help="port for HTTP and WebSocket (overrides server.port)")
    p.add_argument("--data-dir", help="where the SQLite store lives (overrides data_dir)")
    p.add_argument(
        "--fresh-store",
        action="store_true",
        help="if the store file is damaged or not a livegain store, rename it beside "
        "(NAME.damaged-<time>) and start with an empty one (a store that cannot be "
        "read or written now, e.g. on a full disk, is never renamed)",
    )
    add_loop_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from livegain.config import load_settings

    overrides: dict[str, Any] = {}
    server: dict[str, Any] = {}
    if args.host is not None:
        server["host"] = args.host
    if args.port is not None:
        server["port"] = args.port
    if server:
        overrides["server"] = server
    if args.data_dir is not None:
        overrides["data_dir"] = args.data_dir
    settings = load_settings(args.config, **overrides)
    return run_service(settings, fresh_store=args.fresh_store, loop=args.loop)


def check_store(settings: Any, fresh: bool) -> None:
    """Open the store once before anything starts: a file that is not a
    livegain store is a one-line error, or with ``fresh`` is renamed beside and
    replaced by an empty store; a store that cannot be read or written now
    (disk full, I/O error, permissions) is a one-line error in any case, and is
    never renamed."""
    from pathlib import Path

    import structlog

    from livegain.app.service import STORE_FILE
    from livegain.app.store import NotAStore, Store, set_aside

    if not settings.persist:
        return
    path = Path(settings.data_dir) / STORE_FILE
    if not path.exists():
        return
    try:
        Store(path).close()
    except NotAStore as exc:
        if not fresh:
            raise
        try:
            moved = set_aside(path)
        except OSError as err:
            raise CliError(f"{path}: cannot rename the damaged store: {err}") from None
        structlog.get_logger("livegain.serve").warning(
            "store_set_aside",
            store=str(path),
            moved_to=str(moved),
            why=str(exc),
            now="starting with an empty store",
        )


def run_service(
    settings: Any,
    feeds: list[Any] | None = None,
    banner: str = "",
    *,
    fresh_store: bool = False,
    loop: str | None = None,
) -> int:
    """Run a :class:`~livegain.app.service.Service` until SIGINT/SIGTERM; print its URL.

    A damaged store is a one-line error (exit 2); with ``fresh_store`` it is
    renamed beside and the service starts with an empty one."""
    from livegain.app.logs import configure_logging
    from livegain.app.service import Service

    configure_logging(settings.log.level, settings.log.json_format)
    check_store(settings, fresh_store)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        service = Service(settings, feeds=feeds or [])
        task = asyncio.create_task(service.run(stop))
        ready = asyncio.create_task(service.ready.wait())
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if service.ready.is_set():
            print(f"{banner}livegain is live at {service.url}", flush=True)
            print(f"  WebSocket: ws{service.url[4:]}ws   health: {service.url}healthz", flush=True)
            print(f"  perceived ratings: {service.perceived_model_line()}", flush=True)
            print(f"  win/draw/loss: {service.wdl_model_line()}", flush=True)
            print("  Ctrl-C to stop", flush=True)
        ready.cancel()
        await task

    try:
        run_async(main(), loop)
    except OSError as exc:
        raise CliError(f"cannot start the server: {exc}") from None
    return stopped("serve")
