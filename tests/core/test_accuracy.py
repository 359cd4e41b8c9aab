"""Accuracy (lichess's method) against cases computed by hand."""

from __future__ import annotations

import math
import random

import chess
import pytest

from livegain.core.accuracy import (
    PHASES,
    AccuracyTally,
    GameAccuracy,
    Phase,
    PlayerAccuracy,
    combine,
    game_accuracy,
    harmonic_mean,
    move_accuracies,
    move_accuracy,
    phase_of,
    phases_from_fens,
    pieces_in_fen,
    pieces_on,
    volatility_weights,
    window_size,
)
from livegain.core.evaluation import Evaluation
from livegain.core.wdl import win_percent


def test_win_percent_of_200_cp_by_hand() -> None:
    # 50 + 50 * (2 / (1 + e^(0.00368208 * 200)) - 1) = 50 + 50 * (2 / 3.088437 - 1)
    assert win_percent(-200) == pytest.approx(32.3788, abs=1e-4)


def test_move_accuracy_by_hand() -> None:
    assert move_accuracy(50.0, 50.0) == 100.0
    assert move_accuracy(40.0, 60.0) == 100.0  # a gain is perfect
    # win% 50 -> 32.3785, a drop of 17.6215:
    # 103.16681 * e^(-0.0435442 * 17.6215) - 3.16692 + 1 = 45.7299
    assert move_accuracy(50.0, 32.3785) == pytest.approx(45.7299, abs=1e-3)
    # a drop of 10: 103.16681 * 0.646979 - 2.16692 = 64.5798
    assert move_accuracy(60.0, 50.0) == pytest.approx(64.5798, abs=1e-3)
    # no drop is below 0 or (with the bonus) above 100
    assert move_accuracy(100.0, 0.0) == 0.0
    assert move_accuracy(50.0, 49.999) == 100.0


def test_one_move_each_by_hand() -> None:
    # White drops 0 -> -200 cp, Black keeps it.
    accs, weights = move_accuracies([0, -200, -200])
    assert accs == pytest.approx([45.7299, 100.0], abs=1e-3)
    # windows of 2 positions: sd(50, 32.3785) = 8.8108, sd(32.38, 32.38) = 0 -> 0.5
    assert weights == pytest.approx([8.8108, 0.5], abs=1e-3)
    g = game_accuracy([0, -200, -200])
    assert g.white.overall == 45.7 and g.white.moves == 1
    assert g.black.overall == 100.0 and g.black.moves == 1


def test_weighted_and_harmonic_means_by_hand() -> None:
    scores = [20, 60, -250, -240, 400, 380]
    accs, weights = move_accuracies(scores)
    wp = [win_percent(s) for s in scores]
    # Black's 2nd move (-240 -> 400) drops his win% from 100 - wp[3] to 100 - wp[4]
    drop = wp[4] - wp[3]
    assert accs[3] == pytest.approx(103.1668100711649 * math.exp(-0.04354415 * drop) - 2.1669247)
    assert accs[3] == pytest.approx(8.5023, abs=1e-3)
    # window 2: the sd of two values is half their distance, clipped to [0.5, 12]
    assert weights == pytest.approx(
        [abs(wp[1] - wp[0]) / 2, 12.0, 0.5, 12.0, abs(wp[5] - wp[4]) / 2], abs=1e-9
    )
    g = game_accuracy(scores)
    # Black: weighted (100*12 + 8.5023*12) / 24 = 54.2512; harmonic 2 / (1/100 + 1/8.5023)
    # = 15.6710; their mean 34.961
    assert g.black.overall == 35.0
    wm = (100 * weights[0] + 100 * weights[2] + accs[4] * weights[4]) / (
        weights[0] + weights[2] + weights[4]
    )
    hm = 3 / (2 / 100 + 1 / accs[4])
    assert g.white.overall == round((wm + hm) / 2, 1) == 98.9


def test_harmonic_mean_counts_each_value_as_at_least_one() -> None:
    assert harmonic_mean([0.0, 100.0]) == pytest.approx(2 / (1 + 0.01))
    assert harmonic_mean([]) is None
    assert combine([], []) is None


def test_window_grows_with_the_game() -> None:
    assert [window_size(n) for n in (1, 19, 20, 39, 40, 79, 80, 500)] == [2, 2, 2, 3, 4, 7, 8, 8]
    for n in range(1, 130):
        assert len(volatility_weights([50.0] * (n + 1))) == n
    # window 3 (n = 30): the first move takes the first window, then it slides
    wp = [50.0, 60.0, 70.0] + [70.0] * 28
    w = volatility_weights(wp)
    sd3 = math.sqrt(((50 - 60) ** 2 + 0 + (70 - 60) ** 2) / 3)
    assert w[0] == pytest.approx(sd3) and w[1] == pytest.approx(sd3)
    assert w[2] == pytest.approx(math.sqrt(2 * (10 / 3) ** 2 / 3 + (20 / 3) ** 2 / 3))
    assert w[-1] == 0.5


def test_black_to_move_first_and_skipped_plies() -> None:
    g = game_accuracy([0, 200, 200], first_mover_is_white=False)
    assert g.black.overall == 45.7 and g.white.overall == 100.0
    g = game_accuracy([0, -200, -200, -200], skip={1})
    assert g.white.moves == 1 and g.white.overall == 100.0
    assert game_accuracy([0]).white.overall is None


