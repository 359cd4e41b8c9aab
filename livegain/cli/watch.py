"""`livegain watch SOURCE...`: follow a real event, live, on embedded defaults.

A source is what one has at hand for an event: a Lichess broadcast round or
tournament URL, a LiveChess Cloud tournament id or URL, a PGN URL, or a local
PGN file or folder. Each is looked up (the Lichess broadcast API, the
LiveChess Cloud tournament and round documents) for its event and its current
round, then followed by the live service: engine pool, game state, WebSocket
and overlays, as `livegain demo` runs them. The overlay URLs are printed once
it listens. Without --config nothing is kept on disk (--data-dir keeps the
store, so that a restart resumes mid-round); with it, the file's settings
come first and the sources add their feeds to its own. docs/watch.md.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import tempfile
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from livegain.cli.errors import CliError
from livegain.cli.options import finite_float
from livegain.cli.running import cancel_on_signals, stopped

if TYPE_CHECKING:
    from livegain.config import Settings
    from livegain.feeds.resolve import Resolved


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "watch",
        help="follow a real event: Lichess broadcast or LiveChess Cloud URL/id, PGN URL or file",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="a Lichess broadcast round or tournament URL, a LiveChess Cloud tournament id "
        "or URL (ID/N or #ID/N: round N), a PGN URL, or a local PGN file or folder",
    )
    p.add_argument(
        "--round",
        nargs="?",
        const=True,
        type=int,
        metavar="N",
        help="follow one round only: round N of the tournament, or without N the round "
        "the source names (else the current one); default: the whole event, round after round",
    )
    p.add_argument(
        "--interval",
        type=finite_float,
        metavar="SECONDS",
        help="seconds between polls of each source: a Lichess tournament's document "
        "(default 60; its round is streamed), a LiveChess Cloud tournament and a PGN URL "
        "(default 2)",
    )
    p.add_argument("--config", metavar="PATH", help="start from this TOML configuration")
    p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="HTTP/WebSocket port (default 8080)")
    p.add_argument("--depth", type=int, help="engine depth (default 12)")
    p.add_argument("--engine", metavar="PATH", help="UCI engine (default /usr/games/stockfish)")
    p.add_argument(
        "--delay",
        type=int,
        metavar="SECONDS",
        help="broadcast delay: every board reaches viewers this late (default 0: live)",
    )
    p.add_argument(
        "--scale",
        choices=("fide", "lichess"),
        default="fide",
        help="rating scale of perceived and form for these sources' boards: fide (over "
        "the board, the default, also for Lichess broadcasts of over-the-board events) "
        "or lichess (online events)",
    )
    p.add_argument(
        "--kind",
        choices=("classical-otb", "online-rapid"),
        help="kind of game for the human win/draw/loss model (default: each game's "
        "TimeControl tag, else classical-otb)",
    )
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep the store here, so that a restart resumes without re-analysing "
        "(default: nothing kept, or the configuration's data_dir with --config)",
    )
    p.add_argument(
        "--lichess-url",
        metavar="URL",
        help="where Lichess is (default: $LIVEGAIN_LICHESS_URL, else https://lichess.org)",
    )
    p.add_argument(
        "--lcc-url",
        metavar="URL",
        help="LiveChess Cloud's pool, up to /get (default: $LIVEGAIN_LCC_URL, else the "
        "tournament's host as LiveChess Cloud's lookup names it)",
    )
    p.add_argument(
        "--lcc-lookup-url",
        metavar="URL",
        help="LiveChess Cloud's lookup of a tournament's host, up to /meta (default: "
        "$LIVEGAIN_LCC_LOOKUP_URL, else https://lookup.livechesscloud.com/meta; not asked "
        "when a pool is given)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from livegain.feeds.resolve import Endpoints, classify, resolve_all

    try:
        endpoints = Endpoints.chosen(args.lichess_url, args.lcc_url, lcc_lookup=args.lcc_lookup_url)
        for text in args.sources:  # every source named before any lookup
            classify(text, endpoints)
        resolved = _looked_up(resolve_all(args.sources, endpoints, pin=args.round))
    except asyncio.CancelledError:
        return stopped("watch")  # Ctrl-C or SIGTERM during the lookups
    print(f"livegain watch: {len(resolved)} source{'s' if len(resolved) != 1 else ''}")
    for r in resolved:
        print(f"  {r.describe()}", flush=True)
    if args.config is None and args.data_dir is None:
        with tempfile.TemporaryDirectory(prefix="livegain-watch-") as tmp:
            return serve(watch_settings(args, resolved, tmp))
    return serve(watch_settings(args, resolved, None))


def _looked_up(lookups: Coroutine[Any, Any, list[Resolved]]) -> list[Resolved]:
    """The sources' lookups, on an event loop of their own, cancelled by Ctrl-C or
    SIGTERM (CancelledError) as the service is: a signal cancels the task at an
    await, where a KeyboardInterrupt raised from a signal handler could land
    inside the event loop's own code and leave its shutdown waiting. The
    signals' handlers from before are back afterwards (the service starts
    next, and sets its own once its loop runs)."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    async def looked_up() -> list[Resolved]:
        task = asyncio.current_task()
        assert task is not None
        cancel_on_signals(task)
        return await lookups

    try:
        return asyncio.run(looked_up())
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def watch_settings(
    args: argparse.Namespace, resolved: Sequence[Resolved], scratch: str | None
) -> Settings:
    """The service's settings: the configuration file's (or the embedded
    defaults), the options over them, and a feed per source added to the file's
    (with the ``--scale`` and ``--kind`` of these sources). ``scratch``: a
    directory for a store that is not kept (no --config, no --data-dir)."""
    from livegain.config import load_settings

    overrides: dict[str, Any] = {}
    server = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    if server:
        overrides["server"] = server
    engine = {k: v for k, v in (("depth", args.depth), ("path", args.engine)) if v is not None}
    if engine:
        overrides["engine"] = engine
    if args.delay is not None:
        overrides["broadcast"] = {"delay": args.delay}
    if args.data_dir is not None:
        overrides.update(data_dir=args.data_dir, persist=True)
    elif scratch is not None:
        overrides.update(data_dir=scratch, persist=False)
    if args.config is None:
        overrides["log"] = {"level": "warning", "json": False}
    models = {"scale": args.scale, **({"kind": args.kind} if args.kind else {})}
    base = load_settings(args.config)
    feeds = base.feed_entries() + [
        {**r.feed.model_dump(), **models, **_interval(r, args.interval)} for r in resolved
    ]
    events = source_events(base, resolved)
    if events is not None:
        overrides["events"] = events
    return load_settings(args.config, feeds=feeds, **overrides)


