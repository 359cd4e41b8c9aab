"""PGN files read as games: plain or gzip-compressed files opened and cut
into games where python-chess cuts them, the games' tags, and errors that
name the file, the game and the move (a bad game skipped with its reason
where the others can still be read).
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, TextIO, cast

import chess
import chess.pgn

from livegain.core.errors import LivegainError


class PgnError(LivegainError, ValueError):
    """A PGN problem the user can fix; the message names the file/game/move."""


class SkippedGameError(PgnError):
    """A game that cannot be analysed but does not spoil the others."""


class NoEvalsError(SkippedGameError):
    """A game without any ``[%eval]`` annotation."""


class NoMovesError(SkippedGameError):
    """A game without moves (a forfeit, an unstarted board)."""


class _QuietBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """Collects parse errors on the game without logging them."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


_SAN_IN_ERROR = re.compile(r"san: '([^']*)'")


def read_pgn_games(path: str | Path) -> list[chess.pgn.Game]:
    """Read every game of a PGN file (plain or gzip-compressed, told apart by
    the gzip magic bytes), streaming it.

    Raises :class:`PgnError` for a missing or unreadable file, a file without
    games, or a move that cannot be played (naming the game number, the move
    number and the SAN). :func:`read_pgn_games_skipping` skips bad games instead.
    """
    p = checked_path(path)
    try:
        with open_pgn(p) as (text, _raw):
            return _read_games(text, str(p))
    except READ_ERRORS as exc:
        raise unreadable(p, exc) from exc


def read_pgn_text(text: str, source: str = "<pgn>") -> list[chess.pgn.Game]:
    """Like :func:`read_pgn_games` for PGN text."""
    return _read_games(io.StringIO(text), source)


def _read_games(stream: TextIO, source: str) -> list[chess.pgn.Game]:
    games: list[chess.pgn.Game] = []
    while True:
        try:
            game = chess.pgn.read_game(stream, Visitor=_QuietBuilder)
        except READ_ERRORS:
            raise
        except Exception as exc:  # the parser's own bugs on hostile text (e.g. a stray ")")
            raise PgnError(
                f"{source}: game {len(games) + 1}: cannot parse ({type(exc).__name__}: {exc})"
            ) from exc
        if game is None:
            break
        number = len(games) + 1
        if game.errors:
            raise PgnError(f"{source}: {_describe_error(game, number, game.errors[0])}")
        if _is_empty(game):
            continue
        games.append(game)
    if not games:
        raise PgnError(f"{source}: no games found")
    return games


_GZIP_MAGIC = b"\x1f\x8b"
#: What reading a (possibly gzip-compressed) file may raise: a cut gzip file
#: ends in EOFError, a corrupt one in BadGzipFile (an OSError) or zlib.error.
READ_ERRORS = (OSError, EOFError, zlib.error)


def checked_path(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise PgnError(f"{p}: no such file")
    if p.is_dir():
        raise PgnError(f"{p}: is a directory, expected a PGN file")
    return p


def unreadable(p: Path, exc: BaseException) -> PgnError:
    return PgnError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})")


@contextmanager
def open_pgn(p: Path) -> Iterator[tuple[TextIO, BinaryIO]]:
    """The file as text (UTF-8, a BOM dropped, bad bytes replaced), gunzipped on
    the fly when it starts with the gzip magic bytes; and the file itself,
    whose position tells how far the reading is."""
    with p.open("rb") as raw:
        gzipped = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        binary: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if gzipped else raw  # type: ignore[assignment]
        yield io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace"), raw


class _LineRecorder:
    """A text stream that keeps the lines read since the last :meth:`take`."""

    def __init__(self, stream: TextIO) -> None:
        self._readline = stream.readline
        self._lines: list[str] = []

    def readline(self) -> str:
        line = self._readline()
        self._lines.append(line)
        return line

    def take(self) -> str:
        text = "".join(self._lines)
        self._lines = []
        return text


def game_texts(stream: TextIO) -> Iterator[str]:
    """The text of each game of a stream, cut where python-chess's reader cuts
    it (:func:`chess.pgn.read_headers` skips a game's moves exactly as
    :func:`chess.pgn.read_game` reads them), without parsing any move: each
    text parses alone as it would in the whole file."""
    recorder = _LineRecorder(stream)
    while chess.pgn.read_headers(cast(TextIO, recorder)) is not None:
        yield recorder.take()


