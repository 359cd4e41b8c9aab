"""`livegain gateway`: serve viewers from the service's MQTT output (docs/gateway.md)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from typing import Any

from livegain.cli.errors import CliError
from livegain.cli.options import add_loop_option
from livegain.cli.running import cancel_on_signals, run_async, stopped

HELP = "serve the overlays and /ws to viewers from the service's MQTT output"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "gateway",
        help=HELP,
        description="Serve the overlays and /ws to viewers, fed by what the service "
        "publishes on an MQTT broker ([mqtt] of the service): the same pages and protocol "
        "as the service's own server. Run as many as the audience needs, on one port "
        "(--reuse-port) or on many machines behind a TCP load balancer. Settings come from "
        "the TOML file ([server], [mqtt], [log]), then LIVEGAIN_* environment variables, "
        "then flags.",
    )
    p.add_argument("--config", metavar="PATH", help="TOML configuration (config/livegain.toml)")
    from livegain.cli.worker import add_broker_options

    add_broker_options(
        p,
        url_required=False,
        url_help="mqtt://[user@]host[:1883] or mqtts://host[:8883] (default: [mqtt] url)",
        prefix=None,
        prefix_help="topic prefix of the service's output ([mqtt] prefix)",
    )
    p.add_argument("--host", help="address to listen on (overrides server.host)")
    p.add_argument("--port", type=int, help="port for HTTP and WebSocket (overrides server.port)")
    p.add_argument(
        "--reuse-port",
        action="store_true",
        default=None,
        help="listen with SO_REUSEPORT: several gateways share the port (Linux)",
    )
    p.add_argument("--tls-cert", metavar="FILE", help="PEM certificate: serve https:// and wss://")
    p.add_argument("--tls-key", metavar="FILE", help="PEM private key of --tls-cert")
    p.add_argument(
        "--compression",
        action="store_true",
        default=None,
        help="offer permessage-deflate on /ws (to the clients that ask for it)",
    )
    p.add_argument(
        "--id", default=None, help="MQTT client id (default: livegain-gateway-HOST-random)"
    )
    add_loop_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from livegain.config import load_settings

    server: dict[str, Any] = {}
    for key in ("host", "port", "reuse_port", "tls_cert", "tls_key", "compression"):
        value = getattr(args, key)
        if value is not None:
            server[key] = value
    settings = load_settings(args.config, **({"server": server} if server else {}))
    mqtt = settings.mqtt
    given = {
        "url": args.broker,
        "username": args.broker_user,
        "password_env": args.broker_password_env,
        "ca_file": args.ca_file,
        "cert_file": args.cert_file,
        "key_file": args.key_file,
    }
    access = mqtt.model_copy(update={k: v for k, v in given.items() if v is not None})
    try:
        broker = access.broker()
    except ValueError as exc:
        raise CliError(f"--broker: {exc}") from None
    prefix = args.prefix if args.prefix is not None else mqtt.prefix

    from livegain.app.logs import configure_logging
    from livegain.publish.gateway import Gateway
    from livegain.publish.limits import server_limits
    from livegain.publish.server import LiveServer, raise_fd_limit

    configure_logging(settings.log.level, settings.log.json_format)
    s = settings.server
    raise_fd_limit(s.max_connections)
    live = LiveServer(
        s.host,
        s.port,
        limits=server_limits(s),
        ssl=s.ssl_context(),
        compression=s.compression,
        reuse_port=s.reuse_port,
    )
    gateway = Gateway(live, broker, prefix=prefix, client_id=args.id)

    async def main() -> bool:
        task = asyncio.current_task()
        assert task is not None
        signalled = cancel_on_signals(task)
        started = asyncio.create_task(_announce(gateway))
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await gateway.run()
        finally:
            started.cancel()
        return bool(signalled)

    try:
        signalled = run_async(main(), args.loop)
    except OSError as exc:
        raise CliError(f"cannot start the gateway: {exc}") from None
    return stopped("gateway") if signalled else 0


async def _announce(gateway: Any) -> None:
    """One line on stdout once the gateway listens (its URL: scripts wait for it)."""
    await gateway.listening.wait()
    url = gateway.server.url
    print(f"livegain gateway is live at {url}", flush=True)
    print(f"  WebSocket: ws{url[4:]}ws   health: {url}healthz", flush=True)
