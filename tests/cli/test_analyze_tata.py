"""`livegain analyze` on real tournament games (Tata Steel Masters 2022, shared data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from livegain.batch.pgnio import read_pgn_games
from livegain.cli import main


def test_reads_every_game(tata_steel: Path) -> None:
    games = read_pgn_games(tata_steel)
    assert len(games) == 91
    assert all(g.headers.get("WhiteElo") for g in games)


def test_pgn_mode_without_evals_is_an_error(
    tata_steel: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(tata_steel), "--evals", "pgn"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"livegain analyze: error: {tata_steel}: no [%eval] annotations in any game "
        "(use --evals engine)"
    )


@pytest.mark.engine
def test_engine_mode_first_round(
    tata_steel: Path, stockfish: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Round 1 (7 games) at depth 6: every player gets a perceived rating, Algorithm 2
    keeps the mean Elo, Algorithm 3 gives the engine's strength with an interval."""
    games = [g for g in read_pgn_games(tata_steel) if g.headers["Round"].startswith("1.")]
    assert len(games) == 7
    round1 = tmp_path / "round1.pgn"
    round1.write_text("\n\n".join(str(g) for g in games) + "\n")
    out_pgn = tmp_path / "annotated.pgn"
    argv = [
        "analyze", str(round1), "--engine", stockfish, "--depth", "6", "--workers", "2",
        "--cache", str(tmp_path / "cache.sqlite"), "--json", "--output-pgn", str(out_pgn),
    ]  # fmt: skip
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["players"]) == 14
    elos = [p["elo"] for p in data["players"]]
    t = data["tournament"]
    assert t["components"] == 7  # round 1 only: each game is its own component
    for p in data["players"]:
        pr = p["perceived"]
        assert pr["moves"] > 0 and pr["low"] <= pr["rating"] <= pr["high"]
        # one game per component: each pair is shifted to its own mean Elo
    est = [t["ratings"][p["name"]]["estimated"] for p in data["players"]]
    assert sum(est) / 14 == pytest.approx(sum(elos) / 14, abs=0.5)
    assert t["engine_by_elo"]["players"] == 14
    # the annotated PGN reads back in pgn mode to the same per-game figures
    assert main(["analyze", str(out_pgn), "--evals", "pgn", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)

    # (the file names the engine and limit in its Annotator tag: the same models
    # read it; the engine's own W/D/L is not in an [%eval] comment, nor is a
    # draw by rule, e.g. a repetition, that engine mode scores certain: 0.00)
    ruled = {
        (g["number"], p["ply"])
        for g in data["games"]
        for p in g["plies"]
        if p["score"] == 0 and p["wdl"] == {"win": 0, "draw": 1000, "loss": 0}
    }

    def plies(report: dict[str, Any]) -> list[list[dict[str, Any]]]:
        return [
            [
                {
                    **p,
                    "engine_wdl": None,
                    "wdl": None if (g["number"], p["ply"]) in ruled else p["wdl"],
                }
                for p in g["plies"]
            ]
            for g in report["games"]
        ]

    assert all(p["engine_wdl"] is not None for g in data["games"] for p in g["plies"])
    assert plies(again) == plies(data)
    assert again["engine"]["rating"] == data["engine"]["rating"]
    with out_pgn.open() as f:
        first = chess.pgn.read_game(f)
    assert first is not None and first.eval() is not None