def _interval(resolved: Resolved, seconds: float | None) -> dict[str, float]:
    """``--interval`` for the feeds that poll."""
    if seconds is None or "interval" not in type(resolved.feed).model_fields:
        return {}
    if seconds <= 0:
        raise CliError(f"--interval must be more than 0 seconds (got {seconds:g})")
    return {"interval": seconds}


def source_events(base: Settings, resolved: Sequence[Resolved]) -> list[dict[str, Any]] | None:
    """The configuration's ``[[events]]`` and, for each event a source told of
    and the configuration does not name, the entry read from the source
    (format, scoring). None: nothing to add."""
    from livegain.app.live_standings import event_key

    named = {event_key(e.name) for e in base.events}
    added: list[dict[str, Any]] = []
    for r in resolved:
        entry = r.standings
        if entry is None or event_key(str(entry["name"])) in named:
            continue
        named.add(event_key(str(entry["name"])))
        added.append(dict(entry))
    if not added:
        return None
    return [e.model_dump(exclude_defaults=True) for e in base.events] + added


def overlay_lines(url: str) -> list[str]:
    """Where the overlays are, for people."""
    return [
        f"Boards, with each one's overlay URLs to copy: {url}",
        f"Every board of the round (venue screens): {url}overlay/boards",
        f"One board for OBS: {url}overlay/board?board=ID",
    ]


def serve(settings: Settings) -> int:
    """Run the service until Ctrl-C; print its URL and the overlays' once it listens."""
    from livegain.app.logs import configure_logging
    from livegain.app.service import Service
    from livegain.cli.demo import run_until_stopped
    from livegain.cli.serve import check_store

    configure_logging(settings.log.level, settings.log.json_format)
    check_store(settings, fresh=False)

    async def main() -> None:
        service = Service(settings)

        async def on_ready() -> None:
            print(f"livegain is live at {service.url}")
            print(f"  perceived ratings: {service.perceived_model_line()}")
            print(f"  win/draw/loss: {service.wdl_model_line()}")
            for line in overlay_lines(service.url):
                print(f"  {line}")
            print("  Ctrl-C to stop", flush=True)

        await run_until_stopped(service, on_ready)

    try:
        asyncio.run(main())
    except OSError as exc:
        raise CliError(f"cannot start the server: {exc}") from None
    return stopped("watch")
