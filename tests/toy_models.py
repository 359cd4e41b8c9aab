"""A small hand-made calibrated perceived-rating model for core and publish tests."""

from __future__ import annotations

from livegain.core.perceived import MoveBin, MoveClasses, PerceivedModel


def toy_model(name: str = "toy") -> PerceivedModel:
    """A small calibrated perceived-rating model: a move scores lower the more it loses."""
    classes = MoveClasses()
    bands = len(classes.loss_edges) + 1
    scores = tuple(
        2700.0 - 150.0 * (c % bands) + 3.0 * (c // bands % 7) for c in range(classes.count)
    )
    bins = (
        MoveBin(1, 1500.0, 0.25, -700.0, 650.0),
        MoveBin(5, 400.0, 0.8, -450.0, 420.0),
        MoveBin(10, 0.0, 1.0, -320.0, 300.0),
    )
    return PerceivedModel(
        name, classes, scores, bins, prior=2000.0, prior_low=1400.0, prior_high=2600.0
    )
