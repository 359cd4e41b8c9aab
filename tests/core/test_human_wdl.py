"""The human win/draw/loss model: the ratings-only layer before any move, the
live layer's shape, and the fit's vectorised likelihood equal to the model."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from livegain.batch.wdl_fit import DEFAULT_KNOT_PLIES, ScoredGame, _predict, _rows
from livegain.core.evaluation import Evaluation, draw_evaluation
from livegain.core.human_wdl import (
    CLASSICAL_OTB,
    IDENTITY_KNOT,
    ONLINE_RAPID,
    HumanWdlModel,
    Knot,
    RatingsPrior,
    kind_of_time_control,
)

PRIOR = RatingsPrior(CLASSICAL_OTB, 32.0, 431.0, -0.58, 0.65, -1.92, 0.39)


def model(b: float = 4.0, m: float = -0.1) -> HumanWdlModel:
    knots = (
        IDENTITY_KNOT,
        Knot(10, 0.9, b * 0.5, 0.3, 0.9, 0.1, -0.3, 0.0, m),
        Knot(40, 0.8, b, 0.6, 0.8, 0.4, -0.4, -0.1, m),
        Knot(100, 0.6, b * 1.2, 0.8, 0.5, 1.2, -0.4, -0.2, m),
    )
    return HumanWdlModel("test", "Stockfish 15.1 depth 10", PRIOR, knots, knots)


def test_prior_is_the_elo_expectation_with_a_draw_model() -> None:
    w, d, lo = PRIOR.probabilities(2700, 2700)
    assert w + d + lo == pytest.approx(1.0)
    assert w + d / 2 == pytest.approx(1 / (1 + 10 ** (-32 / 431)))
    # a stronger White scores more, and draws are rarer with a gap
    w2, d2, _ = PRIOR.probabilities(2800, 2600)
    assert w2 > w and d2 < d
    # elite games are drawn more often than games at 2100
    assert PRIOR.probabilities(2750, 2750)[1] > PRIOR.probabilities(2100, 2100)[1]
    # unknown ratings: White's advantage and the kind's draw rate
    assert PRIOR.probabilities(None, 2500)[1] == pytest.approx(0.39)
    assert sum(PRIOR.wdl(2700, 2650)) == 1000


def test_before_any_move_the_model_is_the_ratings_only_model() -> None:
    mdl = model()
    for white, black in ((2750, 2700), (2100, 2400), (None, None)):
        ev = Evaluation(cp=250)  # the start position's evaluation does not count
        assert mdl.wdl(ev, 0, white, black) == PRIOR.wdl(white, black)
        assert mdl.probabilities(2.5, 0, white, black) == pytest.approx(
            PRIOR.probabilities(white, black)
        )


def test_chances_become_decisive_as_the_evaluation_does() -> None:
    mdl = model()
    wins = [mdl.probabilities(x, 60, 2600, 2600)[0] for x in (-5, -1, 0, 1, 3, 6, 39)]
    assert wins == sorted(wins) and wins[-1] > 0.9 and wins[0] < 0.1
    w, d, lo = mdl.probabilities(0.0, 60, 2600, 2600)
    assert d > 0.3 and abs(w - lo) < 0.2
    # a mate counts as the clip; a checkmate on the board is certain
    assert mdl.wdl(Evaluation(cp=3900, mate=3), 61, 2600, 2600) == mdl.wdl(
        Evaluation(cp=3900), 61, 2600, 2600
    )
    mated = Evaluation(cp=-3900, wdl=(0, 0, 1000), rule="checkmate")
    assert mdl.wdl(mated, 61, 2600, 2600) == (0, 0, 1000)
    assert mdl.wdl(draw_evaluation("stalemate"), 80, 2600, 2600) == (0, 1000, 0)


def test_coefficients_interpolate_between_knots_and_hold_after_the_last() -> None:
    mdl = model()
    a10, a40 = mdl.knots[1].a, mdl.knots[2].a
    assert mdl.coefficients(25, True)[0] == pytest.approx((a10 + a40) / 2)
    assert mdl.coefficients(400, True) == mdl.coefficients(100, True)
    with pytest.raises(ValueError, match="ply 0 as identity"):
        HumanWdlModel("bad", "x", PRIOR, (Knot(0, 1, 1, 0, 1, 0, 0, 0, 0),), (IDENTITY_KNOT,))


def test_the_fits_vectorised_likelihood_is_the_model() -> None:
    """The fit maximises the likelihood of exactly the model shipped: its
    vectorised probabilities equal HumanWdlModel.probabilities row by row."""
    rng = random.Random(7)
    games = [
        ScoredGame(
            float(rng.randint(2000, 2800)),
            float(rng.randint(2000, 2800)),
            rng.choice((0.0, 0.5, 1.0)),
            [rng.gauss(0, 3) for _ in range(rng.randint(30, 180))],
            rng.random() < 0.9,
        )
        for _ in range(20)
    ]
    plies = DEFAULT_KNOT_PLIES
    knots = [IDENTITY_KNOT] + [Knot(p, *(rng.uniform(-1, 1) for _ in range(8))) for p in plies[1:]]
    mdl = HumanWdlModel("r", "x", PRIOR, tuple(knots), tuple(knots))
    for rated in (True, False):
        rows = _rows(games, PRIOR, plies, rated, 1)
        c = np.array([[getattr(k, f) for f in "abcefghm"] for k in knots])
        pw, pl, _eta = _predict(c, rows)
        k = 0
        for g in games:
            for ply in range(1, min(len(g.pawns) - 1, 200) + 1):
                to_move = (ply % 2 == 0) == g.first_mover_is_white
                white, black = (g.white, g.black) if rated else (None, None)
                w, _d, lo = mdl.probabilities(g.pawns[ply], ply, white, black, to_move)
                assert pw[k] == pytest.approx(w, abs=1e-9)
                assert pl[k] == pytest.approx(lo, abs=1e-9)
                k += 1
        assert k == len(pw)


@pytest.mark.parametrize(
    ("tag", "kind", "exact"),
    [
        ("5400+30", CLASSICAL_OTB, True),
        ("40/7200:1800+30", CLASSICAL_OTB, True),
        ("600+5", ONLINE_RAPID, True),
        ("180+2", ONLINE_RAPID, False),
        ("-", None, False),
        ("garbled", None, False),
    ],
)
def test_kind_of_time_control(tag: str, kind: str | None, exact: bool) -> None:
    assert kind_of_time_control(tag) == (kind, exact)


def test_per_mille_values_always_sum_to_1000() -> None:
    """Per-mille values always sum to 1000 and stay within [0, 1000]."""
    mdl = model()
    for cp in range(-3900, 3901, 97):
        for ply in (1, 7, 33, 90, 300):
            w, d, lo = mdl.wdl(Evaluation(cp=cp), ply, 2500, 2400)
            assert w + d + lo == 1000 and min(w, d, lo) >= 0
    assert not math.isnan(mdl.probabilities(float("inf"), 30, None, None)[0])


def test_shipped_models_are_found_by_source_and_kind() -> None:
    from livegain.models.wdl import find_wdl_model

    d10, why = find_wdl_model("engine", CLASSICAL_OTB, "Stockfish 15.1", "depth 10")
    assert d10 is not None and d10.kind == CLASSICAL_OTB and why == f"model {d10.name}"
    assert d10.provenance["command"].startswith("livegain fit ")
    # a level game between 2700s is often drawn; +6 at ply 60 is nearly won
    _w, d, _l = d10.probabilities(0.0, 60, 2700, 2700)
    assert d > 0.5
    assert d10.probabilities(6.0, 60, 2700, 2700)[0] > 0.9
    d12, why = find_wdl_model("engine", CLASSICAL_OTB, "Stockfish 15.1", "depth 12")
    assert d12 == d10 and "depth 12" in why
