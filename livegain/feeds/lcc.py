"""DGT LiveChess Cloud (LCC) JSON, polled over HTTP.

Layout per tournament id (see docs/feeds.md)::

    {base_url}/{id}/tournament.json         name, rounds [{count, live}], ...
    {base_url}/{id}/round-{r}/index.json    pairings [{white, black, result, live}]
    {base_url}/{id}/round-{r}/game-{g}.json live, chess960, result, clock, moves

Pairing i (0-based) is ``game-{i+1}.json``. A move token is ``SAN[ clock][+spent]``
(seconds left / seconds spent, each optional). When the game's ``clock`` object
and the last moves both carry a time, ``clock`` wins for the current clocks.
``chess960`` 518 is the standard start; any other number is a Chess960
start position. A game counts as finished when its pairing's result (index
vocabulary ``1-0``, ``0-1``, ``1/2-1/2``) is not ``*``; the game file's own
(``WHITEWIN``/``BLACKWIN``/``DRAW``) result is kept as the tag ``LccResult``.
A game file that fails to load is an empty game this poll (nothing is emitted
for it), never a deleted one. A finished game already read in full is not
fetched again unless its pairing changes.

An illegal move followed by more moves is reported, the legal prefix kept in
the snapshot's ``moves`` and the rest passed on in ``after_illegal``. A game
file may carry the current position, ``"fen"`` (a FEN, or the piece placement
a DGT board reports): when the last move is one that cannot be played (an
illegal move that stood over the board), that position goes on in the
snapshot's ``fens`` for that ply, and is remembered for it in later polls, so
the game state goes on from it.

Every document is untrusted. Each game is read on its own: a bad value (a
clock of ``1e999``, NaN or -5, a string where a number goes, an illegal move,
a rating of 10**100) is dropped with an error naming the feed, the round and
the board, and the rest of that game and every other game still apply. A game
document that cannot be read at all (not JSON, not an object, larger than
``max_bytes``, nested deeper than
:data:`~livegain.feeds.json_bounds.MAX_DEPTH`, ``moves`` not a list, a bad
``chess960``, more than :data:`MAX_PLIES` moves) is skipped this poll with
such an error and the board keeps what it showed; a bad round index skips that
round only; a bad ``tournament.json`` fails the poll (and backs off) but keeps
every board as it was. Past ``max_games`` pairings in a round, the rest are
not followed. A problem is reported when it starts or changes, not on every
poll while it lasts; every report is counted (``errors``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from livegain.core.snapshot import GameSnapshot
from livegain.feeds._http import HttpError, http_get, http_session
from livegain.feeds.backoff import BACKOFF, Backoff
from livegain.feeds.base import FeedSink, LccFeedConfig, source_sink
from livegain.feeds.emitter import Emitter
from livegain.feeds.hosts import host_of
from livegain.feeds.json_bounds import loads_bounded
from livegain.feeds.lcc_json import (
    MAX_PLIES,
    clip,
    empty_game,
    make_snapshot,
    parse_game_json,
    player_name,
    positions,
    show,
    text_value,
)

MAX_CONCURRENT = 6
#: Seconds between two polls of a round that is not being played (finished, or
#: paired and not started): its index only, for a late correction or its start.
QUIET_INTERVAL = 60.0
#: Rounds followed when tournament.json lists more (reported once).
MAX_ROUNDS = 200
#: Game documents with more move tokens than this are read in a worker thread.
OFF_LOOP_MOVES = 300


def _round_counts(rounds: object) -> list[tuple[int, int]]:
    """Per round of tournament.json: (games, live games); 0 for a value that is
    not a count (the rounds' own checks report it)."""
    if not isinstance(rounds, list):
        return []
    out = []
    for r in rounds[:MAX_ROUNDS]:
        count = r.get("count") if isinstance(r, Mapping) else None
        live = r.get("live") if isinstance(r, Mapping) else None
        out.append(
            (
                count if isinstance(count, int) and not isinstance(count, bool) else 0,
                live if isinstance(live, int) and not isinstance(live, bool) else 0,
            )
        )
    return out


# --- the feed -----------------------------------------------------------------------------------


@dataclass
class _Doc:
    """Conditional-GET state of one JSON document."""

    etag: str | None = None
    last_modified: str | None = None
    body: bytes | None = None
    data: Any = None


@dataclass
class _GameState:
    finished_read: bool = False  # read in full after its pairing was finished
    pairing: Any = None
    issues: tuple[str, ...] = ()  # the problems last reported for this game file
    seen: tuple[object, ...] = ()  # (game data, pairing, tournament, date) last read
    # positions reported after moves that cannot be played: (ply index, move) -> FEN
    positions: dict[tuple[int, str], str] = field(default_factory=dict)


@dataclass
class _RoundState:
    games: dict[int, _GameState] = field(default_factory=dict)
    done: bool = False
    """Every pairing has a result and every game was read in full after it."""
    polled_at: float | None = None
    """Monotonic time of the last poll of its index."""


def quiet_round(live: int, state: _RoundState | None, current: int | None, rnd: int) -> bool:
    """Whether a round is not being played: no game of it live, not the current
    round, and either over (every result in and read) or after the current
    round (not started). Its index is then polled every :data:`QUIET_INTERVAL`
    seconds, and only its games with a result not read yet are fetched."""
    if live > 0 or rnd == current:
        return False
    return (state is not None and state.done) or (current is not None and rnd > current)


def current_round(counts: list[tuple[int, int]], rounds: dict[int, _RoundState]) -> int | None:
    """The round being played: the last with live games (``counts``: per round,
    games and live games), else the first paired round not done."""
    live = [n for n, (_c, lv) in enumerate(counts, 1) if lv > 0]
    if live:
        return live[-1]
    for n, (c, _lv) in enumerate(counts, 1):
        st = rounds.get(n)
        if c > 0 and (st is None or not st.done):
            return n
    return None


class LccFeed:
    """Polls a LiveChess Cloud tournament and emits a snapshot per game that changed.

    ``bad_games`` counts the game documents skipped whole (unreadable, not an
    object, a bad start position); ``errors`` counts every problem reported.
    """

    def __init__(
        self,
        cfg: LccFeedConfig,
        *,
        backoff: tuple[float, ...] = BACKOFF,
        max_plies: int = MAX_PLIES,
    ) -> None:
        self.cfg = cfg
        self.max_plies = max_plies
        self.name = cfg.name or f"lcc:{cfg.tournament_id}"
        self.base = f"{cfg.base_url.rstrip('/')}/{cfg.tournament_id}"
        self.max_bytes = cfg.max_bytes
        self.max_games = cfg.max_games
        self.backoff = Backoff(backoff)
        self.emitter = Emitter(self.name)
        self._docs: dict[str, _Doc] = {}
        self._failing: dict[str, str] = {}  # problem key -> the message being reported
        self._rounds: dict[int, _RoundState] = {}
        self._sem = asyncio.Semaphore(MAX_CONCURRENT)
        # The run's HTTP session: connections kept between polls (None: a
        # session per request, for a poll_once outside run)
        self._session: aiohttp.ClientSession | None = None
        self.polls = 0
        self.requests = 0
        self.bad_games = 0
        self.current: int | None = None
        """The round being played, as the last poll saw it."""

    @property
    def errors(self) -> int:
        return self.emitter.errors

    def status(self) -> dict[str, object]:
        """Which rounds are followed and which is being played, for ``/healthz``."""
        done = sorted(n for n, st in self._rounds.items() if st.done)
        return {
            "rounds": "every round" if self.cfg.rounds is None else list(self.cfg.rounds),
            "round": self.current,
            "why": "live games, else the first paired round not finished",
            "finished_rounds": done,
            "requests": self.requests,
        }

    async def run(self, sink: FeedSink) -> None:
        sink = source_sink(sink, self.cfg)
        async with http_session() as self._session:
            try:
                while True:
                    delay = await self._poll_and_delay(sink)
                    await asyncio.sleep(delay)
            finally:
                self._session = None

    async def _poll_and_delay(self, sink: FeedSink) -> float:
        """Poll once; how long to wait before the next poll."""
        try:
            ok = await self.poll_once(sink)
        except Exception as exc:  # a bug must not end the feed: report it, back off
            self.emitter.error(
                sink, self.base, f"internal error: {type(exc).__name__}: {clip(str(exc))}"
            )
            ok = False
        if ok:
            self.backoff.succeed()
            return self.cfg.interval
        return max(self.backoff.fail(), self.cfg.interval)

    async def poll_once(self, sink: FeedSink) -> bool:
        """One poll of the whole tournament; False when tournament.json could not be read.

        Each round is polled on its own: one that fails is reported and the others go on.
        """
        self.polls += 1
        tournament = await self._fetch_json("tournament.json", sink, "tournament")
        if tournament is None:
            return False
        if not isinstance(tournament, Mapping):
            self._report_once(sink, "tournament.json#shape", "tournament: not a JSON object")
            return False
        self._ok("tournament.json#shape")
        counts = _round_counts(tournament.get("rounds"))
        self.current = current_round(counts, self._rounds)
        now = time.monotonic()
        for rnd in self._wanted_rounds(sink, tournament):
            count, live = counts[rnd - 1] if rnd <= len(counts) else (1, 0)
            if count == 0 and self.cfg.rounds is None:
                continue  # not paired yet: tournament.json says when it is
            state = self._rounds.get(rnd)
            quiet = quiet_round(live, state, self.current, rnd)
            polled = state.polled_at if state is not None else None
            if quiet and polled is not None and now - polled < QUIET_INTERVAL:
                continue
            try:
                await self._poll_round(sink, tournament, rnd, quiet)
            except Exception as exc:  # one round's bug must not stop the others
                self._report_once(
                    sink,
                    f"round-{rnd}/index.json#internal",
                    f"round {rnd} skipped this poll: internal error: {type(exc).__name__}: "
                    f"{clip(str(exc))}",
                )
        return True

    def _wanted_rounds(self, sink: FeedSink, tournament: Mapping[str, Any]) -> list[int]:
        if self.cfg.rounds is not None:
            return list(self.cfg.rounds)
        rounds = tournament.get("rounds")
        key = "tournament.json#rounds"
        if rounds is not None and not isinstance(rounds, list):
            self._report_once(sink, key, f"tournament: 'rounds' {show(rounds)} is not a list")
            return []
        count = len(rounds) if rounds is not None else 0
        if count > MAX_ROUNDS:
            self._report_once(
                sink, key, f"tournament: {count} rounds listed; following the first {MAX_ROUNDS}"
            )
            return list(range(1, MAX_ROUNDS + 1))
        self._ok(key)
        return list(range(1, count + 1))

    async def _poll_round(
        self, sink: FeedSink, tournament: Mapping[str, Any], rnd: int, quiet: bool = False
    ) -> None:
        """Poll a round's index and its games (``quiet``: only the games with a
        result not read in full yet)."""
        path = f"round-{rnd}/index.json"
        state = self._rounds.setdefault(rnd, _RoundState())
        state.polled_at = time.monotonic()
        index = await self._fetch_json(path, sink, f"round {rnd}")
        if index is None:
            return
        pairings = index.get("pairings") if isinstance(index, Mapping) else None
        if not isinstance(pairings, list):
            self._report_once(sink, f"{path}#shape", f"round {rnd}: no 'pairings' list")
            return
        self._ok(f"{path}#shape")
        if len(pairings) > self.max_games:
            self._report_once(
                sink,
                f"{path}#max_games",
                f"round {rnd}: {len(pairings)} pairings; following the first "
                f"{self.max_games} (max_games)",
            )
            pairings = pairings[: self.max_games]
        else:
            self._ok(f"{path}#max_games")
        date = text_value(index.get("date"))
        boards: list[int] = []
        jobs = []
        for i, pairing in enumerate(pairings):
            board = i + 1
            if not isinstance(pairing, Mapping):
                self._report_once(
                    sink,
                    f"{path}#{board}",
                    f"round {rnd} board {board}: pairing {show(pairing)} is not an object",
                )
                continue
            self._ok(f"{path}#{board}")
            gs = state.games.setdefault(board, _GameState())
            if gs.pairing != pairing:
                gs.finished_read = False
                gs.pairing = pairing
            if gs.finished_read or (quiet and pairing.get("result", "*") in ("*", None)):
                continue
            boards.append(board)
            jobs.append(self._poll_game(sink, tournament, rnd, board, pairing, date, gs))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        for board, res in zip(boards, results, strict=True):
            if isinstance(res, Exception):  # _poll_game guards itself; never lose a report
                self.emitter.error(
                    sink,
                    f"round {rnd} board {board}",
                    f"internal error: {type(res).__name__}: {clip(str(res))}",
                )
            elif isinstance(res, BaseException):
                raise res
        state.done = bool(pairings) and all(
            isinstance(p, Mapping)
            and p.get("result", "*") not in ("*", None)
            and state.games.get(i + 1, _GameState()).finished_read
            for i, p in enumerate(pairings)
        )

    async def _poll_game(
        self,
        sink: FeedSink,
        tournament: Mapping[str, Any],
        rnd: int,
        board: int,
        pairing: Mapping[str, Any],
        date: str | None,
        gs: _GameState,
    ) -> None:
        path = f"round-{rnd}/game-{board}.json"
        where = (
            f"round {rnd} board {board} ({player_name(pairing.get('white'))} - "
            f"{player_name(pairing.get('black'))})"
        )
        data = await self._fetch_json(path, sink, where)
        if data is None:  # failed to load: an empty game this poll, not a deleted one
            return
        seen = (data, pairing, tournament, date)
        if len(gs.seen) == 4 and all(a is b or a == b for a, b in zip(seen, gs.seen, strict=True)):
            return  # nothing new (the documents are the cached objects): no parse
        gs.seen = seen
        extra: list[str] = []
        snap: GameSnapshot | None = None
        try:
            moves = data.get("moves") if isinstance(data, Mapping) else None
            if isinstance(moves, list) and len(moves) > OFF_LOOP_MOVES:
                game = await asyncio.to_thread(parse_game_json, data, where, self.max_plies)
            else:
                game = parse_game_json(data, where, self.max_plies)
            if not game.skipped:
                snap = make_snapshot(
                    self.name,
                    self.cfg.tournament_id,
                    tournament,
                    rnd,
                    board,
                    pairing,
                    game,
                    date,
                    extra,
                    positions(game, gs.positions),
                )
        except Exception as exc:  # whatever is wrong with this game, the others go on
            game = empty_game(f"{where}: unreadable game ({type(exc).__name__}: {clip(str(exc))})")
        issues = game.issues + tuple(f"{where}: {e}" for e in extra)
        if snap is None:
            self.bad_games += 1
            issues = tuple(f"{i}; board skipped this poll" for i in issues)
        if issues != gs.issues:
            gs.issues = issues
            for issue in issues:
                self.emitter.error(sink, where, issue)
        if snap is None:  # nothing readable: the board keeps what it showed
            return
        self.emitter.offer_snapshot(snap, sink, fallback=path)
        if snap.result != "*" and not issues:
            gs.finished_read = True

    async def _fetch_json(self, path: str, sink: FeedSink, label: str) -> Any:
        """GET a document (conditional); its parsed JSON, or None when it failed.

        Failures are reported once per streak, naming ``label`` (the tournament,
        the round, or the round, board and players of a game) and the URL."""
        doc = self._docs.setdefault(path, _Doc())
        headers: dict[str, str] = {}
        if doc.etag:
            headers["If-None-Match"] = doc.etag
        if doc.last_modified:
            headers["If-Modified-Since"] = doc.last_modified
        url = f"{self.base}/{path}"
        self.requests += 1

        def fail(message: str) -> None:
            self._report_once(sink, path, message, f"{label} {url}")

        host = host_of(url)
        try:
            async with self._sem, host.slot():
                resp = await http_get(
                    url,
                    headers=headers,
                    timeout=self.cfg.timeout,
                    max_body=self.max_bytes,
                    session=self._session,
                )
            host.answered(resp.status, resp.headers)
        except HttpError as exc:
            cap = "larger than" in str(exc) or "inflates past" in str(exc)
            fail(f"fetch failed: {exc}{' (max_bytes)' if cap else ''}")
            return None
        if resp.status == 304 and doc.body is not None:
            self._ok(path)
            return doc.data
        if resp.status != 200:
            fail(f"HTTP {resp.status} {resp.reason}".strip())
            return None
        if resp.body == doc.body:
            self._ok(path)
            return doc.data
        try:
            data = loads_bounded(resp.text())
        except ValueError as exc:
            fail(clip(str(exc)))
            return None
        doc.etag = resp.headers.get("etag")
        doc.last_modified = resp.headers.get("last-modified")
        doc.body = resp.body
        doc.data = data
        self._ok(path)
        return data

    def _report_once(
        self, sink: FeedSink, key: str, message: str, where: str | None = None
    ) -> None:
        """Report a problem when it starts or changes, not on every poll while it lasts.

        ``key`` names the problem (a document's path, ``#`` what in it is wrong)."""
        if self._failing.get(key) == message:
            return
        self._failing[key] = message
        path = key.partition("#")[0]
        label = (
            "tournament" if path == "tournament.json" else path.partition("/")[0].replace("-", " ")
        )
        self.emitter.error(sink, where or f"{label} {self.base}/{path}", message)

    def _ok(self, key: str) -> None:
        """The problem ``key`` is over: report it again if it comes back."""
        self._failing.pop(key, None)
