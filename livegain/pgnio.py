"""PGN files in and out: reading games with clear errors, evaluations from
``[%eval ...]`` comments, and writing annotated PGN.

Evaluations follow lichess's convention: ``[%eval 0.12]`` (pawns, White's
view), ``[%eval #-3]`` (mate in 3 for Black), optionally ``[%eval 0.12,20]``
(with depth). The comment after a move holds the evaluation of the position
after that move; a comment before the first move holds the start position's.
Mate scores and anything beyond 39 pawns become +/-3900 cp.
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Sequence
from pathlib import Path

import chess
import chess.pgn

from livegain.analysis import AnnotatedGame
from livegain.core.evaluation import CLIP_CP, checkmated_score, clip, white_score


class PgnError(ValueError):
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
    """Read every game of a PGN file.

    Raises :class:`PgnError` for a missing or unreadable file, a file without
    games, or a move that cannot be played (naming the game number, the move
    number and the SAN).
    """
    p = Path(path)
    if not p.exists():
        raise PgnError(f"{p}: no such file")
    if p.is_dir():
        raise PgnError(f"{p}: is a directory, expected a PGN file")
    try:
        with p.open("rb") as f:
            gzipped = f.read(2) == b"\x1f\x8b"
        if gzipped:
            with gzip.open(p, "rt", encoding="utf-8-sig", errors="replace") as f:
                text = f.read()
        else:
            text = p.read_text(encoding="utf-8-sig", errors="replace")
    except (OSError, EOFError) as exc:  # EOFError: a cut gzip file
        raise PgnError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})") from exc
    return read_pgn_text(text, source=str(p))


def read_pgn_text(text: str, source: str = "<pgn>") -> list[chess.pgn.Game]:
    """Like :func:`read_pgn_games` for PGN text."""
    stream = io.StringIO(text)
    games: list[chess.pgn.Game] = []
    while True:
        try:
            game = chess.pgn.read_game(stream, Visitor=_QuietBuilder)
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


def _is_empty(game: chess.pgn.Game) -> bool:
    """A "game" made only of stray text: no moves and no real tag."""
    if game.variations:
        return False
    defaults = {"Event", "Site", "Date", "Round", "White", "Black", "Result"}
    for key, value in game.headers.items():
        if key not in defaults or value not in ("?", "????.??.??", "*"):
            return False
    return True


def _players(game: chess.pgn.Game) -> str:
    return f"{game.headers.get('White', '?')} - {game.headers.get('Black', '?')}"


def _describe_error(game: chess.pgn.Game, number: int, error: Exception) -> str:
    try:
        board = game.end().board()
    except ValueError as exc:
        fen = game.headers.get("FEN", "?")
        return f"game {number} ({_players(game)}): invalid FEN {fen!r} ({exc})"
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
        return f"game {number} ({_players(game)}): {error}"
    return f"game {number} ({_players(game)}): {what} {board.fullmove_number}{dots}{san}"


def _move_label(board_before: chess.Board, san: str) -> str:
    dots = "." if board_before.turn == chess.WHITE else "..."
    return f"{board_before.fullmove_number}{dots}{san}"


def _score_of(node: chess.pgn.GameNode, board: chess.Board) -> int | None:
    """The node's ``[%eval]`` as White-view cp, or the value of a finished
    position (checkmate +/-3900, other game end 0); None when unknown."""
    pov = node.eval()
    if pov is not None:
        score = pov.white()
        mate = score.mate()
        if mate is not None:
            if mate == 0:
                if board.is_checkmate():
                    return checkmated_score(white_is_mated=board.turn == chess.WHITE)
                return -CLIP_CP if board.turn == chess.WHITE else CLIP_CP
            return white_score(mate=mate)
        cp = score.score()
        return clip(cp) if cp is not None else None
    if board.is_checkmate():
        return checkmated_score(white_is_mated=board.turn == chess.WHITE)
    if board.is_game_over(claim_draw=False):
        return 0
    return None


def annotated_from_pgn_evals(game: chess.pgn.Game, number: int = 1) -> AnnotatedGame:
    """Build an :class:`AnnotatedGame` from a game's ``[%eval]`` comments.

    Every position after a move needs an evaluation (a finished position,
    checkmate or stalemate, may go without). The start position's evaluation
    comes from a comment before the first move; without one the first move's
    gain cannot be known and is not counted (``counted_from_ply == 2``).
    A game whose evaluations stop for good (lichess evaluates 200 plies at
    most) is kept up to its last evaluated ply, with a note in
    ``extra["truncated"]``. Raises :class:`NoEvalsError` when the game has no
    ``[%eval]`` at all and :class:`PgnError` naming the move when one is
    missing between evaluated plies or unreadable.
    """
    where = f"game {number} ({_players(game)})"
    board = game.board()
    start_fen = None if board.fen() == chess.STARTING_FEN else board.fen()
    first_white = board.turn == chess.WHITE
    nodes = list(game.mainline())
    if not nodes:
        raise NoMovesError(f"{where}: no moves")
    if game.eval() is None and all(n.eval() is None for n in nodes):
        raise NoEvalsError(f"{where}: no [%eval] annotations")
    sans: list[str] = []
    ucis: list[str] = []
    scores: list[int] = []
    start = _score_of(game, board)
    truncated: str | None = None
    for k, node in enumerate(nodes):
        label = _move_label(board, board.san(node.move))
        sans.append(board.san(node.move))
        ucis.append(node.move.uci())
        board.push(node.move)
        s = _score_of(node, board)
        if s is None:
            what = "unreadable [%eval]" if "[%eval" in node.comment else "no [%eval]"
            later = any(n.eval() is not None for n in nodes[k + 1 :])
            if "[%eval" in node.comment or later or k == 0:
                raise PgnError(f"{where}: {what} after {label} (ply {len(sans)})")
            # the evaluations stop here for good (lichess evaluates 200 plies at most)
            sans.pop()
            ucis.pop()
            truncated = f"{where}: evaluated up to ply {k} of {len(nodes)}"
            break
        scores.append(s)
    counted_from = 1
    if start is None:
        # unknown s_0: a placeholder equal to s_1, and ply 1 is not counted
        start = scores[0]
        counted_from = 2
    extra = {"game_number": str(number)}
    if truncated is not None:
        extra["truncated"] = truncated
    return AnnotatedGame(
        headers=dict(game.headers),
        sans=sans,
        ucis=ucis,
        scores=[start, *scores],
        start_fen=start_fen,
        first_mover_is_white=first_white,
        counted_from_ply=counted_from,
        extra=extra,
    )


def annotated_games_from_pgn(
    games: Sequence[chess.pgn.Game],
) -> tuple[list[AnnotatedGame], list[str]]:
    """Annotated games from ``[%eval]`` comments, skipping (with the reason)
    games without any evaluation, without moves, or with a gap.

    Returns (games, skipped messages). Raises :class:`NoEvalsError` when no
    game could be read.
    """
    out: list[AnnotatedGame] = []
    skipped: list[str] = []
    for k, game in enumerate(games, start=1):
        try:
            out.append(annotated_from_pgn_evals(game, k))
        except PgnError as exc:  # this game only: the others are still analysed
            skipped.append(str(exc))
    if not out:
        raise NoEvalsError("no [%eval] annotations in any game (use --evals engine)")
    return out, skipped


def format_eval(cp: int, mate: int | None = None) -> str:
    """``[%eval]`` value: pawns with two decimals, or ``#N`` for a mate."""
    if mate is not None and mate != 0:
        return f"#{mate}"
    return f"{cp / 100:.2f}"


