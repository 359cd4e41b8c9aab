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
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import chess

from livegain.core.events import GameSnapshot, PlayerInfo
from livegain.feeds._common import BACKOFF, Backoff, Emitter
from livegain.feeds._http import HttpError, http_get
from livegain.feeds.base import FeedSink, LccFeedConfig
from livegain.feeds.pgn import MAX_TRAILING_ILLEGAL, ply_label

STANDARD_START = 518
LCC_RESULTS = {"WHITEWIN": "1-0", "BLACKWIN": "0-1", "DRAW": "1/2-1/2", "*": "*"}
INDEX_RESULTS = {"1-0", "0-1", "1/2-1/2", "*", "½-½"}
_TOKEN_TAIL = re.compile(r"^(?:(\d+))?(?:\+(\d+))?$")
MAX_CONCURRENT = 6


class LccFormatError(ValueError):
    """A JSON document that does not have the LCC shape."""


# --- pure parsing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LccMove:
    san: str
    clock: int | None = None  # seconds left after the move
    spent: int | None = None  # seconds spent on the move


def parse_move_token(token: object) -> LccMove:
    """``"Nc2 34+2"`` -> LccMove("Nc2", 34, 2); ``"fxe4 +31"``; ``"Nc6"``."""
    if not isinstance(token, str) or not token.strip():
        raise LccFormatError(f"move token {token!r} is not a non-empty string")
    san, _, tail = token.strip().partition(" ")
    tail = tail.strip()
    m = _TOKEN_TAIL.match(tail)
    if not m:
        raise LccFormatError(f"move token {token!r}: cannot read clock/spent {tail!r}")
    clock = int(m.group(1)) if m.group(1) else None
    spent = int(m.group(2)) if m.group(2) else None
    return LccMove(san, clock, spent)


def player_name(p: Mapping[str, Any] | None) -> str:
    """``{"fname": "Magnus", "lname": "Carlsen"}`` -> ``Carlsen, Magnus`` (FIDE style)."""
    if not p:
        return "?"
    first = " ".join(str(p[k]).strip() for k in ("fname", "mname") if p.get(k))
    last = str(p.get("lname") or "").strip()
    if last and first:
        return f"{last}, {first}"
    return last or first or "?"


def player_info(p: Mapping[str, Any] | None) -> PlayerInfo:
    if not isinstance(p, Mapping):
        p = {}

    def s(key: str) -> str | None:
        v = p.get(key)
        return str(v).strip() or None if v not in (None, "") else None

    fide = s("fideid")
    if fide is not None and (not fide.isdigit() or int(fide) == 0):
        fide = None
    rating = p.get("rating") if isinstance(p.get("rating"), int) and p.get("rating") else None
    return PlayerInfo(
        name=player_name(p),
        title=s("title"),
        federation=s("federation"),
        rating=rating,
        fide_id=fide,
    )


def initial_position(chess960: object) -> tuple[chess.Board, str | None]:
    """518 (or absent) -> the standard start; another number -> that Chess960 position."""
    if chess960 is None or chess960 == STANDARD_START:
        return chess.Board(), None
    if not isinstance(chess960, int) or isinstance(chess960, bool) or not 0 <= chess960 <= 959:
        raise LccFormatError(f"chess960 {chess960!r} is not a position number 0..959")
    board = chess.Board.from_chess960_pos(chess960)
    return board, board.fen()


@dataclass(frozen=True)
class LccGame:
    """A game file read into legal SAN moves plus what went wrong (never raises)."""

    moves: tuple[str, ...]
    clocks: tuple[int | None, ...]
    spent: tuple[int | None, ...]
    initial_fen: str | None
    result: str | None  # the game file's result in PGN vocabulary (None if absent)
    clock_white: int | None
    clock_black: int | None
    live: bool | None
    issues: tuple[str, ...] = ()


