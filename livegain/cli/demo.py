"""`livegain demo`: a live event, replayed and analysed, on http://127.0.0.1:8080/.

The project's own games (``livegain/data/``) are relayed on 127.0.0.1 at a
watchable speed, and the full service (engine pool, game state, WebSocket,
overlays, standings) follows them as ``livegain watch`` follows a real
broadcast: the demo Open (``demo-event.pgn``, the first five rounds of a
7-round 12-player Swiss of engine games) is served as a Lichess broadcast
tournament (:class:`~livegain.relay.event.EventRelay`) whose rounds 1-4
are over, round 5 is live and rounds 6-7 are announced (their chances are
simulated, each round paired as a Swiss); the service looks it up, reads
the finished rounds, streams round 5, and takes its standings' format and
rounds from the tournament. A team event is a second Lichess broadcast
beside it, followed the same way: the demo Team Cup (``demo-team.pgn``, a
round robin of four teams of four, 3 rounds), rounds 1-2 over and round 3
live, whose games name their teams (``WhiteTeam``/``BlackTeam``), so that
its standings carry the team standings and each match board by board with
its chances. The game of the
century is a PGN relay beside it. No broker is needed; ``--mqtt URL`` replays
round 5 and the game of the century over MQTT instead (the points of rounds
1-4 carried in) and publishes the results there too, under
``livegain/demo/out`` (not a real service's ``livegain/out``): ``livegain
gateway --broker URL --prefix livegain/demo/out`` serves them.
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
import tempfile
import urllib.parse
from collections.abc import Callable, Coroutine
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from livegain.cli.errors import CliError, about
from livegain.cli.options import finite_float
from livegain.cli.output import print_json
from livegain.cli.running import stopped

if TYPE_CHECKING:
    from livegain.feeds.resolve import Resolved
    from livegain.relay.event import EventRelay

DEMO_FILES = ("game_of_the_century.pgn", "demo-round.pgn")
# The demo Open's five rounds; round 5 is demo-round.pgn.
DEMO_EVENT_FILE = "demo-event.pgn"
DEMO_LIVE_ROUND = 5
# The demo's MQTT output: apart from a real service's (livegain/out) on the same broker.
DEMO_PREFIX = "livegain/demo/out"

# The demo Open has seven rounds; the shipped games are rounds 1-5 (round 5 live),
# so its chances are simulated through rounds 6 and 7, each paired as a Swiss.
DEMO_ROUNDS = 7
DEMO_EVENT: dict[str, Any] = {
    "name": "livegain Demo Open 2026",
    "format": "swiss",
    "rounds": DEMO_ROUNDS,
}


# The demo Team Cup: a round robin of four teams, rounds 1-2 over and round 3 live.
DEMO_TEAM_FILE = "demo-team.pgn"
DEMO_TEAM_EVENT = "livegain Demo Team Cup 2026"
DEMO_TEAM_FORMAT = "4-team round robin"
DEMO_TEAM_LIVE_ROUND = 3


def data_path(name: str) -> Path:
    return Path(str(resources.files("livegain") / "data" / name))


def game_of_the_century_path() -> Path:
    """The shipped PGN of Byrne - Fischer, New York 1956, with Figure 1's evaluations."""
    return data_path("game_of_the_century.pgn")


def demo_points_before() -> dict[str, float]:
    """Each player's points from the demo Open's rounds before round 5 (the MQTT
    demo carries them in: it replays round 5 only)."""
    from livegain.core.scoring import outcome
    from livegain.feeds.pgn import parse_pgn

    text = data_path(DEMO_EVENT_FILE).read_text(encoding="utf-8")
    points: dict[str, float] = {}
    for g in parse_pgn(text, "demo", max_games=None):
        snap = g.snapshot
        if snap is None or (snap.round or "").split(".")[0] == str(DEMO_LIVE_ROUND):
            continue
        w, b, _ = outcome(snap.result)  # the demo's rounds 1-4 are all finished
        points[snap.white.name] = points.get(snap.white.name, 0.0) + w
        points[snap.black.name] = points.get(snap.black.name, 0.0) + b
    return points


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
    p.add_argument(
        "--speed", type=finite_float, default=20.0, help="replay speed factor (default 20)"
    )
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
    if args.mqtt is not None:
        from livegain.mqtt.address import parse_mqtt_url

        try:
            parse_mqtt_url(args.mqtt)
        except ValueError as exc:
            raise CliError(f"--mqtt: {exc}") from None
    return run_live(args)


