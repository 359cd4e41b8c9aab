"""Small hand-made models for tests of what people are shown: a perceived-rating
model on the FIDE scale with forward curves (``form``, belts, labels) and a
human win/draw/loss model (ratings-only prior and live knots)."""

from __future__ import annotations

import dataclasses

from toy_models import toy_model

from livegain.core.human_wdl import IDENTITY_KNOT, HumanWdlModel, Knot, RatingsPrior
from livegain.core.perceived import ForwardBin, PerceivedModel

BELOW = "not validated on FIDE games"


def forward_model(name: str = "toy-fide") -> PerceivedModel:
    """:func:`toy_model` with forward curves on the FIDE scale, validated on
    ratings 2000 to 2800 (a rating below is labelled :data:`BELOW`)."""
    forward = (
        ForwardBin(1, 2300.0, 0.3, 0.0, 2000.0, 1000.0, 2800.0, 260.0, 0.0, -1.96, 1.96),
        ForwardBin(5, 2300.0, 0.5, 0.0, 2000.0, 1000.0, 2800.0, 160.0, 0.0, -1.96, 1.96),
        ForwardBin(10, 2300.0, 0.7, 0.0, 2000.0, 1000.0, 2800.0, 110.0, 0.0, -1.96, 1.96),
    )
    return dataclasses.replace(
        toy_model(name),
        forward=forward,
        scale="fide",
        pop_mean=2300.0,
        pop_sd=250.0,
        below_label=BELOW,
        rating_low=2000.0,
        rating_high=2800.0,
    )


def toy_prior(kind: str = "classical-otb") -> RatingsPrior:
    """A ratings-only model: 35 points of White advantage, draws likelier
    between strong and equal players."""
    return RatingsPrior(
        kind=kind,
        white_advantage=35.0,
        scale=400.0,
        draw_intercept=-0.2,
        draw_level=0.6,
        draw_gap=-0.8,
        draw_rate=0.45,
    )


def toy_wdl_model(kind: str = "classical-otb", name: str = "toy-human") -> HumanWdlModel:
    """A live human W/D/L model that grows decisive with the evaluation and the ply."""
    knots = (
        IDENTITY_KNOT,
        Knot(40, 0.8, 1.5, 1.0, 0.9, 0.0, 1.0, 0.5, 0.1),
        Knot(100, 0.5, 3.0, 2.0, 0.8, 0.0, 2.0, 1.0, 0.1),
    )
    return HumanWdlModel(
        name=name,
        evals="Stockfish 15.1 depth 8",
        prior=toy_prior(kind),
        knots=knots,
        unrated_knots=knots,
    )