def parse_game_json(data: object, where: str) -> LccGame:
    """Read a ``game-N.json`` document. Problems are listed in ``issues``."""
    issues: list[str] = []
    if not isinstance(data, Mapping):
        return LccGame((), (), (), None, None, None, None, None, (f"{where}: not a JSON object",))
    try:
        board, fen = initial_position(data.get("chess960"))
    except LccFormatError as exc:
        return LccGame((), (), (), None, None, None, None, None, (f"{where}: {exc}",))
    first_white = board.turn == chess.WHITE
    moves: list[str] = []
    clocks: list[int | None] = []
    spent: list[int | None] = []
    raw_moves = data.get("moves") or []
    if not isinstance(raw_moves, list):
        issues.append(f"{where}: 'moves' is not a list")
        raw_moves = []
    for i, token in enumerate(raw_moves):
        ply = len(moves) + 1
        label = ply_label(ply, first_white)
        try:
            mv = parse_move_token(token)
            move = board.parse_san(mv.san)
        except (LccFormatError, ValueError) as exc:
            tail = _trailing(raw_moves[i:])
            if tail is not None:
                # up to two illegal moves at the very end (DGT's "kings in the centre"
                # result signal) go on as they are: the game state reads them
                moves += [t.san for t in tail]
                clocks += [t.clock for t in tail]
                spent += [t.spent for t in tail]
            else:
                issues.append(
                    f"{where} ply {ply} ({label}{token!s}): {exc}; keeping the {len(moves)} "
                    "moves before it"
                )
            break
        moves.append(board.san(move))
        board.push(move)
        clocks.append(mv.clock)
        spent.append(mv.spent)
    raw_result = data.get("result")
    result = LCC_RESULTS.get(raw_result) if isinstance(raw_result, str) else None
    if raw_result is not None and result is None:
        issues.append(f"{where}: unknown result {raw_result!r}")
    clock_white = _last(clocks, 0 if first_white else 1)
    clock_black = _last(clocks, 1 if first_white else 0)
    clock = data.get("clock")
    if isinstance(clock, Mapping):
        w, b = clock.get("white"), clock.get("black")
        if _is_num(w):
            clock_white = int(w)
        if _is_num(b):
            clock_black = int(b)
    elif clock is not None:
        issues.append(f"{where}: 'clock' is not an object")
    live = data.get("live") if isinstance(data.get("live"), bool) else None
    return LccGame(
        tuple(moves),
        tuple(clocks),
        tuple(spent),
        fen,
        result,
        clock_white,
        clock_black,
        live,
        tuple(issues),
    )


def _trailing(tokens: Sequence[object]) -> list[LccMove] | None:
    """The last tokens as moves when they are few enough to be passed on unchecked."""
    if len(tokens) > MAX_TRAILING_ILLEGAL:
        return None
    try:
        return [parse_move_token(t) for t in tokens]
    except LccFormatError:
        return None


def _is_num(v: object) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool) and v >= 0


def _last(values: Sequence[int | None], start: int) -> int | None:
    for v in reversed(values[start::2]):
        if v is not None:
            return v
    return None


def pairing_result(pairing: Mapping[str, Any]) -> str:
    r = pairing.get("result")
    if isinstance(r, str) and r.strip() in INDEX_RESULTS:
        return "1/2-1/2" if r.strip() == "½-½" else r.strip()
    return "*"


def lcc_game_id(tournament_id: str, rnd: int, board: int) -> str:
    return f"lcc:{tournament_id}:{rnd}:{board}"


def make_snapshot(
    source: str,
    tournament_id: str,
    tournament: Mapping[str, Any],
    rnd: int,
    board: int,
    pairing: Mapping[str, Any],
    game: LccGame,
    date: str | None = None,
) -> GameSnapshot:
    white, black = player_info(pairing.get("white")), player_info(pairing.get("black"))
    result = pairing_result(pairing)
    tags: list[tuple[str, str]] = []
    name = tournament.get("name")
    if isinstance(name, str) and name:
        tags.append(("Event", name))
    loc = tournament.get("location")
    if isinstance(loc, str) and loc:
        tags.append(("Site", loc))
    if date:
        tags.append(("Date", date.replace("-", ".")))
    tags += [("Round", f"{rnd}.{board}"), ("White", white.name), ("Black", black.name)]
    tags.append(("Result", result))
    tc = tournament.get("timecontrol")
    if isinstance(tc, str) and tc:
        tags.append(("TimeControl", tc))
    if game.initial_fen:
        tags += [("Variant", "Chess960"), ("FEN", game.initial_fen), ("SetUp", "1")]
    if game.result is not None:
        tags.append(("LccResult", game.result))
    return GameSnapshot(
        source=source,
        white=white,
        black=black,
        moves=game.moves,
        clocks=game.clocks,
        result=result,
        game_id=lcc_game_id(tournament_id, rnd, board),
        event=name if isinstance(name, str) and name else None,
        round=str(rnd),
        board=board,
        initial_fen=game.initial_fen,
        tags=tuple(tags),
        clock_white=game.clock_white,
        clock_black=game.clock_black,
    )


# --- the feed -----------------------------------------------------------------------------------


@dataclass
class _Doc:
    """Conditional-GET state of one JSON document."""

    etag: str | None = None
    last_modified: str | None = None
    body: bytes | None = None
    data: Any = None
    failing: str | None = None  # the message of the failure streak being reported


@dataclass
class _GameState:
    finished_read: bool = False  # read in full after its pairing was finished
    pairing: Any = None
    issues: tuple[str, ...] = ()  # the problems last reported for this game file
    seen: tuple[object, ...] = ()  # (game data, pairing, tournament, date) last read


@dataclass
class _RoundState:
    games: dict[int, _GameState] = field(default_factory=dict)


