"""Fitting, writing and reading an opening table; `livegain fit-opening`;
a perceived model that names its table."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import chess.pgn
import pytest
import tomli_w

from livegain.batch.opening_fit import fit_opening_table, opening_games
from livegain.batch.validity import split_part
from livegain.cli import main
from livegain.models.files import CalibrationError
from livegain.models.opening import load_opening_table, write_opening_table
from livegain.models.perceived import load_perceived_models, perceived_model_toml

#: (moves, White's rating, Black's rating, games): 1.e4 players are strong,
#: 1.d4 players weak; one game opens 1.a3, too few for the table to keep
OPENINGS = (
    ("1. e4 e5 2. Nf3 Nc6 3. Bb5 a6", 2000, 1950, 60),
    ("1. d4 d5 2. c4 e6 3. Nc3 Nf6", 1200, 1250, 60),
    ("1. a3 e5 2. e4 Nf6", 1600, 1600, 1),
)


def _pgn() -> str:
    out = []
    n = 0
    for moves, white, black, count in OPENINGS:
        for i in range(count):
            n += 1
            out.append(
                f'[Event "Rated rapid game"]\n[Site "https://lichess.org/g{n:05d}"]\n'
                f'[White "w{n}"]\n[Black "b{n}"]\n[Result "1/2-1/2"]\n'
                f'[WhiteElo "{white + (i % 5) * 10}"]\n[BlackElo "{black - (i % 5) * 10}"]\n\n'
                f"{moves} 1/2-1/2\n"
            )
    return "\n".join(out)


def _games() -> list[chess.pgn.Game]:
    stream = io.StringIO(_pgn())
    games = []
    while (g := chess.pgn.read_game(stream)) is not None:
        games.append(g)
    return games


def test_the_fit_reads_the_ratings_of_each_opening_from_the_calibration_part() -> None:
    games = _games()
    rows = opening_games(games, plies=4)
    calibration = [g for g in games if split_part(dict(g.headers)) == "calibration"]
    assert len(rows) == 2 * len(calibration) and 0 < len(calibration) < len(games)
    fit = fit_opening_table(rows, 4, "toy", "lichess", {"source": "toy.pgn"})
    t = fit.table
    assert t.m in [m for m, _ in fit.cv] and t.sd > 0
    # each opening's estimate sits near its players' mean, shrunk a little
    assert 1900 < t.estimates["w|e2e4"] <= 2020
    assert 1180 <= t.estimates["w|d2d4"] < 1300
    assert 1900 < t.prior(False, True, ["e2e4", "e7e5", "g1f3", "b8c6"]).rating < 1990
    assert t.prior(True, True, ["d2d4", "d7d5"]).rating < 1300
    # a prefix of fewer than 3 games is left out: 1.a3 reads at White's root
    assert "w|a2a3" not in t.estimates
    assert t.prior(True, True, ["a2a3", "e7e5"]).rating == t.estimates["w|"]


def test_a_table_is_written_and_read_back(tmp_path: Path) -> None:
    fit = fit_opening_table(opening_games(_games(), plies=4), 4, "toy", "lichess", {"date": "x"})
    path = write_opening_table(fit.table, tmp_path / "t.json.gz")
    back = load_opening_table(path)
    assert back.estimates == {k: round(v, 1) for k, v in fit.table.estimates.items()}
    assert (back.name, back.plies, back.m, back.provenance) == (
        "toy",
        4,
        fit.table.m,
        {"date": "x"},
    )
    # the same table, the same bytes
    again = write_opening_table(fit.table, tmp_path / "u.json.gz")
    assert again.read_bytes() == path.read_bytes()
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(b'{"name": "x"}'))
    with pytest.raises(CalibrationError, match=r"bad\.json\.gz: not an opening table"):
        load_opening_table(bad)
    with pytest.raises(CalibrationError, match="not found"):
        load_opening_table(tmp_path / "absent.json.gz")


def test_fit_opening_command_and_a_model_that_names_its_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pgn = tmp_path / "games.pgn"
    pgn.write_text(_pgn())
    out = tmp_path / "opening-toy.json.gz"
    assert main(["fit-opening", str(pgn), "--out", str(out), "--plies", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["plies"] == 4 and report["prefixes"] >= 6 and report["written"] == str(out)
    table = load_opening_table(out)
    assert table.scale == "lichess"
    assert table.provenance["command"].startswith("livegain fit-opening")
    # a model file beside it names it (the shipped lichess models name theirs)
    models = tmp_path / "perceived.toml"

    lichess = [m for m in load_perceived_models() if m.scale == "lichess"]
    assert lichess and all(m.opening is not None for m in lichess)
    entry = perceived_model_toml(lichess[0])
    assert entry["opening"] == "opening-lichess.json.gz"
    entry["opening"] = out.name
    models.write_text(tomli_w.dumps({"model": [entry]}))
    (read,) = load_perceived_models(models)
    assert read.opening is not None and read.opening.estimates == table.estimates
    entry["opening"] = "absent.json.gz"
    models.write_text(tomli_w.dumps({"model": [entry]}))
    with pytest.raises(CalibrationError, match=r"absent\.json\.gz"):
        load_perceived_models(models)
