"""Back-test of the tournament-win odds on the Tata Steel Masters 2022 (14-player round robin)."""

from __future__ import annotations

import math
from pathlib import Path

from livegain.batch.backtest import backtest_win_odds, read_event
from livegain.core.standings import Result, Standings


def test_tata_steel_2022_rating_odds_beat_the_naive_forecasts(tata_steel: Path) -> None:
    event = read_event(tata_steel)
    assert len(event.games) == 91
    assert len(event.names) == 14
    assert sorted({g.round for g in event.games}) == list(range(1, 14))
    bt = backtest_win_odds(event.games, sims=20_000, seed=0)
    # the winner comes from the results: clear first on points
    final = Standings.from_results(
        [Result.game(g.white, g.black, g.result) for g in event.games], ()
    )
    assert final.leaders() == [bt.winner]
    assert event.names[bt.winner] == "Carlsen, Magnus"
    assert [r.after_round for r in bt.rounds] == list(range(13))
    assert [r.games_left for r in bt.rounds] == [91 - 7 * r for r in range(13)]
    assert bt.uniform_log_loss == math.log(14)
    assert bt.mean_log_loss < bt.mean_contenders_log_loss < bt.uniform_log_loss
    # every forecast is better than the uniform one, each with a real error bar
    for r in bt.rounds:
        assert r.log_loss < bt.uniform_log_loss
        assert 0.0 < r.p_winner <= 1.0
        assert r.stderr < 0.01


def test_mid_round_odds_use_the_live_games(tata_steel: Path) -> None:
    """In the middle of each round, games in progress drawn from a W/D/L that
    points at their real result forecast the winner better than the same games
    drawn from ratings; a game with no live W/D/L counts as finished."""
    from livegain.batch.backtest import backtest_mid_round

    event = read_event(tata_steel)
    toward = {
        "1-0": (800.0, 150.0, 50.0),
        "0-1": (50.0, 150.0, 800.0),
        "1/2-1/2": (50.0, 900.0, 50.0),
    }
    live: dict[int, tuple[float, float, float] | None] = {
        i: (None if i % 7 == 0 else toward[g.result]) for i, g in enumerate(event.games)
    }
    winner, rows = backtest_mid_round(event.games, live, sims=20_000, seed=0)
    assert event.names[winner] == "Carlsen, Magnus"
    assert [r.round for r in rows] == list(range(1, 14))
    assert sum(r.in_progress + r.finished_in_round for r in rows) == 91
    assert all(r.finished_in_round >= 1 for r in rows)  # index 0, 7, 14, ... of each round
    mean_live = sum(r.log_loss_live for r in rows) / len(rows)
    mean_rating = sum(r.log_loss_rating for r in rows) / len(rows)
    assert mean_live < mean_rating
    # no live W/D/L at all: the two forecasts are the same simulation
    _, same = backtest_mid_round(event.games, {}, sims=5_000, seed=1)
    assert all(r.in_progress == 0 and r.p_live == r.p_rating for r in same)


def test_a_ratings_only_prior_draws_the_games_not_started(tata_steel: Path) -> None:
    """With a prior (the human model's ratings-only layer), games not started
    and play-offs come from it: a prior with no White advantage, Elo's 400
    spread and a constant draw rate of 1/2 is seed 000's model at draw rate
    0.5 (the same forecasts, to the Monte Carlo error), and one that draws
    more leaves the leader's lead safer, as a higher draw rate does."""
    from livegain.core.human_wdl import RatingsPrior

    event = read_event(tata_steel)
    same = RatingsPrior("classical-otb", 0.0, 400.0, 0.0, 0.0, 0.0, 0.5)
    base = backtest_win_odds(event.games, sims=20_000, seed=0)
    with_prior = backtest_win_odds(event.games, sims=20_000, seed=0, prior=same)
    for a, b in zip(base.rounds, with_prior.rounds, strict=True):
        assert abs(a.p_winner - b.p_winner) < 4 * max(a.stderr, 0.002)
    drawish = RatingsPrior("classical-otb", 0.0, 400.0, math.log(0.7 / 0.3), 0.0, 0.0, 0.7)
    more = backtest_win_odds(event.games, sims=20_000, seed=0, prior=drawish)
    assert more.rounds[0].p_winner > base.rounds[0].p_winner + 0.05
    assert more.mean_log_loss < base.mean_log_loss
