"""`livegain demo`: a live round, replayed and analysed, on http://127.0.0.1:8080/.

The project's own games (the game of the century and a generated round of
engine games, ``livegain/data/``) are replayed as a live PGN relay on
127.0.0.1 at a watchable speed; the full service (engine pool, game state,
WebSocket, overlays) follows them as it would a real broadcast. No broker is
needed; ``--mqtt URL`` replays over MQTT instead and publishes the results
there too, under ``livegain/demo/out`` (not a real service's ``livegain/out``):
``livegain gateway --broker URL --prefix livegain/demo/out`` serves them.
``--batch`` prints the offline analysis of the game of the century from its
shipped evaluations (the paper's Figure 1) and exits. Perceived
ratings are the calibrated estimate of the shipped model nearest to the
engine and depth (said at start), with Algorithm 4 beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import tempfile
import urllib.parse
from collections.abc import Callable, Coroutine
from importlib import resources
from pathlib import Path
from typing import Any

from livegain.cli._common import CliError, print_json

DEMO_FILES = ("game_of_the_century.pgn", "demo-round.pgn")
# The demo's MQTT output: apart from a real service's (livegain/out) on the same broker.
DEMO_PREFIX = "livegain/demo/out"

DEMO_EVENT: dict[str, Any] = {
    # demo-round.pgn is round 5 of a Swiss: the points of rounds 1-4 are carried
    # in, so that the standings and the chances of leading after round 5 mean
    # something (docs/standings.md)
    "name": "livegain Demo Open 2026",
    "format": "swiss",
    "points_before": {
        "Varga, Lenke": 3.5,
        "Kowalczyk, Piotr": 3.5,
        "Lindqvist, Elin": 3.0,
        "Moreau, Bastien": 3.5,
        "Achebe, Nkem": 3.0,
        "Tanaka, Haruto": 3.0,
        "Haddad, Yasmin": 2.5,
        "Szabo, Rita": 3.0,
        "Brennan, Liam": 2.5,
        "Ivanova, Darya": 2.5,
        "Rocha, Marina": 2.0,
        "Okafor, Chidi": 2.5,
    },
}


def data_path(name: str) -> Path:
    return Path(str(resources.files("livegain") / "data" / name))


def game_of_the_century_path() -> Path:
    """The shipped PGN of Byrne - Fischer, New York 1956, with Figure 1's evaluations."""
    return data_path("game_of_the_century.pgn")