def run_batch(args: argparse.Namespace) -> int:
    from livegain.batch.analysis import analyze
    from livegain.batch.pgn_evals import annotated_games_from_pgn
    from livegain.batch.pgnio import PgnError, read_pgn_games
    from livegain.cli.analyze_tables import print_report
    from livegain.core.rating import PAPER_ENGINE_RATING
    from livegain.models.perceived import pick_perceived_model

    with about("shipped game unreadable", PgnError):
        games, _ = annotated_games_from_pgn(read_pgn_games(game_of_the_century_path()))
    model, why = pick_perceived_model("pgn")  # None: Algorithm 4 alone
    report = analyze(games, PAPER_ENGINE_RATING, model=model)
    if args.json:
        print_json(report.to_json())
    else:
        print_report(report, "the paper's Houdini 1.5a depth 20", trace=args.trace, model_why=why)
    return 0


async def _all_subscribed(feeds: Any) -> None:
    """Until every feed that subscribes (MQTT) holds its subscription."""
    from livegain.feeds.base import SubscribingFeed

    for f in feeds:
        if isinstance(f, SubscribingFeed):
            await f.subscribed.wait()


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

    configure_logging("warning", json_format=False)
    try:
        asyncio.run(_live_mqtt(args) if args.mqtt else _live_event(args))
    except OSError as exc:
        raise CliError(f"cannot start the server on {args.host}:{args.port}: {exc}") from None
    return stopped("demo")


def _demo_settings(args: argparse.Namespace, feeds: list[Any], events: list[Any], tmp: str) -> Any:
    from livegain.config import load_settings

    return load_settings(
        None,
        server={"host": args.host, "port": args.port},
        engine={"path": args.engine, "depth": args.depth},
        data_dir=tmp,
        persist=False,
        feeds=feeds,
        events=events,
        mqtt={
            "enabled": bool(args.mqtt),
            "url": args.mqtt or "mqtt://127.0.0.1:1883",
            "prefix": DEMO_PREFIX,
        },
        log={"level": "warning", "json": False},
    )


def _print_pages(service: Any, event_name: str, odds: str, team_event: str | None = None) -> None:
    print(f"Perceived ratings: {service.perceived_model_line()}")
    print(f"Win/draw/loss: {service.wdl_model_line()}")
    event = urllib.parse.quote(event_name)
    print(f"{odds}: {service.url}overlay/static/widget-standings.html?event={event}")
    print(
        "Player table (performance, rating change, perceived, accuracy): "
        f"{service.url}overlay/static/widget-players.html?event={event}"
    )
    if team_event is not None:
        team = urllib.parse.quote(team_event)
        print(
            "Team match (board by board, with its chances): "
            f"{service.url}overlay/static/widget-team-match.html?event={team}"
        )
        print(
            "Team standings (match points, game points, tie-breaks): "
            f"{service.url}overlay/static/widget-team-standings.html?event={team}"
        )
    print(f"Key moments: {service.url}overlay/static/widget-moments.html")
    print(f"Producer's view (for the crew): {service.url}overlay/producer")
    print(f"Open {service.url}  (Ctrl-C to stop)", flush=True)


def team_relay(speed: float) -> EventRelay:
    """The demo Team Cup as a Lichess broadcast tournament (not started: the
    demo has rounds 1-2 over and round 3 played on the clock)."""
    from livegain.relay.event import EventRelay

    return EventRelay.from_pgn(
        data_path(DEMO_TEAM_FILE).read_text(encoding="utf-8"),
        name=DEMO_TEAM_EVENT,
        tour_id="LgTeam01",
        lcc_id="livegain-team",
        info_format=DEMO_TEAM_FORMAT,
        speed=speed,
        seconds_per_move=45.0,
    )


async def follow(relay: EventRelay, interval: float = 2.0) -> tuple[Resolved, dict[str, Any]]:
    """A relayed tournament looked up as ``livegain watch`` looks one up: what
    was found (its event, its ``[[events]]`` entry) and its feed's settings,
    polled every ``interval`` seconds."""
    from livegain.feeds.resolve import Endpoints, ResolveError, resolve

    with about("the demo's relay", ResolveError):
        found = await resolve(relay.tournament_url, Endpoints(lichess=relay.base_url))
    return found, found.feed.model_copy(update={"interval": interval}).model_dump()


