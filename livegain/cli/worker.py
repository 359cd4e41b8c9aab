"""`livegain worker`: an engine pool taking evaluation jobs from an MQTT broker."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from livegain.cli.errors import CliError, about
from livegain.cli.options import processes
from livegain.cli.running import cancel_on_signals, stopped


def add_broker_options(
    p: argparse.ArgumentParser,
    url_required: bool,
    *,
    url_help: str = "mqtt://[user@]host[:1883] or mqtts://host[:8883]",
    prefix: str | None = "livegain/engine",
    prefix_help: str = "topic prefix (default livegain/engine)",
) -> None:
    """``--broker URL`` and its credentials/TLS options, and ``--prefix``
    (shared with ``analyze`` and ``gateway``)."""
    p.add_argument("--broker", required=url_required, default=None, metavar="URL", help=url_help)
    p.add_argument("--broker-user", default=None, metavar="USER", help="broker user name")
    p.add_argument(
        "--broker-password-env",
        default=None,
        metavar="VAR",
        help="environment variable holding the broker password (never on the command line)",
    )
    p.add_argument("--ca-file", default=None, help="mqtts: PEM CA bundle to verify the broker")
    p.add_argument("--cert-file", default=None, help="mqtts: client certificate (PEM)")
    p.add_argument("--key-file", default=None, help="mqtts: client key (PEM)")
    p.add_argument("--prefix", default=prefix, help=prefix_help)


def broker_from_args(args: argparse.Namespace) -> Any:
    from livegain.mqtt.address import parse_mqtt_url

    try:
        return parse_mqtt_url(
            args.broker,
            username=args.broker_user,
            password_env=args.broker_password_env,
            ca_file=args.ca_file,
            cert_file=args.cert_file,
            key_file=args.key_file,
        )
    except ValueError as exc:
        raise CliError(f"--broker: {exc}") from None


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "worker",
        help="evaluate positions for a service elsewhere: engine jobs from an MQTT broker",
        description="Run an engine pool that takes evaluation jobs from the broker "
        "(each job given to one worker by the service: protocol v2) and announces itself "
        "there. Start one per machine; the depth/nodes, Hash and engine must be those the "
        "service asks for (docs/workers.md).",
    )
    add_broker_options(p, url_required=True)
    p.add_argument("--workers", type=processes, default=None, metavar="N", help="engine processes")
    p.add_argument("--engine", default="/usr/games/stockfish", metavar="PATH", help="UCI engine")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--depth", type=int, default=None, metavar="D", help="depth (12)")
    limit.add_argument("--nodes", type=int, default=None, metavar="N", help="node limit")
    p.add_argument("--hash", type=int, default=16, metavar="MB", help="Hash per process (16)")
    p.add_argument(
        "--id",
        default=None,
        help="worker id, its identity in topics and /healthz (default: the --broker-user, "
        "else livegain-worker-HOST-…); the MQTT client id is always random",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for flag in ("workers", "depth", "nodes", "hash"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise CliError(f"--{flag} must be at least 1")
    broker = broker_from_args(args)
    import asyncio  # here: this module's broker options are imported by other commands

    from livegain.app.logs import configure_logging
    from livegain.engine.errors import EngineStartError
    from livegain.engine.pool import EnginePool
    from livegain.engine.search import SearchLimit
    from livegain.remote.worker import EngineWorker

    configure_logging("info", json_format=True)
    pool = EnginePool(
        args.engine,
        workers=args.workers,
        limit=SearchLimit.of(args.depth, args.nodes),
        hash_mb=args.hash,
    )
    try:
        worker = EngineWorker(broker, pool, prefix=args.prefix, worker_id=args.id)
    except ValueError as exc:
        raise CliError(f"--id: {exc}") from None

    async def main() -> bool:
        task = asyncio.current_task()
        assert task is not None
        signalled = cancel_on_signals(task)
        with contextlib.suppress(asyncio.CancelledError):
            await worker.run()
        return bool(signalled)

    with about("engine", EngineStartError):
        signalled = asyncio.run(main())
    return stopped("worker") if signalled else 0