def demo_pgn() -> str:
    """The demo round: every shipped demo game, one PGN text."""
    texts = []
    for name in DEMO_FILES:
        p = data_path(name)
        if p.exists():
            texts.append(p.read_text(encoding="utf-8").strip())
    if not texts:
        raise CliError("no demo games shipped in livegain/data")
    return "\n\n".join(texts) + "\n"


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help="replay a live round through the whole service; prints the URL to open",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--speed", type=float, default=20.0, help="replay speed factor (default 20)")
    p.add_argument("--port", type=int, default=8080, help="HTTP/WebSocket port (default 8080)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument(
        "--mqtt",
        metavar="URL",
        help="replay over this MQTT broker (e.g. mqtt://127.0.0.1:1883) and publish there",
    )
    p.add_argument("--depth", type=int, default=10, help="engine depth (default 10)")
    p.add_argument("--engine", default="/usr/games/stockfish", help="UCI engine path")
    p.add_argument("--no-loop", action="store_true", help="stop replaying after one round")
    p.add_argument(
        "--batch",
        action="store_true",
        help="print the offline analysis of the game of the century and exit",
    )
    p.add_argument("--trace", action="store_true", help="with --batch: move-by-move trace")
    p.add_argument("--json", action="store_true", help="with --batch: JSON on stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.batch:
        return run_batch(args)
    if args.speed <= 0:
        raise CliError("--speed must be > 0")
    return run_live(args)


def run_batch(args: argparse.Namespace) -> int:
    from livegain.batch.analysis import analyze
    from livegain.batch.pgn_evals import annotated_games_from_pgn
    from livegain.batch.pgnio import PgnError, read_pgn_games
    from livegain.cli.analyze_tables import print_report
    from livegain.core.rating import PAPER_ENGINE_RATING
    from livegain.models.perceived import pick_perceived_model

    try:
        games, _ = annotated_games_from_pgn(read_pgn_games(game_of_the_century_path()))
    except PgnError as exc:
        raise CliError(f"shipped game unreadable: {exc}") from exc
    model, why = pick_perceived_model("pgn")  # None: Algorithm 4 alone
    report = analyze(games, PAPER_ENGINE_RATING, model=model)
    if args.json:
        print_json(report.to_json())
    else:
        print_report(report, "the paper's Houdini 1.5a depth 20", trace=args.trace, model_why=why)
    return 0


async def _all_subscribed(feeds: Any) -> None:
    """Until every feed that subscribes (MQTT) holds its subscription."""
    for f in feeds:
        subscribed = getattr(f, "subscribed", None)
        if isinstance(subscribed, asyncio.Event):
            await subscribed.wait()


async def run_until_stopped(
    service: Any, on_ready: Callable[[], Coroutine[Any, Any, None]]
) -> None:
    """Run ``service`` (a :class:`~livegain.app.service.Service`) until SIGINT or
    SIGTERM; once it is ready (listening, engines started), await ``on_ready()``
    beside it (what to print, what else to start). A service that fails, before
    or after, raises here; on_ready stops with it."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    task = asyncio.create_task(service.run(stop))
    ready = asyncio.create_task(service.ready.wait())
    await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
    ready.cancel()
    if service.ready.is_set() and not task.done():
        started = asyncio.create_task(on_ready())
        await asyncio.wait({task, started}, return_when=asyncio.FIRST_COMPLETED)
        if not started.done():
            started.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await started
        elif started.exception() is not None:
            stop.set()
            with contextlib.suppress(Exception):
                await task
            started.result()
    await task


def run_live(args: argparse.Namespace) -> int:
    from livegain.app.logs import configure_logging
    from livegain.app.service import Service
    from livegain.config import ConfigError, load_settings
    from livegain.engine.errors import EngineError
    from livegain.feeds.base import MqttFeedConfig, PgnHttpFeedConfig
    from livegain.feeds.replay import Replay, ReplayError

    configure_logging("warning", json_format=False)
    text = demo_pgn()

    async def main() -> None:
        mode = "mqtt" if args.mqtt else "pgn-http"
        replay_kwargs: dict[str, Any] = {
            "speed": args.speed,
            "mode": mode,
            "loop": not args.no_loop,
            "tournament_id": "demo",
            "seconds_per_move": 45.0,
        }
        if args.mqtt:
            replay_kwargs["mqtt_url"] = args.mqtt
            # Per process, so that two demos on one broker never mix their moves.
            replay_kwargs["topic_prefix"] = f"livegain/demo/in/{os.getpid()}"
        replay = Replay.from_pgn(text, **replay_kwargs)
        if not args.mqtt:
            # The HTTP relay starts first (the feed needs its URL); the service
            # catches up on whatever was revealed meanwhile.
            await replay.start(autoplay=True)
        try:
            feed: Any
            if args.mqtt:
                feed = MqttFeedConfig(
                    name="demo",
                    url=args.mqtt,
                    topic=f"livegain/demo/in/{os.getpid()}/#",
                    client_id=f"livegain-demo-{os.getpid()}",
                    session_expiry=0,
                )
            else:
                feed = PgnHttpFeedConfig(name="demo", url=replay.pgn_url, interval=0.5)
            with tempfile.TemporaryDirectory(prefix="livegain-demo-") as tmp:
                try:
                    settings = load_settings(
                        None,
                        server={"host": args.host, "port": args.port},
                        engine={"path": args.engine, "depth": args.depth},
                        data_dir=tmp,
                        persist=False,
                        feeds=[feed.model_dump()],
                        events=[DEMO_EVENT],
                        mqtt={
                            "enabled": bool(args.mqtt),
                            "url": args.mqtt or "mqtt://127.0.0.1:1883",
                            "prefix": DEMO_PREFIX,
                        },
                        log={"level": "warning", "json": False},
                    )
                except ConfigError as exc:
                    raise CliError(str(exc)) from None
                service = Service(settings)

                async def on_ready() -> None:
                    if args.mqtt:
                        # MQTT moves are events: subscribe before the first one is
                        # published (a Ctrl-C meanwhile stops the wait at once).
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(15):
                                await _all_subscribed(service.feeds)
                        await replay.start(autoplay=True)
                    games = len(replay.games)
                    print(
                        f"livegain demo: {games} boards replayed live at {args.speed:g}x "
                        f"({'MQTT ' + args.mqtt if args.mqtt else 'PGN relay ' + replay.pgn_url})"
                    )
                    if args.mqtt:
                        print(
                            "Gateways meet it with: "
                            f"livegain gateway --broker {args.mqtt} --prefix {DEMO_PREFIX}"
                        )
                    print(f"Perceived ratings: {service.perceived_model_line()}")
                    print(f"Win/draw/loss: {service.wdl_model_line()}")
                    event = urllib.parse.quote(DEMO_EVENT["name"])
                    print(
                        "Standings and chances of leading after round 5: "
                        f"{service.url}overlay/static/widget-standings.html?event={event}"
                    )
                    print(
                        "Player table (performance, rating change, perceived, accuracy): "
                        f"{service.url}overlay/static/widget-players.html?event={event}"
                    )
                    print(f"Key moments: {service.url}overlay/static/widget-moments.html")
                    print(f"Producer's view (for the crew): {service.url}overlay/producer")
                    print(f"Open {service.url}  (Ctrl-C to stop)", flush=True)

                await run_until_stopped(service, on_ready)
        finally:
            await replay.stop()

    try:
        asyncio.run(main())
    except ReplayError as exc:
        raise CliError(str(exc)) from None
    except EngineError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot start the server on {args.host}:{args.port}: {exc}") from None
    print("stopped", file=sys.stderr)
    return 0
