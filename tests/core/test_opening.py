"""The opening prior (livegain.core.opening) and the perceived rating that
combines it with the moves' evidence, in the model and in the ledger."""

from __future__ import annotations

import numpy as np
import pytest

from livegain.batch.validity import fit_model
from livegain.core.ledger import GameLedger
from livegain.core.opening import OpeningPrior, OpeningTable, opening_keys
from livegain.core.perceived import MoveClasses, PerceivedModel

from .synthetic_players import synthetic as _synthetic

CLASSES = MoveClasses()


def test_keys_end_at_the_players_last_move_within_the_plies() -> None:
    moves = ["e2e4", "c7c5", "g1f3", "d7d6", "d2d4"]
    assert opening_keys(True, True, moves, 4) == ["w|", "w|e2e4", "w|e2e4 c7c5", "w|e2e4 c7c5 g1f3"]
    assert opening_keys(False, True, moves, 4)[-1] == "b|e2e4 c7c5 g1f3 d7d6"
    assert opening_keys(False, True, moves, 3)[-1] == "b|e2e4 c7c5"
    # before the player's first move: his side's root only
    assert opening_keys(False, True, ["e2e4"], 12) == ["b|"]
    # Black moved first (a game from a position with Black to move)
    assert opening_keys(False, False, ["c7c5", "g1f3"], 12)[-1] == "b|c7c5"


def _table(sd: float = 250.0) -> OpeningTable:
    return OpeningTable(
        name="t",
        scale="lichess",
        plies=4,
        m=5.0,
        sd=sd,
        estimates={"w|": 1500.0, "b|": 1480.0, "w|e2e4": 1600.0, "w|e2e4 e7e5 g1f3": 1700.0},
    )


def test_the_prior_is_the_longest_prefix_the_table_holds() -> None:
    t = _table()
    assert t.prior(True, True, []) == OpeningPrior(1500.0, 250.0, 0)
    assert t.prior(True, True, ["e2e4", "c7c5", "g1f3"]) == OpeningPrior(1600.0, 250.0, 1)
    assert t.prior(True, True, ["e2e4", "e7e5", "g1f3", "b8c6"]).rating == 1700.0
    assert t.prior(False, True, ["e2e4", "e7e5", "g1f3", "b8c6"]).rating == 1480.0
    with pytest.raises(ValueError, match="root"):
        OpeningTable("bad", "lichess", 4, 5.0, 250.0, {"w|": 1500.0})


def _fitted() -> PerceivedModel:
    return fit_model(_synthetic(3000, seed=11), "synthetic", seed=0)


def test_the_point_combines_the_prior_with_the_moves_and_keeps_the_interval() -> None:
    model = _fitted()
    c = 30 * model.centi_score(CLASSES.of(31, 0, -20))
    plain = model.estimate(30, c)
    ev = model.evidence(30, c)
    assert ev is not None
    assert model.pop_mean is not None
    up = model.pop_mean + 400.0
    down = model.pop_mean - 400.0
    high = model.estimate(30, c, OpeningPrior(up, 200.0, 6))
    low = model.estimate(30, c, OpeningPrior(down, 200.0, 6))
    # the line's point moved from the population's centre toward the
    # opening's, by the prior's share of the precision, inside the same belt
    w = (1 / 200.0**2) / (1 / 200.0**2 + 1 / ev.var)
    assert 0.0 < w < 1.0
    assert high.rating == pytest.approx(min(plain.high, plain.rating + 400.0 * w))
    assert low.rating == pytest.approx(max(plain.low, plain.rating - 400.0 * w))
    assert (high.low, high.high) == (plain.low, plain.high) == (low.low, low.high)
    # a vague prior, or an opening at the population's centre, leaves the line
    vague = model.estimate(30, c, OpeningPrior(up, 1e6, 0))
    assert vague.rating == pytest.approx(plain.rating, abs=0.01)
    centre = model.estimate(30, c, OpeningPrior(model.pop_mean, 150.0, 3))
    assert centre.rating == pytest.approx(plain.rating)


