"""Figures of seed 002 reproduced through the real `livegain analyze` command.

The game of the century (Figure 1) is analysed from the shipped PGN with its
[%eval] comments: Algorithm 1 gives 0.345 / 0.655 and +113 for Black, and
Algorithm 4 ends at -185 (Byrne) and -43 (Fischer) with the traces of Figure 6.
Tables 1, 3 and 4 are in test_tournament.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import chess.pgn
import pytest
from scipy.special import ndtri

import livegain
from livegain.cli import main

GOTC_PATH = Path(livegain.__file__).parent / "data" / "game_of_the_century.pgn"

# Figure 1: (SAN, evaluation in pawns, gain in pawns), ply by ply
FIGURE1 = [
    ("Nf3", 0.12, -0.01), ("Nf6", 0.12, 0.00), ("c4", 0.07, -0.05), ("g6", 0.23, -0.16),
    ("Nc3", 0.10, -0.13), ("Bg7", 0.21, -0.11), ("d4", 0.19, -0.02), ("O-O", 0.23, -0.04),
    ("Bf4", 0.06, -0.17), ("d5", 0.16, -0.10), ("Qb3", 0.07, -0.09), ("dxc4", 0.05, 0.02),
    ("Qxc4", 0.05, 0.00), ("c6", 0.09, -0.04), ("e4", 0.05, -0.04), ("Nbd7", 0.18, -0.13),
    ("Rd1", 0.15, -0.03), ("Nb6", 0.18, -0.03), ("Qc5", 0.24, 0.06), ("Bg4", 0.28, -0.04),
    ("Bg5", -1.09, -1.37), ("Na4", -1.09, 0.00), ("Qa3", -1.12, -0.03), ("Nxc3", -1.11, -0.01),
    ("bxc3", -1.10, 0.01), ("Nxe4", -1.11, 0.01), ("Bxe7", -1.68, -0.57), ("Qb6", -1.30, -0.38),
    ("Bc4", -1.26, 0.04), ("Nxc3", -1.39, 0.13), ("Bc5", -1.48, -0.09), ("Rfe8+", -1.22, -0.26),
    ("Kf1", -1.26, -0.04), ("Be6", -1.15, -0.11), ("Bxb6", -6.71, -5.56), ("Bxc4+", -6.62, -0.09),
    ("Kg1", -6.64, -0.02), ("Ne2+", -6.64, 0.00), ("Kf1", -6.64, 0.00), ("Nxd4+", -6.64, 0.00),
    ("Kg1", -6.64, 0.00), ("Ne2+", -6.82, 0.18), ("Kf1", -6.82, 0.00), ("Nc3+", -6.82, 0.00),
    ("Kg1", -6.82, 0.00), ("axb6", -6.80, -0.02), ("Qb4", -6.83, -0.03), ("Ra4", -6.86, 0.03),
    ("Qxb6", -7.41, -0.55), ("Nxd1", -7.24, -0.17), ("h3", -9.84, -2.60), ("Rxa2", -10.05, 0.21),
    ("Kh2", -10.47, -0.42), ("Nxf2", -10.64, 0.17), ("Re1", -11.99, -1.35), ("Rxe1", -11.57, -0.42),
    ("Qd8+", -11.57, 0.00), ("Bf8", -11.57, 0.00), ("Nxe1", -11.14, 0.43), ("Bd5", -12.01, 0.87),
    ("Nf3", -12.75, -0.74), ("Ne4", -12.90, 0.15), ("Qb8", -13.37, -0.47), ("b5", -13.37, 0.00),
    ("h4", -13.37, 0.00), ("h5", -13.84, 0.47), ("Ne5", -24.09, -10.25), ("Kg7", -27.82, 3.73),
    ("Kg1", -39.00, -11.18), ("Bc5+", -39.00, 0.00), ("Kf1", -39.00, 0.00), ("Ng3+", -39.00, 0.00),
    ("Ke1", -39.00, 0.00), ("Bb4+", -39.00, 0.00), ("Kd1", -39.00, 0.00), ("Bb3+", -39.00, 0.00),
    ("Kc1", -39.00, 0.00), ("Ne2+", -39.00, 0.00), ("Kb1", -39.00, 0.00), ("Nc3+", -39.00, 0.00),
    ("Kc1", -39.00, 0.00), ("Rc2#", -39.00, 0.00),
]  # fmt: skip
START_EVAL = 0.13


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["analyze", str(GOTC_PATH), "--evals", "pgn", "--json"])
    assert code == 0
    data: dict[str, Any] = json.loads(buf.getvalue())
    return data


def test_figure1_gains_are_differences_of_its_evaluations() -> None:
    before = START_EVAL
    for ply, (san, ev, g) in enumerate(FIGURE1, start=1):
        delta = ev - before
        expected = delta if ply % 2 == 1 else -delta
        assert round(expected, 2) == pytest.approx(g, abs=1e-9), (ply, san)
        before = ev


def test_shipped_pgn_holds_figure1() -> None:
    with GOTC_PATH.open() as f:
        game = chess.pgn.read_game(f)
    assert game is not None
    root_eval = game.eval()
    assert root_eval is not None and root_eval.white().score() == 13
    nodes = list(game.mainline())
    assert len(nodes) == len(FIGURE1) == 82
    for node, (san, ev, _) in zip(nodes, FIGURE1, strict=True):
        assert node.san() == san
        pov = node.eval()
        assert pov is not None and pov.white().score() == round(ev * 100)
    assert nodes[-1].board().is_checkmate()


def test_algorithm1_head_to_head(report: dict[str, Any]) -> None:
    h = report["games"][0]["head_to_head"]
    assert round(h["expected"], 3) == 0.345
    assert round(h["expected_other"], 3) == 0.655
    assert round(h["difference"]) == -113  # White's view: +113 for Fischer
    assert h["low"] < h["difference"] < h["high"]


def _paper_trace(gains: list[float]) -> list[tuple[float, bool]]:
    """Algorithm 4 by hand: p after each move, d = 200 sqrt2 Phi^-1(p), -inf -> bounded."""
    out = []
    pos = zero = 0
    for k, g in enumerate(gains, start=1):
        pos += g > 0
        zero += g == 0
        p = (pos + 0.5 * zero) / k
        if p == 0.0:
            out.append((-math.inf, True))
        else:
            out.append((200 * math.sqrt(2) * float(ndtri(p)), False))
    return out


def test_algorithm4_final_values(report: dict[str, Any]) -> None:
    game = report["games"][0]
    assert game["white"]["name"] == "Byrne, Donald"
    assert round(game["white"]["algorithm4"]["difference"]) == -185
    assert round(game["black"]["algorithm4"]["difference"]) == -43
    assert round(game["white"]["algorithm4"]["rating"]) == 2860 - 185
    assert round(game["black"]["algorithm4"]["rating"]) == 2860 - 43
    assert game["white"]["algorithm4"]["moves"] == 41 == game["black"]["algorithm4"]["moves"]
    # section 3: mean gains -0.86 and ~0.10
    assert game["white"]["mean_gain"] == pytest.approx(-86.0, abs=0.5)
    assert game["black"]["mean_gain"] == pytest.approx(9.4, abs=0.1)


def _algorithm4_trace(side: dict[str, Any]) -> list[dict[str, Any]]:
    """Each trace entry's Algorithm 4 values, with its move."""
    return [dict(t["algorithm4"], move=t["move"]) for t in side["trace"]]


