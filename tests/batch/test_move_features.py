"""Move features beyond centipawns lost, each on a tiny hand-made game whose
values are worked out by hand: losses by phase and on the win% scale, the
best move's lead, only moves found, the candidates' log-likelihood and its
fitted temperature."""

from __future__ import annotations

import math

import pytest

from livegain.batch.move_features import (
    MoveRecord,
    fit_temperature,
    move_features,
    move_records,
)


def _win(cp: float) -> float:
    """The win% curve written out (cp clipped to +/-1000)."""
    c = max(-1000.0, min(1000.0, cp))
    return 50.0 + 50.0 * (2.0 / (1.0 + math.exp(-0.00368208 * c)) - 1.0)


# ply 1: the second candidate, 10 cp lost; ply 30: the only good move found;
# ply 70: a move outside the candidates, 300 cp lost
SECOND = MoveRecord(1, 30, 20, (("e2e4", 30), ("d2d4", 25), ("g1f3", 10)), "d2d4")
ONLY = MoveRecord(30, 200, 200, (("a1a8", 200), ("a1a7", 100)), "a1a8")
OUTSIDE = MoveRecord(70, 0, -300, (("h2h3", 0), ("g2g3", -20), ("f2f3", -40)), "a2a4")
FORCED = MoveRecord(31, -50, -50, (("e1f1", -50),), "e1f1")


def test_losses_are_centipawns_and_win_percent_dropped() -> None:
    assert (SECOND.loss, ONLY.loss, OUTSIDE.loss) == (10, 0, 300)
    assert SECOND.win_loss == pytest.approx(_win(30) - _win(20))
    assert OUTSIDE.win_loss == pytest.approx(50.0 - _win(-300))
    # a gain is no loss
    assert MoveRecord(5, 0, 40, (), "e2e4").win_loss == 0.0


def test_a_pawn_lost_when_level_weighs_more_than_in_a_won_position() -> None:
    level = MoveRecord(10, 50, -50, (), "e2e4")
    won = MoveRecord(10, 800, 700, (), "e2e4")
    assert level.loss == won.loss == 100
    assert level.win_loss > 3 * won.win_loss


def test_scores_are_clipped_as_the_perceived_model_clips_them() -> None:
    mate_missed = MoveRecord(40, 3900, 500, (("d1h5", 3900), ("d1d2", 500)), "d1d2")
    assert mate_missed.loss == 500  # 1000 - 500
    found = MoveRecord(40, 3900, 3900, (("d1h5", 3900), ("d1d2", 500)), "d1h5")
    assert found.best_gap == 500


def test_best_gap_only_when_the_best_move_was_played_with_a_choice() -> None:
    assert ONLY.best_gap == 100
    assert SECOND.best_gap is None
    assert OUTSIDE.best_gap is None
    assert FORCED.best_gap is None


def test_only_move_needs_the_second_candidate_beyond_the_margin() -> None:
    assert ONLY.only_move and ONLY.found_best
    assert not SECOND.only_move  # 5 cp apart
    assert not FORCED.only_move  # one legal move: no choice
    at_margin = MoveRecord(9, 50, 50, (("a2a3", 50), ("b2b3", 0)), "a2a3")
    assert not at_margin.only_move  # within 50 cp keeps two good moves


def test_log_likelihood_is_the_softmax_of_the_candidates() -> None:
    t = 10.0
    expected = (25 - 30) / t - math.log(1 + math.exp(-0.5) + math.exp(-2.0))
    assert SECOND.log_likelihood(t) == pytest.approx(expected)
    # a move outside the candidates joins them with its own value
    assert OUTSIDE.choice_values() == ([0, -20, -40, -300], 3)
    expected = -300 / t - math.log(1 + math.exp(-2.0) + math.exp(-4.0) + math.exp(-30.0))
    assert OUTSIDE.log_likelihood(t) == pytest.approx(expected)
    # ... never above the worst candidate
    better = MoveRecord(70, 0, 0, (("h2h3", 0), ("g2g3", -20)), "a2a4")
    assert better.choice_values() == ([0, -20, -20], 2)
    with pytest.raises(ValueError, match="temperature"):
        SECOND.log_likelihood(0.0)


