"""Synthetic rated players with a known truth, for the perceived model's tests."""

from __future__ import annotations

import numpy as np

from livegain.batch.validity import PlayerMoves
from livegain.core.perceived import MoveClasses

CLASSES = MoveClasses()


def synthetic(count: int, seed: int) -> list[PlayerMoves]:
    """Players rated N(1500, 300); each move loses Exp(mean) centipawns with a
    mean that halves every 350 points of rating, from balanced positions."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        rating = float(rng.normal(1500.0, 300.0))
        n = int(rng.integers(15, 60))
        mean_loss = 60.0 * 2.0 ** (-(rating - 1500.0) / 350.0)
        losses = rng.exponential(mean_loss, n).astype(int)
        evals = rng.integers(-150, 150, n)
        classes = [
            CLASSES.of(2 * k + 1, int(e), int(e - loss))
            for k, (e, loss) in enumerate(zip(evals, losses, strict=True))
        ]
        rows.append(PlayerMoves(rating, classes, i, "white", group=i * 10))
    return rows