def test_phase_rule() -> None:
    assert pieces_in_fen(chess.STARTING_FEN) == 14
    assert phase_of(1, 14) == "opening"
    assert phase_of(20, 11) == "opening"
    assert phase_of(21, 14) == "middlegame"
    assert phase_of(12, 10) == "middlegame"
    assert phase_of(5, 6) == "endgame"
    assert phase_of(80, 7) == "middlegame"
    assert phases_from_fens(["8/8/8/4k3/8/8/4K3/4R3 w - - 0 1"], first_ply=41) == ["endgame"]


def test_accuracy_by_phase_uses_the_whole_game_weights() -> None:
    scores = [20, 60, -250, -240, 400, 380]
    phases = ["opening", "opening", "middlegame", "middlegame", "endgame"]
    g = game_accuracy(scores, phases=phases)  # type: ignore[arg-type]
    accs, _ = move_accuracies(scores)
    assert g.black.opening == 100.0
    # one move in a phase: both means are that move's accuracy
    assert g.black.middlegame == round(accs[3], 1) == 8.5
    assert g.white.endgame == round(accs[4], 1) == 96.0
    assert g.black.endgame is None
    assert g.black.phase("middlegame") == 8.5 and g.white.phase("endgame") == 96.0
    with pytest.raises(ValueError):
        game_accuracy(scores, phases=["opening"])


def test_live_accuracy_is_the_ledger_s_and_rolls_back_exactly() -> None:
    from livegain.core.board.registry import BoardRegistry
    from livegain.core.rating import PAPER_ENGINE_RATING
    from livegain.core.snapshot import GameSnapshot, PlayerInfo
    from livegain.publish import convert

    moves = ["e4", "e5", "Nf3", "d6", "d4", "Bg4", "dxe5", "Bxf3", "Qxf3", "dxe5", "Bc4", "Nf6"]

    def snap(n: int) -> GameSnapshot:
        return GameSnapshot(
            source="t",
            white=PlayerInfo("A"),
            black=PlayerInfo("B"),
            moves=tuple(moves[:n]),
            round="1",
            board=1,
        )

    def run(t: BoardRegistry) -> None:
        for _ in range(200):
            reqs = t.pending()
            if not reqs:
                return
            r = reqs[0]
            cp = sum(map(ord, r.fen)) % 301 - 150
            t.record_eval(r.board_id, r.ply, r.fen, Evaluation(cp=cp))

    t = BoardRegistry(PAPER_ENGINE_RATING)
    bid = t.apply(snap(12)).board_id
    assert bid is not None
    run(t)
    g = t.board(bid)
    fens = [g.fen_at(k) for k in range(12)]
    expected = game_accuracy(g.ledger.scores, True, phases_from_fens(fens))
    assert g.accuracy() == expected and expected.white.moves == 6
    state = convert.board_state(g, engine="e")
    assert state.white_accuracy is not None
    assert state.white_accuracy.overall == expected.white.overall
    assert state.black_accuracy is not None and state.black_accuracy.moves == 6
    # a correction back to 7 plies: the figures of a fresh board fed those 7
    t.apply(snap(7))
    fresh = BoardRegistry(PAPER_ENGINE_RATING)
    fb = fresh.apply(snap(7)).board_id
    assert fb is not None
    run(fresh)
    assert g.accuracy() == fresh.board(fb).accuracy()
    assert g.accuracy().white.moves == 4


def test_pieces_on_a_board_and_in_its_fen_are_counted_alike() -> None:
    rng = random.Random(7)
    for _ in range(20):
        board = chess.Board()
        for _ in range(rng.randrange(0, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            assert pieces_on(board) == pieces_in_fen(board.fen())


def _reference(
    scores: list[int], first_white: bool, phases: list[Phase], skip: set[int]
) -> GameAccuracy:
    """lichess's method written out whole, as the module's docstring says it:
    every accuracy and weight of the game, then each side's two means."""
    accs, weights = move_accuracies(scores, first_white)
    out = {}
    for white in (True, False):
        rows = [
            (k, a, w)
            for k, (a, w) in enumerate(zip(accs, weights, strict=True), start=1)
            if ((k % 2 == 1) == (first_white == white)) and k not in skip
        ]

        def mean(sel: list[tuple[int, float, float]]) -> float | None:
            value = combine([a for _, a, _ in sel], [w for _, _, w in sel])
            return None if value is None else round(value, 1)

        by = {ph: mean([r for r in rows if phases[r[0] - 1] == ph]) for ph in PHASES}
        out[white] = PlayerAccuracy(mean(rows), len(rows), **by)
    return GameAccuracy(out[True], out[False])


def test_the_tally_ply_by_ply_is_the_whole_game_recomputed() -> None:
    """At every ply of random games (the window growing from 2 to 8
    positions, both first movers, plies left out), the running tally gives
    what the whole computation gives on the game so far."""
    rng = random.Random(11)
    for _ in range(12):
        n = rng.randint(1, 130)
        scores = [rng.randint(-60, 60)]
        for _ in range(n):
            jump = rng.choice((0, 0, 30, -30, 150, -150, 600, -600, 3900))
            scores.append(max(-3900, min(3900, scores[-1] + rng.randint(-40, 40) + jump)))
        phases: list[Phase] = [rng.choice(PHASES) for _ in range(n)]
        skip = {k for k in range(1, n + 1) if rng.random() < 0.05}
        first_white = rng.random() < 0.7
        tally = AccuracyTally(scores[0], first_white)
        for k in range(1, n + 1):
            tally.push(scores[k], phases[k - 1], k not in skip)
            want = _reference(scores[: k + 1], first_white, phases[:k], skip)
            assert tally.result() == want, (k, n)
        assert game_accuracy(scores, first_white, phases, skip) == want
