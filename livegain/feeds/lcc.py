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
the board, and the rest of that game and every other game still apply. A
game document that cannot be read at all (not JSON, not an object, larger
than ``max_bytes``, nested deeper than :data:`MAX_DEPTH`, ``moves`` not a
list, a bad ``chess960``, more than :data:`MAX_PLIES` moves) is skipped this
poll with such an error and the board keeps what it showed; a bad round index
skips that round only; a bad ``tournament.json`` fails the poll (and backs
off) but keeps every board as it was. Past ``max_games`` pairings in a round,
the rest are not followed. A problem is reported when it starts or changes,
not on every poll while it lasts; every report is counted (``errors``).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import chess

from livegain.core.events import GameSnapshot, PlayerInfo
from livegain.core.game import DEFAULT_MAX_PLIES
from livegain.feeds._common import BACKOFF, Backoff, Emitter
from livegain.feeds._http import HttpError, http_get, http_session
from livegain.feeds.base import FeedSink, LccFeedConfig, source_sink
from livegain.feeds.pgn import MAX_TRAILING_ILLEGAL, ply_label

STANDARD_START = 518
LCC_RESULTS = {"WHITEWIN": "1-0", "BLACKWIN": "0-1", "DRAW": "1/2-1/2", "*": "*"}
INDEX_RESULTS = {"1-0", "0-1", "1/2-1/2", "*", "½-½"}
_TOKEN_TAIL = re.compile(r"(?:([0-9]{1,9}))?(?:\+([0-9]{1,9}))?")
MAX_CONCURRENT = 6
#: Largest clock or time spent accepted, in seconds (about 11.5 days); more is no chess clock.
MAX_CLOCK_SECONDS = 1_000_000
#: Official ratings accepted (Elo); anything else is dropped with an error.
RATING_RANGE = (1, 3999)
#: Characters kept of a name, title, federation, event, site or date.
MAX_TEXT = 200
#: Deepest nesting of a JSON document (LCC's own documents are 4 levels deep).
MAX_DEPTH = 32
#: Rounds followed when tournament.json lists more (reported once).
MAX_ROUNDS = 200
#: Plies per game (the game state's default ``limits.max_plies``); a longer game is refused.
MAX_PLIES = DEFAULT_MAX_PLIES
#: Positions remembered per game after moves that cannot be played (the oldest go first).
MAX_KNOWN_POSITIONS = 32
#: Game documents with more move tokens than this are read in a worker thread.
OFF_LOOP_MOVES = 300

_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40
_repr.maxlevel = 2
_repr.maxlist = _repr.maxdict = _repr.maxtuple = 4


def show(value: object) -> str:
    """A bad value as an error shows it: its repr, cut to a few dozen characters."""
    try:
        return _clip(_repr.repr(value), 80)
    except Exception:  # e.g. an int too long to print
        return f"<{type(value).__name__}>"


