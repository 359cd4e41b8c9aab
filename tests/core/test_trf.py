"""bench/trf.py: the TRF file bbpPairings reads, and its pairing read back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import trf


def test_writer_lines_of_a_tiny_event() -> None:
    # round 1 of five players: A beat C, D drew B, E had the pairing-allocated
    # bye; D is absent from round 2, the round to pair
    text = trf.from_rounds(
        ["A", "B", "C", "D", "E"],
        [[("A", "C", "1-0"), ("D", "B", "1/2-1/2")]],
        {"A", "B", "C", "E"},
        5,
        byes=[{"E": "U"}],
        ratings={"A": 2400},
    )
    name = " " * 33
    assert text.splitlines() == [
        "012",
        f"001    1      A{name[1:]} 2400{' ' * 28} 1.0    1  0003 w 1",
        f"001    2      B{name[1:]}     {' ' * 28} 0.5    3  0004 b =",
        f"001    3      C{name[1:]}     {' ' * 28} 0.0    5  0001 b 0",
        f"001    4      D{name[1:]}     {' ' * 28} 0.5    4  0002 w =  0000 - Z",
        f"001    5      E{name[1:]}     {' ' * 28} 1.0    2  0000 - U",
        "XXR 5",
        "XXC white1",
    ]
    line = text.splitlines()[4]
    # the columns bbp reads: pairing number, rating, points, then a record per round
    assert (line[4:8], line[80:84], line[91:99], line[101:109]) == (
        "   4",
        " 0.5",
        "0002 w =",
        "0000 - Z",
    )


def test_writer_refuses_bad_states() -> None:
    with pytest.raises(ValueError, match="plays twice"):
        trf.from_rounds(["A", "B", "C"], [[("A", "B", "1-0"), ("B", "C", "1-0")]], {"A"}, 3)
    with pytest.raises(ValueError, match="not in the initial order"):
        trf.from_rounds(["A", "B"], [[("A", "X", "1-0")]], {"A"}, 3)
    with pytest.raises(ValueError, match="no round left"):
        trf.from_rounds(["A", "B"], [[("A", "B", "1-0")]], {"A", "B"}, 1)


def test_pairing_read_back() -> None:
    got = trf.read_pairing("3\n5 1\n2 3\n4 0\n")
    assert got == trf.Paired(((5, 1), (2, 3)), 4)
    with pytest.raises(ValueError, match="2 pairs announced, 1 lines"):
        trf.read_pairing("2\n5 1\n")