def read_pgn_headers(path: str | Path) -> list[dict[str, str]]:
    """The tags of every game of a PGN file (plain or gzip), without reading
    any move (for figures that need only players, ratings and results)."""
    p = checked_path(path)
    out: list[dict[str, str]] = []
    try:
        with open_pgn(p) as (stream, _raw):
            while (headers := chess.pgn.read_headers(stream)) is not None:
                out.append(dict(headers))
    except (OSError, EOFError, ValueError) as exc:
        raise unreadable(p, exc) from exc
    return out


# ---------------------------------------------------------------------------
# many games, each on its own: a bad game is skipped with its reason


def read_pgn_games_skipping(
    path: str | Path,
) -> tuple[list[chess.pgn.Game], list[int], list[str]]:
    """Like :func:`read_pgn_games`, but a game that cannot be read (an illegal
    move, a bad FEN, text the parser cannot take) is skipped with the reason
    instead of ending the reading: (games, their numbers in the file, skipped
    messages). Raises :class:`PgnError` only when the file cannot be read or
    holds no game that can."""
    p = checked_path(path)
    games: list[chess.pgn.Game] = []
    numbers: list[int] = []
    skipped: list[str] = []
    number = 0
    try:
        with open_pgn(p) as (text, _raw):
            for chunk in game_texts(text):
                try:
                    game = chess.pgn.read_game(io.StringIO(chunk), Visitor=_QuietBuilder)
                except Exception as exc:  # the parser's own bugs on hostile text
                    number += 1
                    skipped.append(f"game {number}: {cannot_parse(exc)}")
                    continue
                if game is None:
                    continue
                if game.errors:
                    number += 1
                    skipped.append(_describe_error(game, number, game.errors[0]))
                    continue
                if _is_empty(game):
                    continue
                number += 1
                games.append(game)
                numbers.append(number)
    except READ_ERRORS as exc:
        raise unreadable(p, exc) from exc
    if not games:
        raise PgnError(nothing_to_analyse(str(p), number, skipped, skipped))
    return games, numbers, skipped


def nothing_to_analyse(source: str, games: int, skipped: list[str], problems: list[str]) -> str:
    """The one-line error when no game of a file can be analysed."""
    if games == 0:
        return f"{source}: no games found"
    if not problems:  # only games without evaluations or without moves
        return f"{source}: no [%eval] annotations in any game (use --evals engine)"
    if len(skipped) == 1:
        return f"{source}: {problems[0]}"
    return f"{source}: {problems[0]} (no game left to analyse: {len(skipped)} skipped)"


def cannot_parse(exc: Exception) -> str:
    return f"cannot parse ({type(exc).__name__}: {exc})"


def _is_empty(game: chess.pgn.Game) -> bool:
    """A "game" made only of stray text: no moves and no real tag."""
    return not game.variations and default_headers(game.headers)


def default_headers(headers: Mapping[str, str]) -> bool:
    defaults = {"Event", "Site", "Date", "Round", "White", "Black", "Result"}
    for key, value in headers.items():
        if key not in defaults or value not in ("?", "????.??.??", "*"):
            return False
    return True


def _players(game: chess.pgn.Game) -> str:
    return players_of(game.headers)


def players_of(headers: Mapping[str, str]) -> str:
    return f"{headers.get('White', '?')} - {headers.get('Black', '?')}"


def _describe_error(game: chess.pgn.Game, number: int, error: Exception) -> str:
    reason = error_reason(lambda: game.end().board(), game.headers, error)
    return f"game {number} ({_players(game)}): {reason}"


def error_reason(
    end_board: Callable[[], chess.Board], headers: Mapping[str, str], error: Exception
) -> str:
    """A parse error in words (``illegal move 4.Qxf7``), from the main line's
    last position (``end_board``)."""
    try:
        board = end_board()
    except ValueError as exc:
        fen = headers.get("FEN", "?")
        return f"invalid FEN {fen!r} ({exc})"
    match = _SAN_IN_ERROR.search(str(error))
    san = match.group(1) if match else "?"
    dots = "." if board.turn == chess.WHITE else "..."
    kind = type(error).__name__
    if kind == "IllegalMoveError":
        what = "illegal move"
    elif kind == "AmbiguousMoveError":
        what = "ambiguous move"
    elif kind == "InvalidMoveError":
        what = "invalid move"
    else:
        return str(error)
    return f"{what} {board.fullmove_number}{dots}{san}"