def test_fitted_temperature_is_the_maximum_likelihood_one() -> None:
    # best played 3 times in 4, the second (100 cp worse) once: the MLE has
    # sigmoid(100 / T) = 3/4, T = 100 / ln 3
    best = MoveRecord(12, 0, 0, (("e2e4", 0), ("d2d4", -100)), "e2e4")
    second = MoveRecord(12, 0, -100, (("e2e4", 0), ("d2d4", -100)), "d2d4")
    t = fit_temperature([best, best, best, second, FORCED])
    assert t == pytest.approx(100 / math.log(3), rel=1e-3)
    with pytest.raises(ValueError, match="no move"):
        fit_temperature([FORCED])


def test_player_game_features() -> None:
    f = move_features([SECOND, ONLY, OUTSIDE, FORCED], temperature=10.0)
    assert f.moves == 4
    assert f.loss_by_phase == (10.0, 0.0, 300.0)  # FORCED (ply 31, no loss) in the middle
    assert f.loss == pytest.approx(310 / 4)
    assert f.win_loss == pytest.approx((_win(30) - _win(20) + 50.0 - _win(-300)) / 4)
    assert f.best_gap == 100.0
    assert f.only_move_found == pytest.approx(1 / 3)  # three choices, one only move found
    lls = [m.log_likelihood(10.0) for m in (SECOND, ONLY, OUTSIDE)]
    assert f.log_likelihood == pytest.approx(sum(lls) / 3)


def test_difficulty_is_the_loss_expected_of_the_softmax_choice() -> None:
    # SECOND at T = 10: weights e^0, e^-0.5, e^-2 on losses 0, 5, 20 cp:
    # (0.6065307 * 5 + 0.1353353 * 20) / 1.7418660 = 5.7393590 / 1.7418660 = 3.2949487
    assert SECOND.expected_loss(10.0) == pytest.approx(3.2949487, abs=1e-6)
    # ONLY: the second is 100 cp worse; nearly no loss is expected of a choice
    # this clear at T = 10, a large one at T = 1000 (a choice at random)
    assert ONLY.expected_loss(10.0) == pytest.approx(100 * math.exp(-10) / (1 + math.exp(-10)))
    assert ONLY.expected_loss(1000.0) == pytest.approx(100 * math.exp(-0.1) / (1 + math.exp(-0.1)))
    f = move_features([SECOND, ONLY, OUTSIDE, FORCED], temperature=10.0)
    expected = [m.expected_loss(10.0) for m in (SECOND, ONLY, OUTSIDE)]
    assert f.difficulty == pytest.approx(sum(expected) / 3)
    losses = (SECOND.loss, ONLY.loss, OUTSIDE.loss)  # 10, 0, 300
    assert f.excess_loss == pytest.approx(
        sum(lo - e for lo, e in zip(losses, expected, strict=True)) / 3
    )
    assert f.legal_moves is None  # the records do not say
    legal = move_records(
        [1, 2], [30, -20, 35], [[("e2e4", 30)], [("e7e5", -20)]], ["e2e4", "e7e5"], legal=[20, 20]
    )
    assert move_features(legal, temperature=10.0).legal_moves == 20.0
    with pytest.raises(ValueError, match="no candidates"):
        MoveRecord(5, 0, 0, (), "e2e4").expected_loss(10.0)


def test_missing_features_are_none_not_zero() -> None:
    f = move_features([FORCED], temperature=10.0)
    assert f.loss_by_phase == (None, 0.0, None)
    assert (f.best_gap, f.only_move_found, f.log_likelihood) == (None, None, None)
    assert (f.difficulty, f.excess_loss, f.legal_moves) == (None, None, None)
    with pytest.raises(ValueError, match="no move"):
        move_features([], temperature=10.0)


def test_records_read_each_position_from_the_mover_side() -> None:
    # 1. e4 (+30 before, White to move) then Black to move at +20 for White,
    # i.e. -20 for Black; after 1... e5 White is to move at +35
    records = move_records(
        [1, 2],
        [30, -20, 35],
        [[("e2e4", 30), ("d2d4", 25)], [("e7e5", -20)]],
        ["e2e4", "e7e5"],
    )
    assert (records[0].before, records[0].after) == (30, 20)
    assert (records[1].before, records[1].after) == (-20, -35)
    assert records[1].loss == 15
    with pytest.raises(ValueError, match="2 moves need"):
        move_records([1, 2], [30, -20], [[], []], ["e2e4", "e7e5"])


def test_candidates_must_come_best_first() -> None:
    with pytest.raises(ValueError, match="best first"):
        MoveRecord(3, 0, 0, (("a2a3", -10), ("b2b3", 20)), "a2a3")
