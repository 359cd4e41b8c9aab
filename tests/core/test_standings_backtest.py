"""Back-test of the tournament-win odds on the Tata Steel Masters 2022 (14-player round robin)."""

from __future__ import annotations

import math
from pathlib import Path

from livegain.backtest import backtest_win_odds, read_event
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