def _clip(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


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
        raise LccFormatError(f"move token {show(token)} is not a non-empty string")
    san, _, tail = token.strip().partition(" ")
    tail = tail.strip()
    m = _TOKEN_TAIL.fullmatch(tail)
    if not m:
        raise LccFormatError(f"move token {show(token)}: cannot read clock/spent {show(tail)}")
    clock = int(m.group(1)) if m.group(1) else None
    spent = int(m.group(2)) if m.group(2) else None
    for what, v in (("clock", clock), ("time spent", spent)):
        if v is not None and v > MAX_CLOCK_SECONDS:
            raise LccFormatError(
                f"move token {show(token)}: {what} {v} s is out of range 0..{MAX_CLOCK_SECONDS}"
            )
    return LccMove(san, clock, spent)


def _text(value: object) -> str | None:
    """A string field (names, title, federation) stripped and cut; None for anything else."""
    if not isinstance(value, str):
        return None
    return value.strip()[:MAX_TEXT].strip() or None


def player_name(p: object) -> str:
    """``{"fname": "Magnus", "lname": "Carlsen"}`` -> ``Carlsen, Magnus`` (FIDE style)."""
    if not isinstance(p, Mapping):
        return "?"
    first = " ".join(t for t in (_text(p.get("fname")), _text(p.get("mname"))) if t)
    last = _text(p.get("lname")) or ""
    if last and first:
        return _clip(f"{last}, {first}", MAX_TEXT)
    return last or first or "?"


def player_info(p: object, issues: list[str] | None = None, who: str = "player") -> PlayerInfo:
    """A pairing's player; values of the wrong type or range are dropped and, when
    ``issues`` is given, listed there (``who`` names the player: ``white``)."""
    if not isinstance(p, Mapping):
        if p is not None and issues is not None:
            issues.append(f"{who} {show(p)} is not an object")
        p = {}

    def bad(key: str, why: str) -> None:
        if issues is not None:
            issues.append(f"{who} {key} {show(p.get(key))} {why}")

    for key in ("fname", "mname", "lname", "title", "federation"):
        if p.get(key) is not None and not isinstance(p.get(key), str):
            bad(key, "is not a string")
    fide = _fide_id(p.get("fideid"))
    if fide is None and p.get("fideid") not in (None, "", 0, "0"):
        bad("fideid", "is not a FIDE id")
    raw_rating = p.get("rating")
    rating: int | None = None
    if isinstance(raw_rating, int) and not isinstance(raw_rating, bool):
        if RATING_RANGE[0] <= raw_rating <= RATING_RANGE[1]:
            rating = raw_rating
        elif raw_rating != 0:  # 0: unrated
            bad("rating", f"is out of range {RATING_RANGE[0]}..{RATING_RANGE[1]}")
    elif raw_rating is not None:
        bad("rating", "is not a whole number")
    return PlayerInfo(
        name=player_name(p),
        title=_text(p.get("title")),
        federation=_text(p.get("federation")),
        rating=rating,
        fide_id=fide,
    )


def _fide_id(v: object) -> str | None:
    """An int or a string of ASCII digits, not zero; at most 12 digits."""
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v) if 0 < v < 10**12 else None
    if isinstance(v, str):
        s = v.strip()
        if 0 < len(s) <= 12 and s.isascii() and s.isdigit() and int(s) != 0:
            return s
    return None


def initial_position(chess960: object) -> tuple[chess.Board, str | None]:
    """518 (or absent) -> the standard start; another number -> that Chess960 position."""
    if chess960 is None or chess960 == STANDARD_START:
        return chess.Board(), None
    if not isinstance(chess960, int) or isinstance(chess960, bool) or not 0 <= chess960 <= 959:
        raise LccFormatError(f"chess960 {show(chess960)} is not a position number 0..959")
    board = chess.Board.from_chess960_pos(chess960)
    return board, board.fen()


