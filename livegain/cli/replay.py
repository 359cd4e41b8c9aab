"""`livegain replay`: turn a PGN file into a live relay (PGN over HTTP, LCC JSON or MQTT)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from livegain.cli.errors import CliError, about
from livegain.cli.options import existing_file, finite_float
from livegain.relay.replay import DEFAULT_SECONDS_PER_MOVE, MODES, Replay, ReplayError


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "replay",
        help="replay a PGN file as a live broadcast (PGN over HTTP, LiveChess Cloud JSON, MQTT)",
        description=(
            "Reveal the games of FILE move by move, all boards together like a live round. "
            "Move times come from [%%emt] / [%%clk] annotations when present, else "
            "--seconds-per-move; all divided by --speed."
        ),
    )
    p.add_argument("file", metavar="FILE.pgn", help="PGN file (one or more games)")
    p.add_argument(
        "--speed", type=finite_float, default=1.0, help="time factor (default 1 = real time)"
    )
    p.add_argument(
        "--as",
        dest="mode",
        choices=MODES,
        default="pgn-http",
        help="serve /games.pgn (pgn-http), LCC JSON (lcc), or publish move events (mqtt)",
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="HTTP port (default: a free one)")
    p.add_argument("--mqtt", default="mqtt://127.0.0.1:1883", help="broker URL for --as mqtt")
    p.add_argument("--topic-prefix", default="livegain/in", help="MQTT topic prefix")
    p.add_argument("--tournament-id", default="replay", help="LCC id / MQTT tournament level")
    p.add_argument(
        "--seconds-per-move",
        type=finite_float,
        default=DEFAULT_SECONDS_PER_MOVE,
        help=f"move time where the PGN has no clocks (default {DEFAULT_SECONDS_PER_MOVE:g})",
    )
    p.add_argument("--loop", action="store_true", help="start the round again when it ends")
    p.add_argument(
        "--exit-when-done",
        action="store_true",
        help="exit once every game is over (default for mqtt without --loop)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = existing_file(args.file)
    if args.speed <= 0:
        raise CliError("--speed must be > 0")
    if args.seconds_per_move <= 0:
        raise CliError("--seconds-per-move must be > 0")
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be 0-65535 (0: a free one), got {args.port}")
    with about(str(args.file), ReplayError):
        replay = Replay.from_file(
            path,
            speed=args.speed,
            seconds_per_move=args.seconds_per_move,
            mode=args.mode,
            host=args.host,
            port=args.port,
            mqtt_url=args.mqtt,
            topic_prefix=args.topic_prefix,
            tournament_id=args.tournament_id,
            loop=args.loop,
        )
    exit_when_done = args.exit_when_done or (args.mode == "mqtt" and not args.loop)
    asyncio.run(_serve(replay, exit_when_done))
    return 0


async def _serve(replay: Replay, exit_when_done: bool) -> None:
    await replay.start(autoplay=True)
    try:
        n, plies = len(replay.games), replay.total_plies
        print(f"replaying {n} games, {plies} moves, speed x{replay.speed:g}", flush=True)
        if replay.mode == "mqtt":
            print(f"publishing to {replay.mqtt_url} on {replay.topic(0).rsplit('/', 1)[0]}/N")
        elif replay.mode == "lcc":
            print(f"LCC base_url {replay.lcc_base_url}  tournament_id {replay.tournament_id}")
            print(f"  {replay.lcc_base_url}/{replay.tournament_id}/tournament.json")
        else:
            print(f"PGN at {replay.pgn_url}  (per board: {replay.base_url}/game-N.pgn)")
            print(f"streamed PGN (the Lichess broadcast format) at {replay.stream_url}")
        sys.stdout.flush()
        if exit_when_done and not replay.loop:
            await replay.done.wait()
            if replay.error is not None:
                raise replay.error
            print("all games over", flush=True)
        else:
            await asyncio.Event().wait()
    finally:
        await replay.stop()
