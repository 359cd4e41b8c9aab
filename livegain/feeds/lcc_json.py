"""DGT LiveChess Cloud (LCC) JSON documents, read: tournament, round index and
game files into snapshots, every value checked (see :mod:`livegain.feeds.lcc`
for the feed that polls them, and docs/feeds.md).

A move token is ``SAN[ clock][+spent]`` (seconds left / seconds spent, each
optional). When the game's ``clock`` object and the last moves both carry a
time, ``clock`` wins for the current clocks. ``chess960`` 518 is the standard
start; any other number is a Chess960 start position. The game file's own
result (``WHITEWIN``/``BLACKWIN``/``DRAW``) is kept as the tag ``LccResult``.

Every document is untrusted: a bad value (a clock of ``1e999``, NaN or -5, a
string where a number goes, an illegal move, a rating of 10**100) is dropped
with an issue naming the round and the board, and the rest of the game still
applies; a game document that cannot be read at all raises
:class:`LccFormatError`. Pure: no I/O.
"""

from __future__ import annotations

import math
import re
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import chess

from livegain.core.board.board import DEFAULT_MAX_PLIES
from livegain.core.board.results import normalize_result
from livegain.core.errors import LivegainError
from livegain.core.snapshot import RATING_RANGE, GameSnapshot, PlayerInfo
from livegain.feeds.pgn import MAX_TRAILING_ILLEGAL, ply_label

STANDARD_START = 518
_TOKEN_TAIL = re.compile(r"(?:([0-9]{1,9}))?(?:\+([0-9]{1,9}))?")
#: Largest clock or time spent accepted, in seconds (about 11.5 days); more is no chess clock.
MAX_CLOCK_SECONDS = 1_000_000
#: Characters kept of a name, title, federation, event, site or date.
MAX_TEXT = 200
#: Plies per game (the game state's default ``limits.max_plies``); a longer game is refused.
MAX_PLIES = DEFAULT_MAX_PLIES
#: Positions remembered per game after moves that cannot be played (the oldest go first).
MAX_KNOWN_POSITIONS = 32

_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40
_repr.maxlevel = 2
_repr.maxlist = _repr.maxdict = _repr.maxtuple = 4


def show(value: object) -> str:
    """A bad value as an error shows it: its repr, cut to a few dozen characters."""
    try:
        return clip(_repr.repr(value), 80)
    except Exception:  # e.g. an int too long to print
        return f"<{type(value).__name__}>"


def clip(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


class LccFormatError(LivegainError, ValueError):
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


def text_value(value: object) -> str | None:
    """A string field (names, title, federation) stripped and cut; None for anything else."""
    if not isinstance(value, str):
        return None
    return value.strip()[:MAX_TEXT].strip() or None


def player_name(p: object) -> str:
    """``{"fname": "Magnus", "lname": "Carlsen"}`` -> ``Carlsen, Magnus`` (FIDE style)."""
    if not isinstance(p, Mapping):
        return "?"
    first = " ".join(t for t in (text_value(p.get("fname")), text_value(p.get("mname"))) if t)
    last = text_value(p.get("lname")) or ""
    if last and first:
        return clip(f"{last}, {first}", MAX_TEXT)
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
        title=text_value(p.get("title")),
        federation=text_value(p.get("federation")),
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


def empty_game(issue: str) -> LccGame:
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
        return empty_game(
            f"{where}: unreadable game document ({type(exc).__name__}: {clip(str(exc))})"
        )


def _parse_game_json(data: object, where: str, max_plies: int | None) -> LccGame:
    issues: list[str] = []
    if not isinstance(data, Mapping):
        return empty_game(f"{where}: not a JSON object")
    try:
        board, fen = initial_position(data.get("chess960"))
    except LccFormatError as exc:
        return empty_game(f"{where}: {exc}")
    first_white = board.turn == chess.WHITE
    moves: list[str] = []
    clocks: list[int | None] = []
    spent: list[int | None] = []
    after_illegal: tuple[str, ...] = ()
    raw_moves = data.get("moves") or []
    if not isinstance(raw_moves, list):  # no moves to show, and no reason to wipe the board's
        return empty_game(f"{where}: 'moves' is not a list")
    legal = 0
    if max_plies is not None and len(raw_moves) > max_plies:
        return empty_game(
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
                    f"{where} ply {ply} ({label}{clip(shown, 40)}): {clip(str(exc))}; "
                    f"keeping the {len(moves)} moves before it{more}"
                )
            break
        moves.append(board.san(move))
        board.push(move)
        clocks.append(mv.clock)
        spent.append(mv.spent)
        legal = len(moves)
    raw_result = data.get("result")
    result = normalize_result(raw_result) if isinstance(raw_result, str) else None
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
    return (normalize_result(r) if isinstance(r, str) else None) or "*"


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
    name = text_value(tournament.get("name"))
    if name:
        tags.append(("Event", name))
    loc = text_value(tournament.get("location"))
    if loc:
        tags.append(("Site", loc))
    date = text_value(date)
    if date:
        tags.append(("Date", date.replace("-", ".")))
    tags += [("Round", f"{rnd}.{board}"), ("White", white.name), ("Black", black.name)]
    tags.append(("Result", result))
    tc = text_value(tournament.get("timecontrol"))
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
