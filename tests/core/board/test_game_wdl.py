"""Win/draw/loss shown for a position: engine WDL, or the win-chance model."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livegain.core.evaluation import Evaluation
from livegain.core.wdl import position_wdl, wdl_from_cp, wdl_from_expected, win_percent


def test_win_chance_curve() -> None:
    assert win_percent(0) == 50.0
    # 50 + 50 (2 / (1 + e^-0.368208) - 1) = 59.10...
    assert win_percent(100) == pytest.approx(59.10, abs=0.01)
    assert win_percent(-100) == pytest.approx(100 - 59.10, abs=0.01)
    assert (
        win_percent(3900)
        == win_percent(1000)
        == pytest.approx(50 + 50 * (2 / (1 + math.exp(-3.68208)) - 1))
    )


def test_level_position_split() -> None:
    assert wdl_from_cp(0) == (250, 500, 250)
    assert wdl_from_cp(0, draw_share=0.0) == (500, 0, 500)
    assert wdl_from_expected(1.0) == (1000, 0, 0)
    with pytest.raises(ValueError, match="draw_share"):
        wdl_from_expected(0.5, draw_share=1.5)


@given(st.integers(-5000, 5000), st.floats(0.0, 1.0))
def test_wdl_is_a_distribution_with_the_curve_expected_score(cp: int, share: float) -> None:
    w, d, lo = wdl_from_cp(cp, share)
    assert min(w, d, lo) >= 0 and w + d + lo == 1000
    assert (w + d / 2) / 1000 == pytest.approx(win_percent(cp) / 100, abs=0.0011)
    assert wdl_from_cp(-cp, share) == (lo, d, w)


@given(st.integers(-1000, 999))
def test_win_grows_with_the_score(cp: int) -> None:
    assert wdl_from_cp(cp + 1)[0] >= wdl_from_cp(cp)[0]
    assert wdl_from_cp(cp + 1)[2] <= wdl_from_cp(cp)[2]


def test_position_wdl_prefers_the_engine() -> None:
    assert position_wdl(Evaluation(cp=30, wdl=(100, 850, 50))) == (100, 850, 50)
    assert sum(position_wdl(Evaluation(cp=30, wdl=(101, 850, 50)))) == 1000
    assert position_wdl(Evaluation(cp=3900, mate=3)) == (1000, 0, 0)
    assert position_wdl(Evaluation(cp=-3900, mate=-1)) == (0, 0, 1000)
    assert position_wdl(Evaluation(cp=120)) == wdl_from_cp(120)