def test_an_informative_opening_brings_held_out_estimates_closer() -> None:
    """Players whose opening tells their group (two populations 600 points
    apart), four moves into their games: with the opening's prior the
    estimates of held-out players are closer to their ratings than the moves
    alone say, and the intervals hold them as often."""
    model = _fitted()
    rng = np.random.default_rng(5)
    errors_plain, errors_opening, covered = [], [], []
    for row in _synthetic(1500, seed=12):
        group = 1 if row.rating > 1500 else 0
        # the opening says the group 90 % of the time (the groups' means
        # are 1500 +/- 240 for ratings N(1500, 300))
        said = group if rng.random() < 0.9 else 1 - group
        prior = OpeningPrior(1740.0 if said else 1260.0, 250.0, 4)
        moves = row.classes[:4]  # early in a game, where the moves say little yet
        c = sum(model.centi_score(k) for k in moves)
        plain = model.estimate(len(moves), c)
        with_opening = model.estimate(len(moves), c, prior)
        errors_plain.append(abs(plain.rating - row.rating))
        errors_opening.append(abs(with_opening.rating - row.rating))
        covered.append(with_opening.low <= row.rating <= with_opening.high)
    assert np.mean(errors_opening) < 0.95 * np.mean(errors_plain)
    assert 0.93 <= np.mean(covered) <= 0.98


def _model_with_opening() -> PerceivedModel:
    from dataclasses import replace

    return replace(_fitted(), opening=_table())


def test_the_ledger_reads_the_opening_of_the_moves_pushed_and_rolls_back() -> None:
    model = _model_with_opening()
    assert model.opening is not None
    moves = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]
    scores = [20, 30, 25, 35, 30, 40]
    led = GameLedger(2900.0, model=model, opening_moves=())
    led.set_start(20)
    for move, score in zip(moves, scores, strict=True):
        step = led.push(score, move=move)
    white = led.calibrated("white")
    assert white is not None and step.calibrated is not None
    profile_sum = led._sides["white"].profile.centi_sum  # type: ignore[union-attr]
    expected = model.estimate(3, profile_sum, model.opening.prior(True, True, moves))
    assert white == expected
    assert white != model.estimate(3, profile_sum)
    # rollback: the same state as a ledger that never saw the last three plies
    fresh = GameLedger(2900.0, model=model, opening_moves=())
    fresh.set_start(20)
    for move, score in zip(moves[:3], scores[:3], strict=True):
        fresh.push(score, move=move)
    led.truncate(3)
    assert led == fresh
    assert led.calibrated("white") == fresh.calibrated("white")
    # an unknown move ends the opening: the prefix before it is read
    gap = GameLedger(2900.0, model=model, opening_moves=())
    gap.set_start(20)
    gap.push(20, move="e2e4")
    gap.push(30, move=None)
    gap.push(25, move="g1f3")
    assert gap.calibrated("white") == model.estimate(
        2,
        gap._sides["white"].profile.centi_sum,  # type: ignore[union-attr]
        OpeningPrior(1600.0, 250.0, 1),
    )


def test_no_opening_without_the_standard_start() -> None:
    model = _model_with_opening()
    led = GameLedger(2900.0, model=model)  # a game from another position
    led.set_start(20)
    led.push(20, move="e2e4")
    sum_ = led._sides["white"].profile.centi_sum  # type: ignore[union-attr]
    assert led.calibrated("white") == model.estimate(1, sum_)


def test_a_ledger_starting_after_the_first_ply_reads_the_moves_before_it() -> None:
    """A game whose first ply has no evaluation starts its ledger at ply 2
    (as lichess's exports do): the opening still starts with the first ply."""
    model = _model_with_opening()
    late = GameLedger(
        2900.0,
        first_mover_is_white=False,
        model=model,
        first_ply=2,
        opening_moves=["e2e4"],
    )
    late.set_start(20)
    late.push(20, move="e7e5")
    late.push(25, move="g1f3")
    white = late._sides["white"].profile.centi_sum  # type: ignore[union-attr]
    assert late.calibrated("white") == model.estimate(1, white, OpeningPrior(1700.0, 250.0, 3))
    with pytest.raises(ValueError, match="1 opening moves for a ledger starting at ply 3"):
        GameLedger(2900.0, model=model, first_ply=3, opening_moves=["e2e4"])
