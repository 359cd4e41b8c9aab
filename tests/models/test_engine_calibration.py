"""The shipped calibration file and `livegain calibrate`."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from livegain.cli import main
from livegain.core.rating import PAPER_ENGINE_RATING
from livegain.engine.search import SearchLimit
from livegain.models.engine import (
    EngineCalibration,
    default_engine_histogram,
    default_engine_rating,
    find_calibration,
    load_calibrations,
    shipped_path,
    store_calibration,
)
from livegain.models.files import CalibrationError

REPO = Path(__file__).resolve().parents[2]


def test_missing_or_empty_file_falls_back_to_the_paper(tmp_path: Path) -> None:
    assert default_engine_rating("Stockfish 15.1", 12, tmp_path / "none.toml") == 2860.0
    empty = tmp_path / "empty.toml"
    empty.write_text("# nothing yet\n")
    assert load_calibrations(empty) == []
    assert default_engine_rating(None, SearchLimit(), empty) == PAPER_ENGINE_RATING


def test_lookup_by_engine_and_limit(tmp_path: Path) -> None:
    path = tmp_path / "cal.toml"
    store_calibration(EngineCalibration("Stockfish 15.1", "depth 12", 2901.5), path)
    store_calibration(
        EngineCalibration("Stockfish 15.1", "depth 10", 2850.0, gains={0: 5, -12: 2}), path
    )
    store_calibration(EngineCalibration("Other 1.0", "depth 12", 2500.0), path)
    assert default_engine_rating("Stockfish 15.1", SearchLimit(depth=12), path) == 2901.5
    assert default_engine_rating("stockfish 15.1", "depth  12", path) == 2901.5
    assert default_engine_rating("Stockfish 15.1", 10, path) == 2850.0
    assert default_engine_rating("Other 1.0", 12, path) == 2500.0
    assert default_engine_rating(None, 12, path) == 2901.5  # the default engine: first entry
    assert default_engine_rating("Stockfish 15.1", 14, path) == PAPER_ENGINE_RATING
    assert default_engine_rating("Stockfish 16", 12, path) == PAPER_ENGINE_RATING
    hist = default_engine_histogram("Stockfish 15.1", 10, path)
    assert hist is not None and dict(hist.counts()) == {0: 5, -12: 2}
    assert default_engine_histogram("Stockfish 15.1", 12, path) is None
    # Replacing an entry keeps one entry per (engine, limit) and a measured distribution.
    store_calibration(EngineCalibration("Stockfish 15.1", "depth 10", 2860.0), path)
    entries = load_calibrations(path)
    assert len(entries) == 3
    replaced = find_calibration("Stockfish 15.1", 10, path)
    assert replaced is not None and replaced.rating == 2860.0 and replaced.gains == {0: 5, -12: 2}


def test_malformed_files_name_the_file_and_entry(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[[engine]\nname = 'x'\n")
    with pytest.raises(CalibrationError, match=r"bad\.toml: not valid TOML"):
        load_calibrations(bad)
    bad.write_text("[[engine]]\nname = 'x'\nlimit = 'depth 12'\n")
    with pytest.raises(CalibrationError, match=r"#1: missing 'rating'"):
        load_calibrations(bad)
    bad.write_text("[[engine]]\nname = 'x'\nlimit = 'depth 12'\nrating = 'strong'\n")
    with pytest.raises(CalibrationError, match="bad value"):
        load_calibrations(bad)


def test_shipped_file_is_the_config_file() -> None:
    path = shipped_path()
    assert path.name == "calibration.toml"
    assert path.exists()
    if (REPO / "config" / "calibration.toml").exists():  # a source checkout
        assert path.resolve() == (REPO / "config" / "calibration.toml").resolve()
    for entry in load_calibrations():  # whatever is shipped parses and is sane
        assert 1500 < entry.rating < 4000
        assert entry.source and entry.command and entry.date


PGN = """
[Event "Cal"]
[White "Alpha"]
[Black "Beta"]
[WhiteElo "2700"]
[BlackElo "2600"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O
9. h3 Nb8 10. d4 Nbd7 1-0

[Event "Cal"]
[White "Beta"]
[Black "Gamma"]
[WhiteElo "2600"]
[Result "1/2-1/2"]

1. d4 Nf6 2. c4 e6 3. Nc3 Bb4 4. e3 O-O 5. Bd3 d5 6. Nf3 c5 7. O-O Nc6 1/2-1/2
"""


@pytest.mark.engine
@pytest.mark.timeout(120)
def test_calibrate_command(
    stockfish: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pgn = tmp_path / "cal.pgn"
    pgn.write_text(PGN)
    config = tmp_path / "calibration.toml"
    args = [
        "calibrate",
        str(pgn),
        "--depth",
        "7",
        "--workers",
        "2",
        "--engine",
        stockfish,
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--engine-distribution",
        "--sample",
        "12",
        "--json",
        "--write-config",
        str(config),
    ]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["limit"] == "depth 7" and data["engine"].startswith("Stockfish")
    assert data["positions"] == 21 + 15
    rated = [p for p in data["players"] if p["elo"] is not None]
    assert {p["name"] for p in rated} == {"Alpha", "Beta"}
    assert {p["name"] for p in data["players"]} == {"Alpha", "Beta", "Gamma"}
    # Algorithm 3: the mean of r_i - d_i over rated players.
    expected = statistics.mean(p["elo"] - p["difference"] for p in rated)
    assert data["engine_strength"]["rating"] == pytest.approx(expected, abs=0.1)
    assert data["engine_strength"]["players"] == 2
    gains = data["engine_gains"]
    assert gains["positions"] == 12
    assert sum(gains["counts"].values()) == 12
    assert data["engine_strength_measured_engine"]["players"] == 2
    century = data["game_of_the_century"]
    # Figure 6 of seed 002 with the single peak: Byrne -185, Fischer -43.
    assert abs(century["single_peak"]["white"] + 185) <= 1
    assert abs(century["single_peak"]["black"] + 43) <= 1
    assert abs(century["algorithm1_gap"] - 113) <= 1
    # The written entry is what default_engine_rating now answers.
    entry = find_calibration(data["engine"], "depth 7", config)
    assert entry is not None
    assert entry.rating == pytest.approx(data["engine_strength"]["rating"], abs=0.1)
    assert sum(entry.gains.values()) == 12
    assert default_engine_rating(data["engine"], SearchLimit(depth=7), config) == entry.rating

    # Second run: every position from the cache.
    assert main([*args[:-3], "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["searches"] == 0 and again["cache_hits"] > 0
    assert again["engine_strength"] == data["engine_strength"]


def test_calibrate_needs_rated_players(
    stockfish: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pgn = tmp_path / "unrated.pgn"
    pgn.write_text('[White "A"]\n[Black "B"]\n[Result "*"]\n\n1. e4 e5 2. Nf3 *\n')
    code = main(["calibrate", str(pgn), "--depth", "5", "--workers", "1", "--engine", stockfish])
    assert code == 2
    assert "no player with an Elo tag" in capsys.readouterr().err
    code = main(["calibrate", str(tmp_path / "nope.pgn")])
    assert code == 2
    code = main(["calibrate", str(pgn), "--engine", str(tmp_path / "no-engine")])
    assert code == 2
    assert "no-engine" in capsys.readouterr().err