def annotated_pgn(game: AnnotatedGame) -> chess.pgn.Game:
    """A python-chess game with ``[%eval]`` and the gain of each move in comments."""
    out = chess.pgn.Game()
    out.headers.clear()
    for key, value in game.headers.items():
        out.headers[key] = value
    board = chess.Board(game.start_fen) if game.start_fen else chess.Board()
    if game.start_fen:
        out.setup(board)
    mates: list[int | None] = (
        [ev.mate for ev in game.evaluations]
        if game.evaluations is not None
        else [None] * len(game.scores)
    )
    if game.counted_from_ply <= 1:
        out.comment = f"[%eval {format_eval(game.scores[0], mates[0])}]"
    node: chess.pgn.GameNode = out
    white = game.first_mover_is_white
    for ply, uci in enumerate(game.ucis, start=1):
        move = chess.Move.from_uci(uci)
        node = node.add_main_variation(move)
        before, after = game.scores[ply - 1], game.scores[ply]
        delta = after - before
        g = delta if white else -delta
        text = f"[%eval {format_eval(after, mates[ply])}]"
        if ply >= game.counted_from_ply:
            text += f" gain {g / 100:+.2f}"
        node.comment = text
        board.push(move)
        white = not white
    return out


def write_annotated_pgn(games: Sequence[AnnotatedGame], path: str | Path) -> None:
    """Write games with ``[%eval ...]`` (lichess, ChessBase readable) and gains."""
    parts: list[str] = []
    for game in games:
        exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
        parts.append(annotated_pgn(game).accept(exporter))
    Path(path).write_text("\n\n".join(parts) + "\n", encoding="utf-8")