class LccFeed:
    """Polls a LiveChess Cloud tournament and emits a snapshot per game that changed."""

    def __init__(self, cfg: LccFeedConfig, *, backoff: tuple[float, ...] = BACKOFF) -> None:
        self.cfg = cfg
        self.name = cfg.name or f"lcc:{cfg.tournament_id}"
        self.base = f"{cfg.base_url.rstrip('/')}/{cfg.tournament_id}"
        self.backoff = Backoff(backoff)
        self.emitter = Emitter(self.name)
        self._docs: dict[str, _Doc] = {}
        self._rounds: dict[int, _RoundState] = {}
        self._sem = asyncio.Semaphore(MAX_CONCURRENT)
        self.polls = 0
        self.requests = 0

    async def run(self, sink: FeedSink) -> None:
        while True:
            try:
                ok = await self.poll_once(sink)
            except Exception as exc:  # a bug must not end the feed: report it, back off
                self.emitter.error(sink, self.base, f"internal error: {type(exc).__name__}: {exc}")
                ok = False
            if ok:
                self.backoff.succeed()
                delay = self.cfg.interval
            else:
                delay = max(self.backoff.fail(), self.cfg.interval)
            await asyncio.sleep(delay)

    async def poll_once(self, sink: FeedSink) -> bool:
        """One poll of the whole tournament; False when tournament.json could not be read."""
        self.polls += 1
        tournament = await self._fetch_json("tournament.json", sink)
        if tournament is None:
            return False
        if not isinstance(tournament, Mapping):
            self._report_once(sink, "tournament.json", "not a JSON object")
            return False
        rounds = tournament.get("rounds")
        count = len(rounds) if isinstance(rounds, list) else 0
        wanted = self.cfg.rounds if self.cfg.rounds is not None else list(range(1, count + 1))
        for rnd in wanted:
            await self._poll_round(sink, tournament, rnd)
        return True

    async def _poll_round(self, sink: FeedSink, tournament: Mapping[str, Any], rnd: int) -> None:
        path = f"round-{rnd}/index.json"
        index = await self._fetch_json(path, sink)
        if index is None:
            return
        pairings = index.get("pairings") if isinstance(index, Mapping) else None
        if not isinstance(pairings, list):
            self._report_once(sink, path, "no 'pairings' list")
            return
        date = index.get("date") if isinstance(index.get("date"), str) else None
        state = self._rounds.setdefault(rnd, _RoundState())
        jobs = []
        for i, pairing in enumerate(pairings):
            board = i + 1
            if not isinstance(pairing, Mapping):
                self._report_once(sink, f"{path} pairing {board}", "not a JSON object")
                continue
            gs = state.games.setdefault(board, _GameState())
            if gs.pairing != pairing:
                gs.finished_read = False
                gs.pairing = pairing
            if gs.finished_read:
                continue
            jobs.append(self._poll_game(sink, tournament, rnd, board, pairing, date, gs))
        await asyncio.gather(*jobs)

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
        data = await self._fetch_json(path, sink)
        if data is None:  # failed to load: an empty game this poll, not a deleted one
            return
        seen = (data, pairing, tournament, date)
        if len(gs.seen) == 4 and all(a is b or a == b for a, b in zip(seen, gs.seen, strict=True)):
            return  # nothing new (the documents are the cached objects): no parse
        gs.seen = seen
        where = (
            f"round {rnd} board {board} ({player_name(pairing.get('white'))} - "
            f"{player_name(pairing.get('black'))})"
        )
        game = parse_game_json(data, where)
        if game.issues != gs.issues:
            gs.issues = game.issues
            for issue in game.issues:
                self.emitter.error(sink, where, issue)
        snap = make_snapshot(
            self.name, self.cfg.tournament_id, tournament, rnd, board, pairing, game, date
        )
        self.emitter.offer_snapshot(snap, sink, fallback=path)
        if snap.result != "*" and not game.issues:
            gs.finished_read = True

    async def _fetch_json(self, path: str, sink: FeedSink) -> Any:
        """GET a document (conditional); its parsed JSON, or None when it failed."""
        doc = self._docs.setdefault(path, _Doc())
        headers: dict[str, str] = {}
        if doc.etag:
            headers["If-None-Match"] = doc.etag
        if doc.last_modified:
            headers["If-Modified-Since"] = doc.last_modified
        url = f"{self.base}/{path}"
        self.requests += 1
        try:
            async with self._sem:
                resp = await http_get(url, headers=headers, timeout=self.cfg.timeout)
        except HttpError as exc:
            self._report_once(sink, path, f"fetch failed: {exc}")
            return None
        if resp.status == 304 and doc.body is not None:
            doc.failing = None
            return doc.data
        if resp.status != 200:
            self._report_once(sink, path, f"HTTP {resp.status} {resp.reason}".strip())
            return None
        if resp.body == doc.body:
            doc.failing = None
            return doc.data
        try:
            data = json.loads(resp.text())
        except ValueError as exc:
            self._report_once(sink, path, f"invalid JSON: {exc}")
            return None
        doc.etag = resp.headers.get("etag")
        doc.last_modified = resp.headers.get("last-modified")
        doc.body = resp.body
        doc.data = data
        doc.failing = None
        return data

    def _report_once(self, sink: FeedSink, path: str, message: str) -> None:
        """Report a failure when it starts or changes, not on every poll of a failing URL."""
        doc = self._docs.setdefault(path, _Doc())
        if doc.failing == message:
            return
        doc.failing = message
        self.emitter.error(sink, f"{self.base}/{path}", message)
