"""GameLedger: incremental gains, traces and exact rollback."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livegain.core.evaluation import gains as gains_of
from livegain.core.histogram import GainHistogram
from livegain.core.ledger import GameLedger
from livegain.core.rating import perceived_rating

scores_st = st.lists(st.integers(min_value=-4500, max_value=4500), min_size=1, max_size=50)


def fed(
    scores: list[int], engine: GainHistogram | None = None, white_first: bool = True
) -> GameLedger:
    ledger = GameLedger(2860, engine=engine, first_mover_is_white=white_first)
    ledger.set_start(scores[0])
    for s in scores[1:]:
        ledger.push(s)
    return ledger


def test_push_computes_gain_and_mover() -> None:
    ledger = GameLedger(2860)
    with pytest.raises(ValueError, match="start"):
        ledger.push(10)
    ledger.set_start(13)
    p1 = ledger.push(12)
    assert (p1.ply, p1.mover, p1.gain) == (1, "white", -1)
    p2 = ledger.push(23)
    assert (p2.ply, p2.mover, p2.gain) == (2, "black", -11)
    assert ledger.white.counts() == {-1: 1} and ledger.black.counts() == {-11: 1}
    assert p1.perceived.bounded and p1.perceived.difference == -800
    assert [t.ply for t in ledger.white_trace] == [1]
    assert [t.ply for t in ledger.black_trace] == [2]
    with pytest.raises(ValueError, match="set_start"):
        ledger.set_start(0)


def test_scores_are_clipped() -> None:
    ledger = GameLedger(2860)
    ledger.set_start(0)
    assert ledger.push(10_000).gain == 3900


def test_black_first() -> None:
    ledger = fed([0, 10, 30], white_first=False)
    assert ledger.gains == [-10, 20]
    assert ledger.black.counts() == {-10: 1}
    assert ledger.perceived(False).moves == 1
    assert ledger.perceived("black") == ledger.black_trace[-1].perceived


@settings(deadline=None)
@given(scores_st)
def test_matches_batch_computation(scores: list[int]) -> None:
    ledger = fed(scores)
    g = gains_of(scores)
    assert ledger.gains == g
    assert ledger.white == GainHistogram.from_gains(g[0::2])
    assert ledger.black == GainHistogram.from_gains(g[1::2])
    if ledger.white.n:
        batch = perceived_rating(ledger.white, 2860)
        live = ledger.perceived("white")
        assert live.rating == pytest.approx(batch.rating)
        assert live.expected == pytest.approx(batch.expected)
        # the interval is never narrower than with independent moves
        assert live.low <= batch.low + 1e-9 and live.high >= batch.high - 1e-9


@settings(deadline=None, max_examples=60)
@given(scores_st, st.data())
def test_truncate_is_exact_rollback(scores: list[int], data: st.DataObject) -> None:
    k = data.draw(st.integers(0, len(scores) - 1))
    engine = data.draw(
        st.one_of(
            st.none(), st.lists(st.integers(-50, 20), min_size=1).map(GainHistogram.from_gains)
        )
    )
    ledger = fed(scores, engine)
    ledger.truncate(k)
    fresh = fed(scores[: k + 1], engine)
    assert ledger == fresh
    assert ledger.white_trace == fresh.white_trace
    assert ledger.black_trace == fresh.black_trace
    assert ledger.perceived("white") == fresh.perceived("white")
    assert ledger.perceived("black") == fresh.perceived("black")
    # and re-pushing restores the longer game exactly
    for s in scores[k + 1 :]:
        ledger.push(s)
    assert ledger == fed(scores, engine)


def test_pop_returns_the_ply() -> None:
    ledger = fed([0, 5, 5, -20])
    last = ledger.pop()
    assert (last.ply, last.mover, last.gain, last.score_after) == (3, "white", -25, -20)
    assert ledger.plies == 2
    with pytest.raises(ValueError):
        ledger.truncate(5)
    ledger.truncate(0)
    with pytest.raises(ValueError):
        ledger.pop()
    assert ledger.scores == [0]


def test_general_engine_histogram() -> None:
    engine = GainHistogram.from_gains([0, 0, 0, -10])
    ledger = fed([0, 0, -5, -5, -30], engine=engine)
    assert ledger.perceived("white").expected == pytest.approx(
        ledger.white.expected_score_vs_engine(engine)
    )
    assert ledger.perceived("black").expected == pytest.approx(
        ledger.black.expected_score_vs_engine(engine)
    )


def test_head_to_head_is_white_over_black() -> None:
    ledger = fed([0, 0, -50, -50, -50])
    h = ledger.head_to_head()
    assert h.expected == pytest.approx(ledger.white.expected_score(ledger.black))
