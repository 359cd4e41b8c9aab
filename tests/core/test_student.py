"""Student's t quantiles (livegain.core.student) against SciPy's, and the
pairing graph's components (livegain.core.tournament) against SciPy's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import stdtrit

from livegain.core.elo import diff_from_expected_normal
from livegain.core.student import t_quantile
from livegain.core.tournament import pairing_components

LEVELS = (0.5, 0.55, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.001, 0.025, 0.1)


@pytest.mark.parametrize("nu", [*range(1, 61), 99, 100, 101, 500, 1001, 5000, 20000])
def test_t_quantile_equals_scipy(nu: int) -> None:
    for p in LEVELS:
        ours, theirs = t_quantile(nu, p), float(stdtrit(nu, p))
        assert ours == pytest.approx(theirs, rel=1e-11, abs=1e-13), (nu, p)


def test_t_quantile_refuses_what_it_cannot_answer() -> None:
    for nu, p in ((0, 0.9), (-1, 0.9), (1.5, 0.9), (3, 0.0), (3, 1.0), (3, 1.5)):
        with pytest.raises(ValueError):
            t_quantile(nu, p)  # type: ignore[arg-type]


def test_normal_elo_inverse_equals_erfinv() -> None:
    from scipy.special import erfinv

    for x in (0.001, 0.01, 0.2, 0.5, 0.64, 0.9, 0.999):
        assert diff_from_expected_normal(x) == pytest.approx(
            400.0 * float(erfinv(2 * x - 1)), rel=1e-12, abs=1e-9
        )
    # Far in the tail ``2x - 1`` rounds before erfinv sees it; the normal
    # quantile of x itself does not, so the two differ there by ~1e-9.
    assert diff_from_expected_normal(1e-9) == pytest.approx(
        400.0 * float(erfinv(2e-9 - 1)), rel=1e-8
    )


def scipy_components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    graph = coo_matrix((np.ones(len(u)), (u, v)), shape=(n, n))
    _, raw = connected_components(graph, directed=False)
    first = {}
    for i, c in enumerate(raw.tolist()):
        first.setdefault(c, i)
    rank = {c: k for k, c in enumerate(sorted(first, key=first.__getitem__))}
    return np.array([rank[c] for c in raw.tolist()], dtype=np.int64)


@pytest.mark.parametrize("seed", range(40))
def test_components_equal_scipy_on_random_pairings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    m = int(rng.integers(0, 2 * n))
    u = rng.integers(0, n, m)
    v = rng.integers(0, n, m)
    # long chains too (an online pool's players each met a few others)
    if seed % 4 == 0:
        perm = rng.permutation(n)
        u = np.concatenate([u, perm[:-1]])
        v = np.concatenate([v, perm[1:]])
    assert pairing_components(n, u, v).tolist() == scipy_components(n, u, v).tolist()


def test_components_of_no_player_and_of_isolated_players() -> None:
    assert pairing_components(0, [], []).tolist() == []
    assert pairing_components(4, [2], [1]).tolist() == [0, 1, 1, 2]