def test_figure6_traces(report: dict[str, Any]) -> None:
    game = report["games"][0]
    figure_gains = [g for _, _, g in FIGURE1]
    for color, gains in (("white", figure_gains[0::2]), ("black", figure_gains[1::2])):
        trace = _algorithm4_trace(game[color])
        assert len(trace) == 41
        expected = _paper_trace(gains)
        for point, (d, minus_infinity) in zip(trace, expected, strict=True):
            if minus_infinity:
                assert point["bounded"] and point["difference"] == -800.0
            else:
                assert point["difference"] == pytest.approx(d, abs=0.06)
            assert point["low"] <= point["rating"] <= point["high"]
    byrne = _algorithm4_trace(game["white"])
    # "for the first six moves ... an expected score of zero and d = -infinity"
    assert [p["bounded"] for p in byrne[:7]] == [True] * 6 + [False]
    assert all(p["difference"] == -800.0 for p in byrne[:6])
    assert [p["move"] for p in byrne[:2]] == ["1.Nf3", "2.c4"]
    fischer = _algorithm4_trace(game["black"])
    # "Fischer begins with a move of zero gain ... p = 0.5 and d = 0"
    assert fischer[0]["expected"] == 0.5 and fischer[0]["difference"] == 0.0
    # "decreases sharply in the first few moves ... then rises up to -43"
    low_point = min(range(41), key=lambda k: fischer[k]["difference"])
    assert low_point < 6 and fischer[low_point]["difference"] < -300
    assert (
        round(fischer[-1]["difference"]) == -43 == max(round(p["difference"]) for p in fischer[10:])
    )


def test_demo_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--batch"]) == 0
    out = capsys.readouterr().out
    assert "Fischer, Robert James" in out and "2817" in out and "2675" in out
    assert "0.345" in out and "+113" in out