def seconds(value: object) -> int | None:
    """A clock value in whole seconds: a finite number in 0..MAX_CLOCK_SECONDS, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not 0 <= value <= MAX_CLOCK_SECONDS:
        return None
    return int(value)


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
    skipped: bool = False  # nothing could be read: not a game to show (nor an empty one)
    after_illegal: tuple[str, ...] = ()  # the moves from an illegal one on (not trailing)
    fen: str | None = None  # the current position, when the file gives it
    legal: int = 0  # how many of ``moves`` were played as legal moves

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.moves + self.after_illegal


def _empty(issue: str) -> LccGame:
    return LccGame((), (), (), None, None, None, None, None, (issue,), skipped=True)


def _position_text(value: object) -> str | None:
    """A FEN, or a piece placement alone, that python-chess reads; else None."""
    if not isinstance(value, str) or not 0 < len(value.strip()) <= 100:
        return None
    text = value.strip()
    try:
        if " " in text:
            chess.Board(text)
        else:
            chess.BaseBoard(text)
    except ValueError:
        return None
    return text


def parse_game_json(data: object, where: str, max_plies: int | None = MAX_PLIES) -> LccGame:
    """Read a ``game-N.json`` document. Never raises: problems are listed in
    ``issues`` (each starting with ``where``), the readable rest is kept. A game
    with more than ``max_plies`` moves (None: no limit) is refused unread."""
    try:
        return _parse_game_json(data, where, max_plies)
    except Exception as exc:  # a case the checks below missed must not stop the feed
        return _empty(
            f"{where}: unreadable game document ({type(exc).__name__}: {_clip(str(exc))})"
        )


def _parse_game_json(data: object, where: str, max_plies: int | None) -> LccGame:
    issues: list[str] = []
    if not isinstance(data, Mapping):
        return _empty(f"{where}: not a JSON object")
    try:
        board, fen = initial_position(data.get("chess960"))
    except LccFormatError as exc:
        return _empty(f"{where}: {exc}")
    first_white = board.turn == chess.WHITE
    moves: list[str] = []
    clocks: list[int | None] = []
    spent: list[int | None] = []
    after_illegal: tuple[str, ...] = ()
    raw_moves = data.get("moves") or []
    if not isinstance(raw_moves, list):  # no moves to show, and no reason to wipe the board's
        return _empty(f"{where}: 'moves' is not a list")
    legal = 0
    if max_plies is not None and len(raw_moves) > max_plies:
        return _empty(
            f"{where}: {len(raw_moves)} moves, more than the limit of {max_plies} (max_plies): "
            "game refused"
        )
    for i, token in enumerate(raw_moves):
        ply = len(moves) + 1
        label = ply_label(ply, first_white)
        try:
            mv = parse_move_token(token)
            move = board.parse_san(mv.san)
        except ValueError as exc:  # LccFormatError, or python-chess's illegal/invalid SAN
            tail = _trailing(raw_moves[i:])
            if tail is not None:
                # up to two illegal moves at the very end (DGT's "kings in the centre"
                # result signal) go on as they are: the game state reads them
                moves += [t.san for t in tail]
                clocks += [t.clock for t in tail]
                spent += [t.spent for t in tail]
            else:
                shown = token if isinstance(token, str) else show(token)
                rest = _trailing(raw_moves[i:], limit=None)
                more = ""
                if rest is not None:  # the game went on: the rest goes on, as it came
                    after_illegal = tuple(t.san for t in rest)
                    more = f" ({len(rest) - 1} more after it, passed on)"
                issues.append(
                    f"{where} ply {ply} ({label}{_clip(shown, 40)}): {_clip(str(exc))}; "
                    f"keeping the {len(moves)} moves before it{more}"
                )
            break
        moves.append(board.san(move))
        board.push(move)
        clocks.append(mv.clock)
        spent.append(mv.spent)
        legal = len(moves)
    raw_result = data.get("result")
    result = LCC_RESULTS.get(raw_result) if isinstance(raw_result, str) else None
    if raw_result is not None and result is None:
        issues.append(f"{where}: unknown result {show(raw_result)}")
    clock_white = _last(clocks, 0 if first_white else 1)
    clock_black = _last(clocks, 1 if first_white else 0)
    clock = data.get("clock")
    if isinstance(clock, Mapping):
        w, b = clock.get("white"), clock.get("black")
        if seconds(w) is not None:
            clock_white = seconds(w)
        elif w is not None:
            issues.append(f"{where}: white clock {show(w)} is not 0..{MAX_CLOCK_SECONDS} seconds")
        if seconds(b) is not None:
            clock_black = seconds(b)
        elif b is not None:
            issues.append(f"{where}: black clock {show(b)} is not 0..{MAX_CLOCK_SECONDS} seconds")
    elif clock is not None:
        issues.append(f"{where}: 'clock' is not an object")
    live = data.get("live") if isinstance(data.get("live"), bool) else None
    position = data.get("fen")
    current = _position_text(position)
    if position is not None and current is None:
        issues.append(f"{where}: 'fen' {show(position)} is not a position")
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
        after_illegal=after_illegal,
        fen=current,
        legal=legal,
    )


def _trailing(
    tokens: Sequence[object], limit: int | None = MAX_TRAILING_ILLEGAL
) -> list[LccMove] | None:
    """The last tokens as moves when they are few enough (``limit``; None: any
    number) to be passed on unchecked, and all readable."""
    if limit is not None and len(tokens) > limit:
        return None
    try:
        return [parse_move_token(t) for t in tokens]
    except LccFormatError:
        return None


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


def depth_exceeds(data: object, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON value nests lists/objects deeper than ``limit`` (no recursion)."""
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, Mapping):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


