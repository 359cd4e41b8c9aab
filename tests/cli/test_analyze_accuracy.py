"""`livegain analyze`: each player's accuracy (lichess's method) in the JSON
player-game rows and players, and in the readable tables."""

from __future__ import annotations

import json
from pathlib import Path

import chess
import pytest

import livegain
from livegain.batch.pgn_evals import annotated_games_from_pgn
from livegain.batch.pgnio import read_pgn_text
from livegain.cli import main
from livegain.core.accuracy import game_accuracy, mean_accuracy, phases_from_fens

GOTC = str(Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn")


def test_json_rows_carry_the_games_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", GOTC, "--evals", "pgn", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (game,), _ = annotated_games_from_pgn(read_pgn_text(Path(GOTC).read_text()))
    board = chess.Board()
    fens = []
    for uci in game.ucis:
        fens.append(board.fen())
        board.push_uci(uci)
    expected = game_accuracy(game.scores, True, phases_from_fens(fens))
    g = data["games"][0]
    for color in ("white", "black"):
        acc = g[color]["accuracy"]
        want = expected.of(color)
        assert acc == {
            "overall": want.overall,
            "moves": want.moves,
            "opening": want.opening,
            "middlegame": want.middlegame,
            "endgame": want.endgame,
        }
        assert 0 <= acc["overall"] <= 100 and acc["moves"] > 0
    # one game each: a player's accuracy is his game's
    players = {p["name"]: p for p in data["players"]}
    white = players[g["white"]["name"]]["accuracy"]
    assert white == g["white"]["accuracy"]
    assert mean_accuracy([expected.white]) == expected.white


def test_the_tables_show_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", GOTC, "--evals", "pgn"]) == 0
    out = capsys.readouterr().out
    assert "Accuracy per game" in out and "Middlegame" in out and "Endgame" in out
