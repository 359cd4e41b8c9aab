"""Annotated PGN written out: each move's ``[%eval ...]`` (lichess's
convention, which ChessBase and lichess read back) and its gain in the
comments, game by game.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

import chess
import chess.pgn

from livegain.batch.annotated import AnnotatedGame


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


def write_annotated_pgn(games: Iterable[AnnotatedGame], path: str | Path) -> None:
    """Write games with ``[%eval ...]`` (lichess, ChessBase readable) and gains."""
    with AnnotatedPgnWriter(path) as writer:
        for game in games:
            writer.write(game)


class AnnotatedPgnWriter:
    """An annotated PGN file written game by game (:meth:`write`), as
    :func:`write_annotated_pgn` writes it: the games apart by a blank line,
    a newline at the end (:meth:`close`). The file is created at the first
    game (or at :meth:`close` when there is none)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: TextIO | None = None
        self._games = 0
        self._closed = False

    def __enter__(self) -> AnnotatedPgnWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write(self, game: AnnotatedGame) -> None:
        exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
        text = annotated_pgn(game).accept(exporter)
        self._opened().write(("\n\n" if self._games else "") + text)
        self._games += 1

    def close(self) -> None:
        """End the file (a newline) and close it."""
        if self._closed:
            return
        self._closed = True
        out = self._opened()
        try:
            out.write("\n")
        finally:
            out.close()

    def _opened(self) -> TextIO:
        if self._file is None:
            self._file = self.path.open("w", encoding="utf-8")
        return self._file