def make_snapshot(
    source: str,
    tournament_id: str,
    tournament: Mapping[str, Any],
    rnd: int,
    board: int,
    pairing: Mapping[str, Any],
    game: LccGame,
    date: str | None = None,
    issues: list[str] | None = None,
    fens: tuple[str | None, ...] = (),
) -> GameSnapshot:
    """The snapshot of one board; bad pairing values are dropped and, when ``issues``
    is given, listed there. ``fens``: the positions the feed knows per ply (see
    :func:`positions`)."""
    white = player_info(pairing.get("white"), issues, "white")
    black = player_info(pairing.get("black"), issues, "black")
    result = pairing_result(pairing)
    tags: list[tuple[str, str]] = []
    name = _text(tournament.get("name"))
    if name:
        tags.append(("Event", name))
    loc = _text(tournament.get("location"))
    if loc:
        tags.append(("Site", loc))
    date = _text(date)
    if date:
        tags.append(("Date", date.replace("-", ".")))
    tags += [("Round", f"{rnd}.{board}"), ("White", white.name), ("Black", black.name)]
    tags.append(("Result", result))
    tc = _text(tournament.get("timecontrol"))
    if tc:
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
        event=name,
        round=str(rnd),
        board=board,
        initial_fen=game.initial_fen,
        tags=tuple(tags),
        clock_white=game.clock_white,
        clock_black=game.clock_black,
        after_illegal=game.after_illegal,
        fens=fens,
    )


def positions(game: LccGame, known: dict[tuple[int, str], str]) -> tuple[str | None, ...]:
    """The snapshot's ``fens``: for each move that is no legal move (past
    ``game.legal``), the position reported after it: the file's current ``fen``
    when it is the last move (remembered in ``known``, keyed by ply index and
    move), else what ``known`` remembers for that move. Empty when there is none."""
    tokens = game.tokens
    last = len(tokens) - 1
    if last < game.legal:
        return ()
    if game.fen is not None:
        known[(last, tokens[last])] = game.fen
        while len(known) > MAX_KNOWN_POSITIONS:
            del known[next(iter(known))]
    out: list[str | None] = [None] * len(tokens)
    for (i, tok), fen in known.items():
        if game.legal <= i <= last and tokens[i] == tok:
            out[i] = fen
    return tuple(out) if any(f is not None for f in out) else ()


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

    @property
    def errors(self) -> int:
        return self.emitter.errors

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
                sink, self.base, f"internal error: {type(exc).__name__}: {_clip(str(exc))}"
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
        for rnd in self._wanted_rounds(sink, tournament):
            try:
                await self._poll_round(sink, tournament, rnd)
            except Exception as exc:  # one round's bug must not stop the others
                self._report_once(
                    sink,
                    f"round-{rnd}/index.json#internal",
                    f"round {rnd} skipped this poll: internal error: {type(exc).__name__}: "
                    f"{_clip(str(exc))}",
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

    async def _poll_round(self, sink: FeedSink, tournament: Mapping[str, Any], rnd: int) -> None:
        path = f"round-{rnd}/index.json"
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
        date = _text(index.get("date"))
        state = self._rounds.setdefault(rnd, _RoundState())
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
            if gs.finished_read:
                continue
            boards.append(board)
            jobs.append(self._poll_game(sink, tournament, rnd, board, pairing, date, gs))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        for board, res in zip(boards, results, strict=True):
            if isinstance(res, Exception):  # _poll_game guards itself; never lose a report
                self.emitter.error(
                    sink,
                    f"round {rnd} board {board}",
                    f"internal error: {type(res).__name__}: {_clip(str(res))}",
                )
            elif isinstance(res, BaseException):
                raise res

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
            game = _empty(f"{where}: unreadable game ({type(exc).__name__}: {_clip(str(exc))})")
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

        try:
            async with self._sem:
                resp = await http_get(
                    url,
                    headers=headers,
                    timeout=self.cfg.timeout,
                    max_body=self.max_bytes,
                    session=self._session,
                )
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
            data = json.loads(resp.text())
        except RecursionError:
            fail(f"invalid JSON: nested deeper than {MAX_DEPTH} levels")
            return None
        except ValueError as exc:
            fail(f"invalid JSON: {_clip(str(exc))}")
            return None
        if depth_exceeds(data):
            fail(f"invalid JSON: nested deeper than {MAX_DEPTH} levels")
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