async def _live_event(args: argparse.Namespace) -> None:
    """The demo Open (rounds 1-4 over, round 5 live) and the demo Team Cup
    (rounds 1-2 over, round 3 live) as Lichess broadcasts, and the game of the
    century as a PGN relay, followed as ``livegain watch`` would."""
    from livegain.app.service import Service
    from livegain.feeds.base import PgnHttpFeedConfig
    from livegain.relay.event import EventRelay
    from livegain.relay.replay import Replay

    relay = EventRelay.from_pgn(
        data_path(DEMO_EVENT_FILE).read_text(encoding="utf-8"),
        name=DEMO_EVENT["name"],
        tour_id="LgDemo01",
        info_format=f"12-player Swiss, {DEMO_ROUNDS} rounds",
        rounds=DEMO_ROUNDS,
        speed=args.speed,
        seconds_per_move=45.0,
    )
    century = Replay.from_pgn(
        game_of_the_century_path().read_text(encoding="utf-8"),
        speed=args.speed,
        mode="pgn-http",
        loop=not args.no_loop,
        seconds_per_move=45.0,
    )
    team = team_relay(args.speed)
    async with relay, team:
        # Rounds 1-4 over, round 5 on the clock (again and again unless --no-loop);
        # the Team Cup's rounds 1-2 over, round 3 on the clock.
        relay.autoplay(start=DEMO_LIVE_ROUND, pause=10.0, loop=not args.no_loop)
        team.autoplay(start=DEMO_TEAM_LIVE_ROUND, pause=10.0, loop=not args.no_loop)
        await century.start(autoplay=True)
        try:
            found, event = await follow(relay)
            team_found, team_event = await follow(team)
            gotc = PgnHttpFeedConfig(name="demo", url=century.pgn_url, interval=0.5)
            events = [e for e in (found.standings, team_found.standings) if e is not None]
            with tempfile.TemporaryDirectory(prefix="livegain-demo-") as tmp:
                feeds = [event, team_event, gotc.model_dump()]
                settings = _demo_settings(args, feeds, events, tmp)
                service = Service(settings)

                async def on_ready() -> None:
                    print(
                        f"livegain demo: {found.event}, {_rounds_line(relay, DEMO_LIVE_ROUND)} "
                        f"at {args.speed:g}x, followed as a Lichess broadcast from "
                        f"{relay.base_url}; beside it {team_found.event} (4 teams of 4), "
                        f"{_rounds_line(team, DEMO_TEAM_LIVE_ROUND)}, from {team.base_url}, "
                        "and the game of the century"
                    )
                    _print_pages(
                        service,
                        DEMO_EVENT["name"],
                        f"Standings and chances of winning (to round {DEMO_ROUNDS})",
                        DEMO_TEAM_EVENT,
                    )

                await run_until_stopped(service, on_ready)
        finally:
            await century.stop()


def _rounds_line(relay: EventRelay, live: int) -> str:
    """``"7 rounds (30 games), rounds 1-4 over and round 5 live"``."""
    games = sum(len(r.replay.games) for r in relay.rounds if r.replay is not None)
    return (
        f"{len(relay.rounds)} rounds ({games} games), rounds 1-{live - 1} over and "
        f"round {live} live"
    )


async def _live_mqtt(args: argparse.Namespace) -> None:
    """Round 5 of the demo Open and the game of the century over MQTT, the points
    of rounds 1-4 carried in."""
    from livegain.app.service import Service
    from livegain.feeds.base import MqttFeedConfig
    from livegain.relay.replay import Replay

    replay = Replay.from_pgn(
        demo_pgn(),
        speed=args.speed,
        mode="mqtt",
        loop=not args.no_loop,
        tournament_id="demo",
        seconds_per_move=45.0,
        mqtt_url=args.mqtt,
        # Per process, so that two demos on one broker never mix their moves.
        topic_prefix=f"livegain/demo/in/{os.getpid()}",
    )
    try:
        feed = MqttFeedConfig(
            name="demo",
            url=args.mqtt,
            topic=f"livegain/demo/in/{os.getpid()}/#",
            client_id=f"livegain-demo-{os.getpid()}",
            session_expiry=0,
        )
        event = {**DEMO_EVENT, "points_before": demo_points_before()}
        with tempfile.TemporaryDirectory(prefix="livegain-demo-") as tmp:
            service = Service(_demo_settings(args, [feed.model_dump()], [event], tmp))

            async def on_ready() -> None:
                # MQTT moves are events: subscribe before the first one is
                # published (a Ctrl-C meanwhile stops the wait at once).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(15):
                        await _all_subscribed(service.feeds)
                await replay.start(autoplay=True)
                print(
                    f"livegain demo: {len(replay.games)} boards replayed live at "
                    f"{args.speed:g}x (MQTT {args.mqtt})"
                )
                print(
                    "Gateways meet it with: "
                    f"livegain gateway --broker {args.mqtt} --prefix {DEMO_PREFIX}"
                )
                _print_pages(
                    service,
                    DEMO_EVENT["name"],
                    f"Standings and chances of winning (to round {DEMO_ROUNDS})",
                )

            await run_until_stopped(service, on_ready)
    finally:
        await replay.stop()
